#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "grpc_test_support.hpp"

namespace faultline::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using enum grpc_status;

constexpr std::string_view check_table = R"(check = "grpc_throttling")";

TEST(grpc_throttling, a_retry_decided_at_or_below_half_is_named_with_the_token_level) {
    // maxTokens 3, tokenRatio 0.5: retries only above 1.5 tokens.
    test::journal_builder j;
    j.op("a", "POST", test::charge).call(unavailable).wait(100).call(unavailable).wait(100).call(ok);
    const auto config = test::service_config(test::retry_method(), record::grpc_retry_throttling{3, 0.5});
    const record::verdict v = test::run_check(check_table, test::declaring(j.run(), config));
    EXPECT_FALSE(v.passed);
    EXPECT_EQ(v.summary, "1 of 2 retries issued with the bucket at or below half; retryThrottling (maxTokens 3, "
                         "tokenRatio 0.5), lowest 1 tokens; 1 failures left no retry allowed");
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(2u, 3u));
    EXPECT_EQ(v.evidence[0].detail, "retry #3 at 202.0ms decided after #2 POST /pkg.Svc/Charge on conn 2 at "
                                    "101.0ms→102.0ms: 200 grpc UNAVAILABLE with 1 tokens ≤ maxTokens/2 = 1.5");
}

TEST(grpc_throttling, a_client_that_stops_at_half_and_retries_once_refilled_passes) {
    test::journal_builder j;
    j.op("a", "POST", test::charge).call(unavailable).wait(100).call(unavailable);  // 1 token left: stops
    for (int i = 0; i < 4; ++i) j.op("ok" + std::to_string(i), "POST", test::charge).at(1000 + i * 10).call(ok);
    j.op("b", "POST", test::charge).at(2000).call(unavailable).wait(100).call(ok);  // refilled to 3, then 2
    // Calls of a method without a policy refill the bucket too, and cost nothing.
    j.op("c", "POST", "/other.Svc/Get").at(3000).call(unavailable);
    const auto config = test::service_config(test::retry_method(), record::grpc_retry_throttling{3, 0.5});
    const record::verdict v = test::run_check(check_table, test::declaring(j.run(), config));
    EXPECT_TRUE(v.passed) << v.summary;
    EXPECT_EQ(v.summary, "0 of 2 retries issued with the bucket at or below half; retryThrottling (maxTokens 3, "
                         "tokenRatio 0.5), lowest 1 tokens; 1 failures left no retry allowed");
}

// A bucket that never fell to half proves nothing of throttling.
TEST(grpc_throttling, a_bucket_that_never_reached_half_is_not_enough_evidence) {
    test::journal_builder j;
    j.op("a", "POST", test::charge).call(unavailable).wait(100).call(ok);
    const auto config = test::service_config(test::retry_method(), record::grpc_retry_throttling{10, 0.1});
    const record::verdict v = test::run_check(check_table, test::declaring(j.run(), config));
    EXPECT_EQ(v.outcome(), record::verdict_outcome::insufficient_evidence);
    EXPECT_EQ(v.summary, "retryThrottling never had to stop a retry: the bucket's lowest level was 9 tokens, above "
                         "half of retryThrottling (maxTokens 10, tokenRatio 0.1)");
}

// Each process of a per-operation command client is a channel of its own, with its own bucket: two
// processes that each retry once from a full bucket break nothing, though one shared bucket would
// have stopped the second.
TEST(grpc_throttling, each_client_process_has_its_own_bucket) {
    test::journal_builder j;
    j.op("p0", "POST", test::charge).call(unavailable).wait(100).call(unavailable);
    j.op("p1", "POST", test::charge).at(1000).call(unavailable).wait(100).call(unavailable);
    record::run_record run = test::declaring(j.run(), test::service_config(test::retry_method(), record::grpc_retry_throttling{3, 0.5}));
    const record::verdict shared = test::run_check(check_table, run);
    EXPECT_FALSE(shared.passed);
    run.command = record::command_result{};
    run.command->processes.resize(2);
    const record::verdict own = test::run_check(check_table, run);
    EXPECT_TRUE(own.passed) << own.summary;
    EXPECT_EQ(own.summary, "0 of 2 retries issued with the bucket at or below half; retryThrottling (maxTokens 3, "
                           "tokenRatio 0.5) (a bucket per client process), lowest 1 tokens; 2 failures left no retry "
                           "allowed");
}

TEST(grpc_throttling, a_hedge_is_judged_when_it_starts) {
    test::journal_builder j;
    j.op("x", "POST", test::charge).call(unavailable);  // 2 → 1 token: at half
    j.op("h", "POST", test::charge).at(10).call(internal, 200);
    j.op("h").at(110).lost(record::wire_outcome::client_gone, 100);
    const auto config = test::service_config(test::hedging_method(), record::grpc_retry_throttling{2, 1});
    const record::verdict v = test::run_check(check_table, test::declaring(j.run(), config));
    EXPECT_FALSE(v.passed);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(3u));
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("hedge #3 POST /pkg.Svc/Charge on conn 3 at 110.0ms→210.0ms: "
                                                "client_gone started with 1 tokens ≤ maxTokens/2 = 1"));
}

TEST(grpc_throttling, not_applicable_without_retry_throttling_and_nothing_to_judge_without_a_retry) {
    test::journal_builder j;
    j.op("a", "POST", test::charge).call(unavailable).wait(100).call(ok);
    const record::verdict none = test::run_check(check_table, test::declaring(j.run(), test::service_config(test::retry_method())));
    EXPECT_EQ(none.outcome(), record::verdict_outcome::insufficient_evidence);
    EXPECT_EQ(none.summary, "not applicable: the service config has no retryThrottling");

    test::journal_builder once;
    once.op("a", "POST", test::charge).refused_stream().call(ok);  // a transparent retry is no retry
    once.op("b", "POST", test::charge).at(100).call(ok);
    const auto config = test::service_config(test::retry_method(), record::grpc_retry_throttling{10, 0.1});
    const record::verdict v = test::run_check(check_table, test::declaring(once.run(), config));
    EXPECT_EQ(v.outcome(), record::verdict_outcome::insufficient_evidence);
    EXPECT_EQ(v.summary, "no retry under a retryPolicy or hedgingPolicy: nothing to judge (retryThrottling "
                         "(maxTokens 10, tokenRatio 0.1))");
    EXPECT_THAT(test::run_check(check_table, j.run()).summary, HasSubstr("no gRPC service config"));
}

TEST(grpc_throttling, bad_config) {
    const auto errors = test::parse_errors(std::string(check_table) + "\nmax_tokens = 10\n");
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_THAT(errors[0].message, HasSubstr("unknown key \"max_tokens\"; allowed: check, expect_failure, failures_only, service_config"));
}

}  // namespace
}  // namespace faultline::checks
