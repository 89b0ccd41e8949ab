#include "faultline/retry/budget.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace faultline::retry {

namespace {

std::int64_t to_milli(double v) { return static_cast<std::int64_t>(std::llround(v * 1000.0)); }

}  // namespace

token_bucket_budget::token_bucket_budget(double max_tokens, double token_ratio)
    : max_{to_milli(max_tokens)}, ratio_{to_milli(token_ratio)}, tokens_{to_milli(max_tokens)} {
    // gRFC A6 bounds: max_tokens in (0, 1000], token_ratio > 0 (three decimals are kept).
    if (!(max_tokens > 0.0 && max_tokens <= 1000.0)) throw std::invalid_argument{"max_tokens must be in (0, 1000]"};
    if (ratio_ <= 0) throw std::invalid_argument{"token_ratio must be at least 0.001"};
}

void token_bucket_budget::on_request(time_point) {}

void token_bucket_budget::on_success() {
    // Refill by token_ratio, never above max_tokens.
    std::int64_t current = tokens_.load(std::memory_order_relaxed);
    while (!tokens_.compare_exchange_weak(current, std::min(max_, current + ratio_), std::memory_order_relaxed)) {
    }
}

void token_bucket_budget::on_failure() {
    // Each retryable failure costs a whole token, never below zero.
    std::int64_t current = tokens_.load(std::memory_order_relaxed);
    while (!tokens_.compare_exchange_weak(current, std::max<std::int64_t>(0, current - 1000),
                                          std::memory_order_relaxed)) {
    }
}

bool token_bucket_budget::withdraw(time_point) {
    // Retries are allowed only while the bucket is above half full (tokens > max / 2, exactly, in
    // milli-tokens); the failure that led here has already paid, so nothing is taken.
    return tokens_.load(std::memory_order_relaxed) * 2 > max_;
}

ratio_budget::ratio_budget(ratio_budget_options options)
    : options_{options},
      slice_length_{std::max<duration>(options.ttl / static_cast<duration::rep>(slices), duration{1})},
      percent_milli_{to_milli(options.percent_can_retry)},
      reserve_milli_{to_milli(options.min_retries_per_sec * std::chrono::duration<double>(options.ttl).count())} {
    if (options.ttl <= duration{0}) throw std::invalid_argument{"ttl must be positive"};
    if (percent_milli_ < 0) throw std::invalid_argument{"percent_can_retry must not be negative"};
    if (reserve_milli_ < 0) throw std::invalid_argument{"min_retries_per_sec must not be negative"};
}

ratio_budget::slice& ratio_budget::advance(time_point now) {
    if (!started_) {
        started_ = true;
        epoch_ = now;
    }
    // A time point older than the newest slice (another thread's clock read lost the race) is
    // booked in the newest slice: the window never moves backwards.
    const std::int64_t index = now > epoch_ ? (now - epoch_) / slice_length_ : 0;
    current_ = std::max(current_, index);
    slice& s = ring_[static_cast<std::size_t>(current_) % slices];
    if (s.index != current_) s = slice{current_, 0, 0};
    return s;
}

std::uint64_t ratio_budget::sum_deposits() const {
    std::uint64_t sum = 0;
    for (const slice& s : ring_)
        if (s.index > current_ - static_cast<std::int64_t>(slices)) sum += s.deposits;
    return sum;
}

std::uint64_t ratio_budget::sum_withdrawals() const {
    std::uint64_t sum = 0;
    for (const slice& s : ring_)
        if (s.index > current_ - static_cast<std::int64_t>(slices)) sum += s.withdrawals;
    return sum;
}

std::int64_t ratio_budget::allowance_milli() const {
    return static_cast<std::int64_t>(sum_deposits()) * percent_milli_ + reserve_milli_ -
           static_cast<std::int64_t>(sum_withdrawals()) * 1000;
}

void ratio_budget::on_request(time_point now) {
    const std::scoped_lock lock{mutex_};
    ++advance(now).deposits;
}

bool ratio_budget::withdraw(time_point now) {
    const std::scoped_lock lock{mutex_};
    slice& s = advance(now);
    if (allowance_milli() < 1000) return false;
    ++s.withdrawals;
    return true;
}

std::uint64_t ratio_budget::deposits(time_point now) {
    const std::scoped_lock lock{mutex_};
    advance(now);
    return sum_deposits();
}

std::uint64_t ratio_budget::withdrawals(time_point now) {
    const std::scoped_lock lock{mutex_};
    advance(now);
    return sum_withdrawals();
}

std::uint64_t ratio_budget::available(time_point now) {
    const std::scoped_lock lock{mutex_};
    advance(now);
    return static_cast<std::uint64_t>(std::max<std::int64_t>(0, allowance_milli() / 1000));
}

}  // namespace faultline::retry
