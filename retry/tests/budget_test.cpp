#include "faultline/retry/budget.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace faultline::retry {
namespace {

using namespace std::chrono_literals;

const time_point t0{std::chrono::hours{1}};

// gRFC A6's example throttle: maxTokens 10, tokenRatio 0.1.
TEST(TokenBucketBudget, GrfcA6Example) {
    token_bucket_budget b{10, 0.1};
    EXPECT_EQ(b.milli_tokens(), 10'000);
    EXPECT_TRUE(b.try_withdraw_retry(t0));
    for (int i = 0; i < 4; ++i) b.on_failure();
    EXPECT_EQ(b.milli_tokens(), 6'000);
    EXPECT_TRUE(b.try_withdraw_retry(t0));   // 6 > 5
    b.on_failure();
    EXPECT_EQ(b.milli_tokens(), 5'000);
    EXPECT_FALSE(b.try_withdraw_retry(t0));  // 5 is not > 5: throttled
    b.on_success();
    EXPECT_EQ(b.milli_tokens(), 5'100);
    EXPECT_TRUE(b.try_withdraw_retry(t0));   // 5.1 > 5
    b.on_failure();
    EXPECT_EQ(b.milli_tokens(), 4'100);
    EXPECT_FALSE(b.try_withdraw_retry(t0));
    // Ten successes pay for one failure: the ~1:10 failure:success ratio A6 describes.
    for (int i = 0; i < 9; ++i) b.on_success();
    EXPECT_EQ(b.milli_tokens(), 5'000);
    EXPECT_FALSE(b.try_withdraw_retry(t0));
    b.on_success();
    EXPECT_TRUE(b.try_withdraw_retry(t0));
    EXPECT_EQ(b.allowed(), 4U);
    EXPECT_EQ(b.refused(), 3U);
}

TEST(TokenBucketBudget, ClampedToZeroAndMax) {
    token_bucket_budget b{10, 0.1};
    for (int i = 0; i < 100; ++i) b.on_success();
    EXPECT_EQ(b.milli_tokens(), 10'000);
    for (int i = 0; i < 25; ++i) b.on_failure();
    EXPECT_EQ(b.milli_tokens(), 0);
    for (int i = 0; i < 51; ++i) b.on_success();
    EXPECT_DOUBLE_EQ(b.tokens(), 5.1);
    EXPECT_TRUE(b.try_withdraw_retry(t0));
}

TEST(TokenBucketBudget, RejectsBadParameters) {
    EXPECT_THROW(token_bucket_budget(0, 0.1), std::invalid_argument);
    EXPECT_THROW(token_bucket_budget(1001, 0.1), std::invalid_argument);
    EXPECT_THROW(token_bucket_budget(10, 0.0001), std::invalid_argument);
}

TEST(RatioBudget, AllowsAShareOfRecentRequests) {
    ratio_budget b{ratio_budget_options{}.with_ttl(10s).with_percent_can_retry(0.2).with_min_retries_per_sec(0)};
    for (int i = 0; i < 10; ++i) b.on_request(t0);
    EXPECT_EQ(b.available(t0), 2U);
    EXPECT_TRUE(b.try_withdraw_retry(t0));
    EXPECT_TRUE(b.try_withdraw_retry(t0 + 1s));
    EXPECT_FALSE(b.try_withdraw_retry(t0 + 2s));
    EXPECT_EQ(b.withdrawals(t0 + 2s), 2U);
    EXPECT_EQ(b.allowed(), 2U);
    EXPECT_EQ(b.refused(), 1U);
}

TEST(RatioBudget, DepositsAndWithdrawalsExpireAfterTheTtl) {
    // Slices of 1 s: an event in slice k counts until slice k + 10 begins.
    ratio_budget b{ratio_budget_options{}.with_ttl(10s).with_percent_can_retry(0.5).with_min_retries_per_sec(0)};
    for (int i = 0; i < 4; ++i) b.on_request(t0);             // slice 0
    for (int i = 0; i < 2; ++i) b.on_request(t0 + 3500ms);    // slice 3
    EXPECT_EQ(b.deposits(t0 + 3500ms), 6U);
    EXPECT_TRUE(b.try_withdraw_retry(t0 + 4s));               // slice 4
    EXPECT_EQ(b.available(t0 + 4s), 2U);                      // 0.5 * 6 - 1
    EXPECT_EQ(b.deposits(t0 + 10s - 1ns), 6U);                // still slice 9
    EXPECT_EQ(b.deposits(t0 + 10s), 2U);                      // slice 10: slice 0 expired
    EXPECT_EQ(b.available(t0 + 10s), 0U);                     // 0.5 * 2 - 1
    EXPECT_FALSE(b.try_withdraw_retry(t0 + 10s));
    EXPECT_EQ(b.deposits(t0 + 13s), 0U);                      // slice 13: slice 3 expired
    EXPECT_EQ(b.withdrawals(t0 + 13s), 1U);                   // slice 4's withdrawal lives on
    EXPECT_EQ(b.withdrawals(t0 + 14s), 0U);
    EXPECT_EQ(b.available(t0 + 60s), 0U);
}

TEST(RatioBudget, MinimumRetriesPerSecondIsAReserve) {
    ratio_budget b{ratio_budget_options{}.with_ttl(2s).with_percent_can_retry(0.2).with_min_retries_per_sec(1.5)};
    EXPECT_EQ(b.available(t0), 3U);  // 1.5/s * 2 s, with no requests at all
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(b.try_withdraw_retry(t0));
    EXPECT_FALSE(b.try_withdraw_retry(t0));
    for (int i = 0; i < 5; ++i) b.on_request(t0 + 100ms);
    EXPECT_TRUE(b.try_withdraw_retry(t0 + 100ms));  // 0.2 * 5 = 1 more
    EXPECT_FALSE(b.try_withdraw_retry(t0 + 100ms));
    EXPECT_EQ(b.available(t0 + 2s), 3U);            // every event was in the first slice: only the reserve is left
}

TEST(RatioBudget, DefaultsFollowFinagle) {
    ratio_budget b;
    EXPECT_EQ(b.options().ttl, duration{10s});
    EXPECT_DOUBLE_EQ(b.options().percent_can_retry, 0.2);
    EXPECT_DOUBLE_EQ(b.options().min_retries_per_sec, 10.0);
    EXPECT_EQ(b.available(t0), 100U);
    for (int i = 0; i < 100; ++i) b.on_request(t0);
    EXPECT_EQ(b.available(t0), 120U);
}

TEST(RatioBudget, TimeGoingBackwardsIsBookedInTheNewestSlice) {
    ratio_budget b{ratio_budget_options{}.with_ttl(10s).with_percent_can_retry(1.0).with_min_retries_per_sec(0)};
    b.on_request(t0 + 5s);
    b.on_request(t0 + 2s);  // another thread read the clock earlier
    EXPECT_EQ(b.deposits(t0 + 5s), 2U);
    EXPECT_EQ(b.deposits(t0 + 15s), 0U);
}

constexpr int per_thread = 20'000;

TEST(BudgetThreads, TokenBucketLosesNoUpdate) {
    // Each thread fails then succeeds: with ratio 1 the bucket never reaches a clamp, so the final
    // count is exact only if no update was lost.
    token_bucket_budget b{1000, 1.0};
    auto work = [&] {
        for (int i = 0; i < per_thread; ++i) {
            b.on_failure();
            (void)b.try_withdraw_retry(t0);
            b.on_success();
        }
    };
    std::thread a{work};
    std::thread c{work};
    a.join();
    c.join();
    EXPECT_EQ(b.milli_tokens(), 1'000'000);
    EXPECT_EQ(b.allowed() + b.refused(), 2U * per_thread);
    EXPECT_EQ(b.refused(), 0U);
}

TEST(BudgetThreads, RatioBudgetCountsEveryDecision) {
    ratio_budget b{ratio_budget_options{}.with_ttl(10s).with_percent_can_retry(0.2).with_min_retries_per_sec(1)};
    auto work = [&] {
        for (int i = 0; i < per_thread; ++i) {
            b.on_request(t0);
            (void)b.try_withdraw_retry(t0);
        }
    };
    std::thread a{work};
    std::thread c{work};
    a.join();
    c.join();
    EXPECT_EQ(b.allowed() + b.refused(), 2U * per_thread);
    EXPECT_EQ(b.deposits(t0), 2U * per_thread);
    EXPECT_EQ(b.withdrawals(t0), b.allowed());
    // Never more than 20 % of deposits plus the 10-retry reserve.
    EXPECT_LE(b.allowed(), 2U * per_thread / 5 + 10);
    EXPECT_GE(b.allowed(), 2U * per_thread / 5);
}

}  // namespace
}  // namespace faultline::retry
