// A circuit breaker: stops sending to a dependency that keeps failing, then probes it. Closed: calls
// pass and results fill a window of the last `window_size` calls; once the window holds at least
// `minimum_calls` results and the failure share reaches `failure_ratio`, the breaker opens. Open:
// calls are refused until `open_duration` has passed, then the breaker is half-open. Half-open: at
// most `half_open_probes` calls are let through at a time; if every one of `half_open_probes` probes
// succeeds the breaker closes (with an empty window), and one failure reopens it. Time comes from the
// time points passed in (the injected clock), so tests run under a manual clock.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string_view>
#include <vector>

#include "faultline/core/clock.hpp"

namespace faultline::retry {

using faultline::duration;
using faultline::time_point;

enum class breaker_state { closed, open, half_open };

std::string_view to_string(breaker_state state);

struct circuit_breaker_options {
    std::uint32_t window_size{20};      // results remembered while closed (a count window)
    std::uint32_t minimum_calls{10};    // no opening before this many results are in the window
    double failure_ratio{0.5};          // open when failures / results >= this
    duration open_duration{std::chrono::seconds{5}};
    std::uint32_t half_open_probes{1};  // concurrent probes in half-open; this many successes close

    circuit_breaker_options& with_window_size(std::uint32_t n) { window_size = n; return *this; }
    circuit_breaker_options& with_minimum_calls(std::uint32_t n) { minimum_calls = n; return *this; }
    circuit_breaker_options& with_failure_ratio(double r) { failure_ratio = r; return *this; }
    circuit_breaker_options& with_open_duration(duration d) { open_duration = d; return *this; }
    circuit_breaker_options& with_half_open_probes(std::uint32_t n) { half_open_probes = n; return *this; }
};

// What an admitted call ended with, from the breaker's point of view: server and transport
// failures count against the dependency; client errors (4xx) count as successes (the dependency
// answered); `ignored` (cancelled, deadline passed) only releases a half-open probe slot.
enum class call_result { success, failure, ignored };

// Thread-safe (one mutex); shared by all operations towards one dependency through std::shared_ptr.
// The window buffer is allocated once, at construction.
class circuit_breaker {
public:
    // failure_ratio must be in [0, 1] (NaN fails), else std::invalid_argument.
    explicit circuit_breaker(circuit_breaker_options options = {});

    // May a call start now? In open state this turns half-open once open_duration has passed.
    // Every `true` must be followed by exactly one `record`.
    bool try_acquire(time_point now);
    void record(time_point now, call_result result);

    breaker_state state(time_point now);

    // Transition and refusal counters.
    std::uint64_t times_opened() const;
    std::uint64_t times_half_opened() const;
    std::uint64_t times_closed() const;
    std::uint64_t rejected() const;

    const circuit_breaker_options& options() const { return options_; }

private:
    void open(time_point now);  // caller holds mutex_
    void refresh(time_point now);

    circuit_breaker_options options_;
    mutable std::mutex mutex_;
    breaker_state state_ = breaker_state::closed;
    std::vector<bool> window_;  // ring of results, true = failure
    std::uint32_t window_next_ = 0;
    std::uint32_t window_count_ = 0;
    std::uint32_t window_failures_ = 0;
    time_point opened_at_{};
    std::uint32_t probes_in_flight_ = 0;
    std::uint32_t probe_successes_ = 0;
    std::uint64_t opened_ = 0;
    std::uint64_t half_opened_ = 0;
    std::uint64_t closed_ = 0;
    std::uint64_t rejected_ = 0;
};

}  // namespace faultline::retry
