#include "faultline/retry/budget.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <thread>
#include <vector>

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

TEST(RatioBudget, RejectsBadParameters) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    const auto options = [] { return ratio_budget_options{}; };
    EXPECT_THROW(ratio_budget{options().with_ttl(0s)}, std::invalid_argument);
    for (const double bad : {nan, inf, -inf, -0.1, 1000.5})
        EXPECT_THROW(ratio_budget{options().with_percent_can_retry(bad)}, std::invalid_argument) << bad;
    for (const double bad : {nan, inf, -1.0, 1e12})
        EXPECT_THROW(ratio_budget{options().with_min_retries_per_sec(bad)}, std::invalid_argument) << bad;
    EXPECT_NO_THROW(ratio_budget{options().with_percent_can_retry(1000).with_min_retries_per_sec(0)});
}

TEST(TokenBucketBudget, RejectsBadParameters) {
    EXPECT_THROW(token_bucket_budget(0, 0.1), std::invalid_argument);
    EXPECT_THROW(token_bucket_budget(1001, 0.1), std::invalid_argument);
    EXPECT_THROW(token_bucket_budget(10, 0.0001), std::invalid_argument);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    for (const double bad : {nan, inf, -inf, -1.0, 0.0004})
        EXPECT_THROW(token_bucket_budget(bad, 0.1), std::invalid_argument) << "max_tokens " << bad;
    for (const double bad : {nan, inf, -inf, -0.1, 0.0, 0.0009, 0.0005})
        EXPECT_THROW(token_bucket_budget(10, bad), std::invalid_argument) << "token_ratio " << bad;
}

// gRFC A6: maxTokens and tokenRatio "must be greater than zero"; "up to 3 decimal places are
// supported" — further digits are dropped (as gRPC C-core does), not rounded, and the decimal read
// is the one written (1.001 is 1001 milli-tokens although the double is 1.000999…).
TEST(TokenBucketBudget, KeepsThreeDecimalPlacesAsWritten) {
    EXPECT_EQ(token_bucket_budget(10, 0.1).milli_tokens(), 10'000);
    EXPECT_EQ(token_bucket_budget(1.001, 0.1).milli_tokens(), 1'001);
    EXPECT_EQ(token_bucket_budget(1.0019, 0.1).milli_tokens(), 1'001);
    EXPECT_EQ(token_bucket_budget(1000, 0.1).milli_tokens(), 1'000'000);
    token_bucket_budget b{10, 0.0015};  // 1 milli-token per success, not 2
    for (int i = 0; i < 3; ++i) b.on_failure();
    b.on_success();
    EXPECT_EQ(b.milli_tokens(), 7'001);
    token_bucket_budget c{10, 1.001};
    c.on_failure();
    c.on_success();
    EXPECT_EQ(c.milli_tokens(), 10'000);
    c.on_failure();
    c.on_failure();
    c.on_success();
    EXPECT_EQ(c.milli_tokens(), 9'001);
    // A ratio above max_tokens refills a bucket completely on one success, as max_tokens would.
    token_bucket_budget d{2, 5000};
    d.on_failure();
    d.on_failure();
    d.on_success();
    EXPECT_EQ(d.milli_tokens(), 2'000);
}

TEST(RatioBudget, AllowsAShareOfRecentRequests) {
    ratio_budget b{ratio_budget_options{}.with_ttl(10s).with_percent_can_retry(0.2).with_min_retries_per_sec(0)};
    for (int i = 0; i < 10; ++i) b.on_request(t0);
    EXPECT_EQ(b.available(t0), 2U);
    EXPECT_TRUE(b.try_withdraw_retry(t0));
    EXPECT_TRUE(b.try_withdraw_retry(t0));
    EXPECT_FALSE(b.try_withdraw_retry(t0));
    EXPECT_EQ(b.allowed(), 2U);
    EXPECT_EQ(b.refused(), 1U);
}

// The check's rule holds in every window: a window starting just after the first attempts holds
// none of them, so retries there live on the floor alone.
TEST(RatioBudget, FirstAttemptsEarnRetriesOnlyInWindowsThatHoldThem) {
    ratio_budget b{ratio_budget_options{}.with_ttl(10s).with_percent_can_retry(0.5).with_min_retries_per_sec(0.1)};
    for (int i = 0; i < 4; ++i) b.on_request(t0);
    EXPECT_EQ(b.available(t0), 3U);         // 0.5 * 4 + 1
    EXPECT_EQ(b.available(t0 + 1ns), 1U);   // [t0 + 1ns, t0 + 10s + 1ns) holds no first attempt
    EXPECT_TRUE(b.try_withdraw_retry(t0 + 5s));
    EXPECT_FALSE(b.try_withdraw_retry(t0 + 5s));
    for (int i = 0; i < 2; ++i) b.on_request(t0 + 6s);
    EXPECT_EQ(b.available(t0 + 6s), 1U);    // [t0 + 6s, …): 0.5 * 2 + 1; [t0 + 5s, …) has 1 more, used
    EXPECT_TRUE(b.try_withdraw_retry(t0 + 6s));
    EXPECT_FALSE(b.try_withdraw_retry(t0 + 6s));
}

TEST(RatioBudget, RetriesCountAgainstTheFloorForExactlyOneTtl) {
    ratio_budget b{ratio_budget_options{}.with_ttl(10s).with_percent_can_retry(0.5).with_min_retries_per_sec(0.1)};
    for (int i = 0; i < 4; ++i) b.on_request(t0);
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(b.try_withdraw_retry(t0));
    EXPECT_FALSE(b.try_withdraw_retry(t0));
    EXPECT_EQ(b.available(t0 + 10s - 1ns), 0U);  // [t0, t0 + 10s) still holds 3 retries for 4 attempts
    EXPECT_EQ(b.available(t0 + 10s), 1U);        // from t0 + 10s on, no window holds t0
    EXPECT_EQ(b.available(t0 + 60s), 1U);
}

// Two bursts either side of what used to be a slice edge (ttl/10 slices from the first time point):
// the old budget forgot the first burst at 10 s and allowed 140 + 139 = 279 retries, while the
// window [0.999 s, 10.999 s) that holds both allows 0.2 * 399 + 100 = 179.8.
TEST(RatioBudget, BurstsAtTheEdgesOfAWindowShareOneAllowance) {
    ratio_budget b;  // ttl 10 s, 0.2, 10/s
    EXPECT_EQ(b.available(t0), 100U);
    const auto burst = [&b](time_point at, int first_attempts) {
        for (int i = 0; i < first_attempts; ++i) b.on_request(at);
        int retries = 0;
        while (b.try_withdraw_retry(at)) ++retries;
        return retries;
    };
    EXPECT_EQ(burst(t0 + 999ms, 200), 140);  // 0.2 * 200 + 100
    EXPECT_EQ(burst(t0 + 10s, 199), 39);     // 179.8 - 140, rounded down
    EXPECT_EQ(b.allowed(), 179U);
    EXPECT_EQ(b.available(t0 + 10999ms - 1ns), 0U);
    // Once the first burst is exactly ttl old: the window from 10 s allows 100 + 39.8 - 39, the
    // windows after it 100.
    EXPECT_EQ(b.available(t0 + 10999ms), 100U);
}

TEST(RatioBudget, MinimumRetriesPerSecondIsAReserve) {
    ratio_budget b{ratio_budget_options{}.with_ttl(2s).with_percent_can_retry(0.2).with_min_retries_per_sec(1.5)};
    EXPECT_EQ(b.available(t0), 3U);  // 1.5/s * 2 s, with no requests at all
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(b.try_withdraw_retry(t0));
    EXPECT_FALSE(b.try_withdraw_retry(t0));
    for (int i = 0; i < 5; ++i) b.on_request(t0 + 100ms);
    EXPECT_TRUE(b.try_withdraw_retry(t0 + 100ms));  // 0.2 * 5 = 1 more
    EXPECT_FALSE(b.try_withdraw_retry(t0 + 100ms));
    EXPECT_EQ(b.available(t0 + 2s), 3U);            // t0's retries are gone; 0.2 * 5 - 1 + 3 = 3
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

TEST(RatioBudget, TimeGoingBackwardsIsBookedAtTheNewestEvent) {
    ratio_budget b{ratio_budget_options{}.with_ttl(10s).with_percent_can_retry(1.0).with_min_retries_per_sec(0)};
    b.on_request(t0 + 5s);
    b.on_request(t0 + 2s);  // another thread read the clock earlier
    EXPECT_EQ(b.available(t0 + 2s), 2U);  // asked at the newest event, 5 s
    EXPECT_TRUE(b.try_withdraw_retry(t0 + 1s));
    EXPECT_EQ(b.available(t0 + 5s), 1U);
    EXPECT_EQ(b.available(t0 + 5s + 1ns), 0U);  // a window from just after 5 s holds no first attempt
}

// Whatever the sequence, every admitted retry keeps the rule in every window that holds it, and
// every refused one would have broken it in some window: checked against a brute-force count over
// all windows, as the harness's check counts them.
TEST(RatioBudget, AgreesWithABruteForceCountOfEveryWindow) {
    const auto ttl = 100ms;
    ratio_budget b{ratio_budget_options{}.with_ttl(ttl).with_percent_can_retry(0.3).with_min_retries_per_sec(20)};
    struct event {
        time_point at;
        bool retry;
    };
    std::vector<event> events;
    // Would a retry at `at` keep retries <= 0.3 * firsts + 2 in every window [s, s + ttl) holding it?
    const auto admissible = [&](time_point at) {
        for (const event& start : events) {
            if (at - start.at >= ttl) continue;
            std::int64_t milli = 2000 - 1000;  // the floor, minus the retry asked for
            for (const event& e : events)
                if (e.at >= start.at) milli += e.retry ? -1000 : 300;
            if (milli < 0) return false;
        }
        return 2000 - 1000 >= 0;  // the window starting at `at` itself
    };
    std::uint64_t state = 12345;
    time_point now = t0;
    for (int i = 0; i < 3000; ++i) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;  // fixed LCG sequence
        now += std::chrono::milliseconds{(state >> 33) % 4 == 0 ? (state >> 40) % 7 : 0};
        if ((state >> 20) % 3 == 0) {
            b.on_request(now);
            events.push_back({now, false});
        } else {
            const bool expected = admissible(now);
            ASSERT_EQ(b.try_withdraw_retry(now), expected) << "event " << i;
            if (expected) events.push_back({now, true});
        }
    }
    EXPECT_GT(b.allowed(), 100U);
    EXPECT_GT(b.refused(), 100U);
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
    // Never more than 20 % of deposits plus the 10-retry reserve.
    EXPECT_LE(b.allowed(), 2U * per_thread / 5 + 10);
    EXPECT_GE(b.allowed(), 2U * per_thread / 5);
}

}  // namespace
}  // namespace faultline::retry
