#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "check_test_support.hpp"

namespace faultline::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Ten operations starting 1 ms apart, each retrying three times 10 ms after a failure.
record::run_record retry_storm() {
    test::journal_builder j;
    for (int i = 0; i < 10; ++i) {
        j.op("op" + std::to_string(i)).at(i);
        j.attempt(503).wait(10).attempt(503).wait(10).attempt(503).wait(10).attempt(200);
    }
    return j.run();
}

TEST(retry_budget, retries_over_the_window_budget_fail_with_the_worst_window) {
    const record::verdict v =
        test::run_check("check = \"retry_budget\"\nratio = 0.2\nmin_per_sec = 0\nwindow = \"1s\"\ntolerance = \"0s\"\n",
                        retry_storm());
    EXPECT_FALSE(v.passed);
    EXPECT_THAT(v.summary, HasSubstr("30 retries for 10 operations; budget exceeded: 30 retries in the worst window, allowed 0"));
    ASSERT_EQ(v.evidence.size(), 2u);
    EXPECT_EQ(v.evidence[0].operation, "");
    // A window holding only retries is the worst: nothing earns them.
    EXPECT_THAT(v.evidence[0].detail,
                StartsWith("worst window 11.0ms–1011.0ms: 30 retries > 0.2 × 0 first attempts (± 0.0ms) + 0/s × 1000.0ms = 0"));
    // The first 20 retries in time order: every first retry (seq 4i+2), then the second ones.
    ASSERT_EQ(v.evidence[0].seqs.size(), 20u);
    EXPECT_EQ(v.evidence[0].seqs[0], 2u);
    EXPECT_EQ(v.evidence[0].seqs[9], 38u);
    EXPECT_EQ(v.evidence[0].seqs[10], 3u);
    // The first window to break the budget ends at the third retry (13 ms); it starts before the run
    // did, and is shown from the run's start.
    EXPECT_THAT(v.evidence[1].detail, StartsWith("first window 0.0ms–13.0ms: 3 retries"));
    EXPECT_THAT(v.evidence[1].seqs, ElementsAre(2u, 6u, 10u));
}

// A first attempt every millisecond from 0 to 2 s, the ten sent at 995–1004 ms read by the server
// 10 ms late (1005–1014 ms), and `retries` operations (the first ones) retried at 1000 ms. By the
// client's clock every 1 s window holds 1,000 first attempts, which earn 500 retries at ratio 0.5; by
// the server's, the window from 5 ms holds 990.
record::run_record steady_traffic_with_late_first_attempts(int retries) {
    test::journal_builder j;
    for (int f = 0; f <= 2000; ++f) {
        j.op("op" + std::to_string(f)).at(f >= 995 && f <= 1004 ? f + 10 : f);
        j.attempt(503, 0.5);
        if (f < retries) j.at(1000).attempt(200);
    }
    return j.run();
}

TEST(retry_budget, first_attempts_within_the_tolerance_of_a_window_count_for_it) {
    const std::string budget = "check = \"retry_budget\"\nratio = 0.5\nmin_per_sec = 0\nwindow = \"1s\"\n";
    const record::verdict strict = test::run_check(budget + "tolerance = \"0s\"\n", steady_traffic_with_late_first_attempts(500));
    EXPECT_FALSE(strict.passed);
    ASSERT_FALSE(strict.evidence.empty());
    EXPECT_THAT(strict.evidence[0].detail, HasSubstr("500 retries > 0.5 × 990 first attempts (± 0.0ms)"));
    // Counting first attempts 10 ms either side (the default), the late ones count again.
    const record::verdict tolerant = test::run_check(budget, steady_traffic_with_late_first_attempts(500));
    EXPECT_TRUE(tolerant.passed) << tolerant.summary;
    EXPECT_THAT(tolerant.summary, HasSubstr("within retries ≤ 0.5 × first attempts (± 10.0ms) + 0/s × 1000.0ms"));
    // The tolerance earns ten first attempts at most either side: 520 retries are over however the
    // clocks differ.
    const record::verdict over = test::run_check(budget, steady_traffic_with_late_first_attempts(520));
    EXPECT_FALSE(over.passed);
    EXPECT_THAT(over.summary, HasSubstr("budget exceeded: 520 retries in the worst window"));
}

TEST(retry_budget, the_min_per_second_floor_covers_a_few_retries) {
    const record::verdict v = test::run_check("check = \"retry_budget\"\n", retry_storm());
    EXPECT_TRUE(v.passed) << v.summary;
    EXPECT_THAT(v.summary, HasSubstr("every 10000.0ms window within"));
}

TEST(retry_budget, token_bucket_replay_flags_retries_at_or_below_half) {
    test::journal_builder j;
    j.op("a").attempt(503).wait(5).attempt(503).wait(5).attempt(200);
    const record::verdict v =
        test::run_check("check = \"retry_budget\"\nratio = 1000\nmax_tokens = 3\ntoken_ratio = 0.5\n", j.run());
    EXPECT_FALSE(v.passed);
    // 3 → 2 after the first failure (retry allowed: 2 > 1.5), 2 → 1 after the second (retry not allowed).
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_EQ(v.evidence[0].operation, "a");
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(2u, 3u));
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("retry #3 at 12.0ms decided after #2"));
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("with 1 tokens ≤ max_tokens/2 = 1.5"));
    EXPECT_THAT(v.summary, HasSubstr("token bucket (max 3, ratio 0.5): 1 retries issued at or below half, lowest 1 tokens"));
    // The bucket's parameters also travel as figures, for reports to draw with.
    EXPECT_EQ(v.parameter("max_tokens"), 3.0);
    EXPECT_EQ(v.parameter("token_ratio"), 0.5);
}

TEST(retry_budget, without_a_token_bucket_has_no_bucket_parameters) {
    const record::verdict v = test::run_check("check = \"retry_budget\"\n", retry_storm());
    EXPECT_TRUE(v.parameters.empty());
}

TEST(retry_budget, token_bucket_refills_on_success) {
    test::journal_builder j;
    j.op("a").attempt(503).wait(5).attempt(200);
    j.op("b").at(20).attempt(200);
    j.op("c").at(30).attempt(503).wait(5).attempt(200);
    const record::verdict v = test::run_check("check = \"retry_budget\"\nmax_tokens = 3\ntoken_ratio = 1\n", j.run());
    EXPECT_TRUE(v.passed) << v.summary;
}

// The replay counts failures as the builtin client's budget does, by the retry library's status table:
// a 413 with Retry-After and a key-in-use 409 are retryable, so they cost a token; without their
// condition they are final and cost nothing.
TEST(retry_budget, conditional_statuses_cost_a_token_only_when_retryable) {
    const std::string check = "check = \"retry_budget\"\nratio = 1000\nmax_tokens = 3\ntoken_ratio = 0.5\n";
    test::journal_builder retryable;
    retryable.op("a").attempt(413).retry_after(1000).wait(5).attempt(200);
    retryable.op("b").at(2).attempt(409).effect(record::effect_kind::conflict).wait(5).attempt(200);
    const record::verdict v = test::run_check(check, retryable.run());
    EXPECT_FALSE(v.passed);
    // 3 → 2 after the 413 (retry allowed), 2 → 1 after the 409 (retry not allowed).
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_EQ(v.evidence[0].operation, "b");
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(3u, 4u));

    test::journal_builder final_statuses;
    final_statuses.op("a").attempt(413).wait(5).attempt(200);
    final_statuses.op("b").at(2).attempt(409).wait(5).attempt(200);
    EXPECT_TRUE(test::run_check(check, final_statuses.run()).passed);
}

TEST(retry_budget, bad_config) {
    auto errors = test::parse_errors("check = \"retry_budget\"\nwindow = \"0s\"\nratio = -1\ntoken_ratio = \"x\"\n");
    ASSERT_EQ(errors.size(), 3u);
    EXPECT_THAT(errors[0].message, HasSubstr("ratio: must be in [0, 1000], got -1"));
    EXPECT_THAT(errors[1].message, HasSubstr("window: must be longer than 0, got \"0s\""));
    EXPECT_THAT(errors[2].message, HasSubstr("token_ratio: expected a number, got a string"));
}

}  // namespace
}  // namespace faultline::checks
