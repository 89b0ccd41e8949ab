#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "grpc_test_support.hpp"

namespace faultline::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using enum grpc_status;

constexpr std::string_view check_table = R"(check = "grpc_pushback")";

TEST(grpc_pushback, an_early_retry_and_a_retry_after_do_not_retry_are_named) {
    test::journal_builder j;
    j.op("early", "POST", test::charge).call(unavailable).pushback(500).wait(100).call(ok);
    j.op("stop", "POST", test::charge).at(1000).call(unavailable).pushback(-1).wait(100).call(unavailable).wait(100).call(ok);
    const record::verdict v = test::run_check(check_table, test::declaring(j.run(), test::service_config(test::retry_method())));
    EXPECT_FALSE(v.passed);
    EXPECT_EQ(v.summary, "2 of 2 pushbacks not obeyed (tolerance 50.0ms, the machine's noise)");
    ASSERT_EQ(v.evidence.size(), 2u);
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(1u, 2u));
    EXPECT_EQ(v.evidence[0].detail, "attempt #2 at 101.0ms waited 100.0ms after #1 POST /pkg.Svc/Charge on conn 1 at "
                                    "0.0ms→1.0ms: 200 grpc UNAVAILABLE, pushback 500ms < 500.0ms − tolerance 50.0ms");
    EXPECT_THAT(v.evidence[1].seqs, ElementsAre(3u, 4u, 5u));
    EXPECT_THAT(v.evidence[1].detail, HasSubstr("2 attempts after #3 POST /pkg.Svc/Charge on conn 3 at "
                                                "1000.0ms→1001.0ms: 200 grpc UNAVAILABLE, pushback -1ms, which said do not retry:"));
}

TEST(grpc_pushback, a_client_that_waits_and_stops_as_told_passes) {
    test::journal_builder j;
    j.op("wait", "POST", test::charge).call(unavailable).pushback(500).wait(460).call(ok);
    j.op("stop", "POST", test::charge).at(1000).call(unavailable).pushback(-1);
    j.op("plain", "POST", test::charge).at(2000).call(unavailable).wait(10).call(ok);
    const record::verdict v = test::run_check(check_table, test::declaring(j.run(), test::service_config(test::retry_method())));
    EXPECT_TRUE(v.passed) << v.summary;
    EXPECT_EQ(v.summary, "0 of 2 pushbacks not obeyed (tolerance 50.0ms, the machine's noise)");
}

TEST(grpc_pushback, nothing_to_judge_without_a_pushback) {
    test::journal_builder j;
    j.op("a", "POST", test::charge).call(unavailable).wait(10).call(ok);
    j.op("b", "POST", test::charge).at(100).call(ok).pushback(100);  // not retried: nothing to time
    const record::verdict v = test::run_check(check_table, test::declaring(j.run(), test::service_config(test::retry_method())));
    EXPECT_EQ(v.outcome(), record::verdict_outcome::insufficient_evidence);
    EXPECT_EQ(v.summary, "no pushback to judge: 1 attempts carried grpc-retry-pushback-ms, none negative or followed "
                         "by another attempt");
    EXPECT_THAT(test::run_check(check_table, j.run()).summary, HasSubstr("no gRPC service config"));
}

// Without a policy a client has no retry to schedule, and none may follow "do not retry" either.
TEST(grpc_pushback, a_method_without_a_policy_is_judged_too) {
    test::journal_builder j;
    j.op("c", "POST", "/other.Svc/Get").call(unavailable).pushback(-1).wait(10).call(ok);
    const record::verdict v = test::run_check(check_table, test::declaring(j.run(), test::service_config(test::retry_method())));
    EXPECT_FALSE(v.passed);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("which said do not retry"));
}

TEST(grpc_pushback, bad_config) {
    const auto errors = test::parse_errors(std::string(check_table) + "\ntolerance = 5\n");
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_THAT(errors[0].message, HasSubstr("tolerance: expected a duration such as \"250ms\", got an integer"));
}

}  // namespace
}  // namespace faultline::checks
