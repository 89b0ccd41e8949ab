#include "faultline/retry/circuit_breaker.hpp"

#include <algorithm>
#include <stdexcept>

namespace faultline::retry {

std::string_view to_string(breaker_state state) {
    switch (state) {
        case breaker_state::closed: return "closed";
        case breaker_state::open: return "open";
        case breaker_state::half_open: return "half_open";
    }
    return "unknown";
}

circuit_breaker::circuit_breaker(circuit_breaker_options options)
    : options_{options}, window_(std::max<std::uint32_t>(options.window_size, 1), false) {
    // Written so that NaN fails: a NaN ratio would never compare true, so the breaker never opened.
    if (!(options.failure_ratio >= 0.0 && options.failure_ratio <= 1.0))
        throw std::invalid_argument{"circuit breaker failure_ratio must be in [0, 1]"};
    options_.half_open_probes = std::max<std::uint32_t>(options_.half_open_probes, 1);
}

void circuit_breaker::refresh(time_point now) {
    if (state_ == breaker_state::open && now - opened_at_ >= options_.open_duration) {
        state_ = breaker_state::half_open;
        probes_in_flight_ = 0;
        probe_successes_ = 0;
        ++half_opened_;
    }
}

void circuit_breaker::open(time_point now) {
    state_ = breaker_state::open;
    opened_at_ = now;
    ++opened_;
    std::fill(window_.begin(), window_.end(), false);
    window_next_ = window_count_ = window_failures_ = 0;
}

bool circuit_breaker::try_acquire(time_point now) {
    const std::scoped_lock lock{mutex_};
    refresh(now);
    switch (state_) {
        case breaker_state::closed: return true;
        case breaker_state::open: break;
        case breaker_state::half_open:
            if (probes_in_flight_ < options_.half_open_probes) {
                ++probes_in_flight_;
                return true;
            }
            break;
    }
    ++rejected_;
    return false;
}

void circuit_breaker::record(time_point now, call_result result) {
    const std::scoped_lock lock{mutex_};
    refresh(now);
    if (state_ == breaker_state::half_open) {
        if (probes_in_flight_ > 0) --probes_in_flight_;
        if (result == call_result::failure) {
            open(now);
        } else if (result == call_result::success && ++probe_successes_ >= options_.half_open_probes) {
            state_ = breaker_state::closed;
            ++closed_;
        }
        return;
    }
    // A result arriving while open belongs to a call admitted before the breaker opened: the
    // decision has been made without it.
    if (state_ != breaker_state::closed || result == call_result::ignored) return;
    const bool failed = result == call_result::failure;
    const auto size = static_cast<std::uint32_t>(window_.size());
    if (window_count_ == size) {
        if (window_[window_next_]) --window_failures_;
    } else {
        ++window_count_;
    }
    window_[window_next_] = failed;
    if (failed) ++window_failures_;
    window_next_ = (window_next_ + 1) % size;
    if (window_count_ >= options_.minimum_calls &&
        static_cast<double>(window_failures_) >= options_.failure_ratio * static_cast<double>(window_count_)) {
        open(now);
    }
}

breaker_state circuit_breaker::state(time_point now) {
    const std::scoped_lock lock{mutex_};
    refresh(now);
    return state_;
}

std::uint64_t circuit_breaker::times_opened() const {
    const std::scoped_lock lock{mutex_};
    return opened_;
}

std::uint64_t circuit_breaker::times_half_opened() const {
    const std::scoped_lock lock{mutex_};
    return half_opened_;
}

std::uint64_t circuit_breaker::times_closed() const {
    const std::scoped_lock lock{mutex_};
    return closed_;
}

std::uint64_t circuit_breaker::rejected() const {
    const std::scoped_lock lock{mutex_};
    return rejected_;
}

}  // namespace faultline::retry
