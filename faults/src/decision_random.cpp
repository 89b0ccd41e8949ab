#include "faultline/faults/decision_random.hpp"

namespace faultline::faults {

std::uint64_t decision_key(std::uint64_t seed, std::string_view rule, std::uint64_t operation_hash,
                           std::uint32_t attempt) {
    std::uint64_t key = mix64(seed, hash_bytes(rule));
    key = mix64(key, operation_hash);
    return mix64(key, attempt);
}

std::uint64_t decision_random::next() {
    // splitmix64: advance by the golden-ratio increment, then finalise (mix64 adds the increment).
    const std::uint64_t out = mix64(state_);
    state_ += 0x9e3779b97f4a7c15ULL;
    return out;
}

}  // namespace faultline::faults
