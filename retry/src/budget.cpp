#include "faultline/retry/budget.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <stdexcept>

namespace faultline::retry {

namespace {

// v (finite, in [0, 10^12]) in thousandths, further digits dropped — gRFC A6 tokens "support up to
// 3 decimal places" and gRPC C-core drops the rest; for the ratio budget, dropping them means never
// allowing more than the rule. Read from the shortest decimal that round-trips to v, i.e. what was
// written: 1.001 is 1001, although the double is 1.000999… and v * 1000 truncates to 1000.
std::int64_t truncated_milli(double v) {
    if (v < 0.001) return 0;  // and the fixed notation below stays short
    std::array<char, 64> buf{};
    const auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), v, std::chars_format::fixed);
    if (ec != std::errc{}) throw std::invalid_argument{"value out of range"};
    std::int64_t milli = 0;
    int decimals = -1;  // digits seen after the point; -1 before it
    for (const char* p = buf.data(); p != end && decimals < 3; ++p) {
        if (*p == '.') {
            decimals = 0;
            continue;
        }
        milli = milli * 10 + (*p - '0');
        if (decimals >= 0) ++decimals;
    }
    for (int d = std::max(decimals, 0); d < 3; ++d) milli *= 10;
    return milli;
}

}  // namespace

token_bucket_budget::token_bucket_budget(double max_tokens, double token_ratio) : max_{0}, ratio_{0}, tokens_{0} {
    // gRFC A6: both must be greater than zero (after keeping three decimals); max_tokens at most
    // 1000, as gRPC's implementations bound it. Written so that NaN fails the comparisons.
    if (!(max_tokens >= 0.0 && max_tokens <= 1000.0)) throw std::invalid_argument{"max_tokens must be in (0, 1000]"};
    if (!(token_ratio >= 0.0 && token_ratio < std::numeric_limits<double>::infinity()))
        throw std::invalid_argument{"token_ratio must be a finite number greater than 0"};
    max_ = truncated_milli(max_tokens);
    // A success never adds more than a full bucket, so a larger ratio behaves as max_tokens does.
    ratio_ = std::min(max_, truncated_milli(std::min(token_ratio, 1000.0)));
    if (max_ <= 0) throw std::invalid_argument{"max_tokens must be at least 0.001 (three decimals are kept)"};
    if (ratio_ <= 0) throw std::invalid_argument{"token_ratio must be at least 0.001 (three decimals are kept)"};
    tokens_.store(max_, std::memory_order_relaxed);
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

ratio_budget::ratio_budget(ratio_budget_options options) : options_{options}, percent_milli_{0}, reserve_milli_{0} {
    if (options.ttl <= duration{0}) throw std::invalid_argument{"ttl must be positive"};
    // Written so that NaN fails each comparison.
    if (!(options.percent_can_retry >= 0.0 && options.percent_can_retry <= 1000.0))
        throw std::invalid_argument{"percent_can_retry must be in [0, 1000]"};
    const double reserve = options.min_retries_per_sec * std::chrono::duration<double>(options.ttl).count();
    if (!(options.min_retries_per_sec >= 0.0 && reserve <= 1e12))
        throw std::invalid_argument{"min_retries_per_sec must be >= 0, with min_retries_per_sec * ttl <= 1e12"};
    // Truncated, not rounded: the budget may allow less than the rule's exact value, never more.
    percent_milli_ = truncated_milli(options.percent_can_retry);
    reserve_milli_ = truncated_milli(reserve);
}

time_point ratio_budget::settle(time_point now) {
    if (newest_) now = std::max(now, *newest_);
    // A start `ttl` old or older begins a window that no longer reaches `now`. Compared as an age,
    // with no subtraction from `now` that could leave the clock's range.
    while (!starts_.empty() && now - starts_.front().at >= options_.ttl) starts_.pop_front();
    return now;
}

std::int64_t ratio_budget::allowance_milli(time_point now) const {
    // The windows holding `now` start at each remembered start, or — when nothing happened at `now`
    // yet — at `now` itself, holding nothing before it. The tightest has the highest credit_before.
    std::int64_t tightest = starts_.empty() ? credit_ : starts_.front().credit_before;
    if (newest_ != now) tightest = std::max(tightest, credit_);
    return reserve_milli_ + credit_ - tightest;
}

void ratio_budget::add(time_point now, std::int64_t credit) {
    if (newest_ != now) {
        while (!starts_.empty() && starts_.back().credit_before <= credit_) starts_.pop_back();
        starts_.push_back(window_start{now, credit_});
        newest_ = now;
    }
    credit_ += credit;
}

void ratio_budget::on_request(time_point now) {
    const std::scoped_lock lock{mutex_};
    add(settle(now), percent_milli_);
}

bool ratio_budget::withdraw(time_point now) {
    const std::scoped_lock lock{mutex_};
    now = settle(now);
    if (allowance_milli(now) < 1000) return false;
    add(now, -1000);
    return true;
}

std::uint64_t ratio_budget::available(time_point now) {
    const std::scoped_lock lock{mutex_};
    now = settle(now);
    return static_cast<std::uint64_t>(std::max<std::int64_t>(0, allowance_milli(now) / 1000));
}

}  // namespace faultline::retry
