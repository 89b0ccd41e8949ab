#include "faultline/retry/execute.hpp"

#include <atomic>

namespace faultline::retry {

random_source& default_random() {
    static std::atomic<std::uint64_t> threads{0};
    thread_local seeded_random random{mix64(default_seed, threads.fetch_add(1, std::memory_order_relaxed))};
    return random;
}

}  // namespace faultline::retry
