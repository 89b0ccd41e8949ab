// The simulator's random source: splitmix64 (a Weyl sequence through core's `mix64` finaliser).
// A trial draws four hop latencies per write; with mt19937_64 the engine's refills were a quarter of
// the run time, splitmix64 costs one add and the finaliser per word. Its output is fixed by our own
// code, so a seed replays on every platform just as mt19937_64's does. Not thread-safe: one per trial.
#pragma once

#include <cstdint>

#include "faultline/core/random.hpp"

namespace faultline::storm {

class fast_random final : public random_source {
public:
    explicit fast_random(std::uint64_t seed) : state_{seed} {}
    std::uint64_t next() override {
        // mix64 adds the Weyl increment itself before finalising: this is splitmix64's sequence.
        const std::uint64_t word = mix64(state_);
        state_ += 0x9e3779b97f4a7c15ULL;
        return word;
    }

private:
    std::uint64_t state_;
};

}  // namespace faultline::storm
