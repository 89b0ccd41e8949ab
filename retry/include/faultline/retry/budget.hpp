// Retry budgets: a limit on retries shared by many concurrent operations, so that a failing
// dependency sees a bounded amplification of its load instead of a retry storm. The retry loop
// deposits on each first attempt (`on_request`), reports each attempt's result (`on_success`,
// `on_failure` for retryable failures), and asks `try_withdraw_retry` before each retry; a refusal
// ends the operation at once with `budget_exhausted` (nothing waits for the budget to refill).
//
// Two budgets are provided:
// - `token_bucket_budget`: gRPC retryThrottling (gRFC A6).
// - `ratio_budget`: Finagle / Linkerd retry budgets (a share of recent requests plus a floor).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>

#include "faultline/core/clock.hpp"

namespace faultline::retry {

using faultline::duration;
using faultline::time_point;

// The interface the retry loop talks to. Implementations are thread-safe: one budget is meant to be
// shared (through std::shared_ptr in the policy) by every operation towards one dependency.
// Every `try_withdraw_retry` decision is counted.
class retry_budget {
public:
    virtual ~retry_budget() = default;

    // A first attempt is about to be sent (a deposit).
    virtual void on_request(time_point now) = 0;
    // A retry is wanted: true if the budget allows it (and takes it), false if it refuses.
    bool try_withdraw_retry(time_point now) {
        const bool ok = withdraw(now);
        (ok ? allowed_ : refused_).fetch_add(1, std::memory_order_relaxed);
        return ok;
    }
    // An attempt succeeded.
    virtual void on_success() = 0;
    // An attempt failed with a retryable outcome (whether or not it will be retried).
    virtual void on_failure() = 0;

    std::uint64_t allowed() const { return allowed_.load(std::memory_order_relaxed); }
    std::uint64_t refused() const { return refused_.load(std::memory_order_relaxed); }

protected:
    virtual bool withdraw(time_point now) = 0;

private:
    std::atomic<std::uint64_t> allowed_{0};
    std::atomic<std::uint64_t> refused_{0};
};

// gRFC A6 retryThrottling. Tokens are kept in milli-tokens (token_ratio has at most 3 decimals in
// A6), in one atomic, so every update is exact and lock-free. Starts full at max_tokens; each
// retryable failure costs 1 token, each success refunds token_ratio; the count stays in
// [0, max_tokens]. A retry is allowed only while tokens > max_tokens / 2; withdrawing takes nothing
// (the failure already paid). Time is not used.
class token_bucket_budget final : public retry_budget {
public:
    // max_tokens in (0, 1000], token_ratio > 0; both rounded to milli-tokens.
    token_bucket_budget(double max_tokens, double token_ratio);

    void on_request(time_point now) override;
    void on_success() override;
    void on_failure() override;

    // Current tokens, in milli-tokens (10 tokens = 10000).
    std::int64_t milli_tokens() const { return tokens_.load(std::memory_order_relaxed); }
    double tokens() const { return static_cast<double>(milli_tokens()) / 1000.0; }

protected:
    bool withdraw(time_point now) override;

private:
    std::int64_t max_;
    std::int64_t ratio_;
    std::atomic<std::int64_t> tokens_;
};

// Finagle / Linkerd retry budget: within any `ttl` window, retries may reach
//   percent_can_retry * (first attempts in the window) + min_retries_per_sec * ttl_seconds.
// Deposits and withdrawals expire after `ttl`. Time is cut into `slices` equal slices of ttl/slices
// (slice k = [epoch + k*slice, epoch + (k+1)*slice), epoch = the first time point the budget sees),
// and the window at time t is t's slice plus the (slices - 1) slices before it: an event made in
// slice k counts until slice k + slices begins. So an event lives between ttl - ttl/slices and ttl,
// exactly, under a manual clock. Integer arithmetic (milli-units) throughout; guarded by a mutex.
struct ratio_budget_options {
    duration ttl{std::chrono::seconds{10}};
    double percent_can_retry{0.2};
    double min_retries_per_sec{10.0};

    ratio_budget_options& with_ttl(duration d) { ttl = d; return *this; }
    ratio_budget_options& with_percent_can_retry(double p) { percent_can_retry = p; return *this; }
    ratio_budget_options& with_min_retries_per_sec(double r) { min_retries_per_sec = r; return *this; }
};

class ratio_budget final : public retry_budget {
public:
    static constexpr std::size_t slices = 10;

    explicit ratio_budget(ratio_budget_options options = {});

    void on_request(time_point now) override;
    void on_success() override {}
    void on_failure() override {}

    // Deposits (first attempts) and withdrawals (retries) inside the window at `now`.
    std::uint64_t deposits(time_point now);
    std::uint64_t withdrawals(time_point now);
    // The retry allowance at `now`: how many more retries would be allowed.
    std::uint64_t available(time_point now);

    const ratio_budget_options& options() const { return options_; }

protected:
    bool withdraw(time_point now) override;

private:
    struct slice {
        std::int64_t index = -1;
        std::uint64_t deposits = 0;
        std::uint64_t withdrawals = 0;
    };
    // Rolls the ring forward to `now`'s slice and returns it. Caller holds mutex_.
    slice& advance(time_point now);
    std::uint64_t sum_deposits() const;
    std::uint64_t sum_withdrawals() const;
    std::int64_t allowance_milli() const;

    ratio_budget_options options_;
    duration slice_length_;
    std::int64_t percent_milli_;  // percent_can_retry * 1000
    std::int64_t reserve_milli_;  // min_retries_per_sec * ttl_seconds * 1000
    std::mutex mutex_;
    bool started_ = false;
    time_point epoch_{};
    std::int64_t current_ = 0;
    std::array<slice, slices> ring_{};
};

}  // namespace faultline::retry
