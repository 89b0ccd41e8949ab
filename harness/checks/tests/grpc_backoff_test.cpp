#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "grpc_test_support.hpp"

namespace faultline::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using enum grpc_status;

constexpr std::string_view check_table = R"(check = "grpc_backoff")";

// maxAttempts 5, initialBackoff 1 s, maxBackoff 4 s, multiplier 2: bounds 1 s, 2 s, 4 s, 4 s.
std::shared_ptr<const record::grpc_service_config> slow_config() {
    record::grpc_method_config m = test::retry_method(5);
    m.retry->initial_backoff = std::chrono::seconds{1};
    m.retry->max_backoff = std::chrono::seconds{4};
    return test::service_config(m);
}

// `ops` operations, each failing 4 times then succeeding, waiting `waits[n]` ms before retry n + 1.
record::run_record retried(int ops, const std::vector<double>& waits) {
    test::journal_builder j;
    for (int i = 0; i < ops; ++i) {
        j.op("op" + std::to_string(i), "POST", test::charge).at(i * 20'000.0);
        for (const double w : waits) j.call(unavailable).wait(w);
        j.call(ok);
    }
    return test::declaring(j.run(), slow_config());
}

TEST(grpc_backoff, a_wait_past_its_bound_is_named) {
    test::journal_builder j;
    j.op("a", "POST", test::charge).call(unavailable).wait(500).call(unavailable).wait(2100).call(ok);
    const record::verdict v = test::run_check(std::string(check_table) + "\nmin_samples = 0\n",
                                      test::declaring(j.run(), slow_config()));
    EXPECT_FALSE(v.passed);
    EXPECT_EQ(v.summary, "1 of 2 waits longer than min(initialBackoff × multiplier^(n−1), maxBackoff) + tolerance "
                         "50.0ms, the machine's noise");
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(2u, 3u));
    EXPECT_EQ(v.evidence[0].detail,
              "retry 2 #3 at 2602.0ms waited 2100.0ms after #2 POST /pkg.Svc/Charge on conn 2 at 501.0ms→502.0ms: 200 "
              "grpc UNAVAILABLE > bound 2000.0ms + tolerance 50.0ms");
}

TEST(grpc_backoff, waits_that_all_sit_at_the_bound_are_not_jittered) {
    // Every wait exactly its bound: 1 s, 2 s, 4 s, 4 s, over 2 operations: 8 waits.
    const record::verdict v = test::run_check(check_table, retried(2, {1000, 2000, 4000, 4000}));
    EXPECT_FALSE(v.passed);
    EXPECT_THAT(v.summary, HasSubstr("; jitter: 8 of 8 waits with a bound ≥ 5 × tolerance at ≥ 0.9 × bound − tolerance: not drawn from [0, bound]"));
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_EQ(v.evidence[0].seqs.size(), 8u);
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("every one of 8 waits sat at its bound"));
}

TEST(grpc_backoff, jittered_waits_within_their_bounds_pass) {
    const record::verdict v = test::run_check(check_table, retried(2, {300, 1900, 1200, 3000}));
    EXPECT_TRUE(v.passed) << v.summary;
    EXPECT_EQ(v.summary, "0 of 8 waits longer than min(initialBackoff × multiplier^(n−1), maxBackoff) + tolerance "
                         "50.0ms, the machine's noise; jitter: 2 of 8 waits with a bound ≥ 5 × tolerance at ≥ 0.9 × "
                         "bound − tolerance");
}

TEST(grpc_backoff, too_few_waits_for_the_jitter_test_is_not_enough_evidence) {
    const record::verdict v = test::run_check(check_table, retried(1, {1000, 2000, 4000, 4000}));
    EXPECT_EQ(v.outcome(), record::verdict_outcome::insufficient_evidence);
    EXPECT_THAT(v.summary, HasSubstr("jitter: not enough evidence, 4 of 4 waits with a bound ≥ 5 × tolerance at ≥ "
                                     "0.9 × bound − tolerance, 8 needed"));
}

TEST(grpc_backoff, pushback_and_refused_streams_are_left_out_and_pushback_restarts_the_curve) {
    test::journal_builder j;
    // #1 pushes back 3 s: retry #2 is grpc_pushback's; retry #3 is retry 1 again (bound 1 s), #4 follows
    // a refused stream (transparent, no backoff), #5 is retry 2 (bound 2 s).
    j.op("a", "POST", test::charge).call(unavailable).pushback(3000).wait(3000).call(unavailable).wait(900)
        .refused_stream().call(unavailable).wait(1900).call(ok);
    const record::verdict v = test::run_check(std::string(check_table) + "\nmin_samples = 0\n",
                                      test::declaring(j.run(), slow_config()));
    EXPECT_TRUE(v.passed) << v.summary;
    EXPECT_EQ(v.summary, "0 of 2 waits longer than min(initialBackoff × multiplier^(n−1), maxBackoff) + tolerance "
                         "50.0ms, the machine's noise; jitter not judged (min_samples = 0)");
}

TEST(grpc_backoff, nothing_to_judge_without_a_retry_policy_or_a_retry) {
    test::journal_builder j;
    j.op("a", "POST", test::charge).call(ok);
    const record::verdict v = test::run_check(check_table, test::declaring(j.run(), slow_config()));
    EXPECT_EQ(v.outcome(), record::verdict_outcome::insufficient_evidence);
    EXPECT_EQ(v.summary, "no retry with a backoff under a retryPolicy: nothing to judge");
    const record::verdict hedging = test::run_check(check_table, test::declaring(j.run(), test::service_config(test::hedging_method())));
    EXPECT_EQ(hedging.summary, "no retry with a backoff under a retryPolicy: nothing to judge; 1 operations not judged "
                               "(their method has no retryPolicy)");
    EXPECT_THAT(test::run_check(check_table, j.run()).summary, HasSubstr("no gRPC service config"));
}

TEST(grpc_backoff, bad_config) {
    auto errors = test::parse_errors(std::string(check_table) + "\ntolerance = \"fast\"\nmin_samples = -1\n");
    ASSERT_EQ(errors.size(), 2u);
    EXPECT_THAT(errors[0].message, HasSubstr("tolerance: bad duration \"fast\""));
    EXPECT_EQ(errors[1].to_string(), "scenario.toml:3:15: check \"grpc_backoff\": min_samples: must be in [0, 1000000], got -1");
}

}  // namespace
}  // namespace faultline::checks
