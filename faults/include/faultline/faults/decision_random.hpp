// Seeded, order-independent randomness for fault decisions. A decision never draws from a shared
// stream: its key is a pure function of (seed, rule name, operation identity hash, attempt), so the
// same seed gives the same faults whatever the thread interleaving and whatever other operations
// are in flight.
#pragma once

#include <cstdint>
#include <string_view>

#include "faultline/core/random.hpp"

namespace faultline::faults {

// mix64(seed, hash(rule), operation_hash, attempt), folded in that order.
std::uint64_t decision_key(std::uint64_t seed, std::string_view rule, std::uint64_t operation_hash,
                           std::uint32_t attempt);

// Independent sub-keys of one decision key: the trigger's probability draw and the kind's stream
// must not share bits, or a rule with probability p would only ever see the low part of its range.
enum class decision_purpose : std::uint64_t { trigger = 1, kind = 2 };
constexpr std::uint64_t decision_subkey(std::uint64_t key, decision_purpose purpose) {
    return mix64(key, static_cast<std::uint64_t>(purpose));
}

// A splitmix64 stream started at a key: cheap to create per decision (one word of state, unlike
// mt19937_64). Not thread-safe; each decision makes its own.
class decision_random final : public random_source {
public:
    explicit decision_random(std::uint64_t key) : state_{key} {}
    std::uint64_t next() override;

private:
    std::uint64_t state_;
};

}  // namespace faultline::faults
