#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "grpc_test_support.hpp"

namespace faultline::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using enum grpc_status;

constexpr std::string_view check_table = R"(check = "grpc_max_attempts")";

TEST(grpc_max_attempts, an_operation_over_max_attempts_is_named_with_its_attempts) {
    test::journal_builder j;
    j.op("a", "POST", test::charge).call(unavailable).wait(100).call(unavailable).wait(200).call(unavailable);
    j.op("b", "POST", test::charge).at(1000).call(unavailable).wait(100).call(ok);
    const record::verdict v = test::run_check(check_table, test::declaring(j.run(), test::service_config(test::retry_method(2))));
    EXPECT_FALSE(v.passed);
    EXPECT_EQ(v.summary, "1 of 2 operations made more attempts than their method's policy allows (most: 3, refused "
                         "streams not counted)");
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_EQ(v.evidence[0].operation, "a");
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(1u, 2u, 3u));
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("3 attempts > maxAttempts 2 of its retryPolicy:\n#1 POST /pkg.Svc/Charge"));
}

TEST(grpc_max_attempts, refused_streams_do_not_count) {
    test::journal_builder j;
    j.op("a", "POST", test::charge).refused_stream().refused_stream().call(unavailable).wait(100).call(ok);
    const record::verdict v = test::run_check(check_table, test::declaring(j.run(), test::service_config(test::retry_method(2))));
    EXPECT_TRUE(v.passed) << v.summary;
    EXPECT_EQ(v.summary, "0 of 1 operations made more attempts than their method's policy allows (most: 2, refused "
                         "streams not counted)");
}

TEST(grpc_max_attempts, max_attempts_is_at_most_five_and_hedging_counts_too) {
    record::grpc_method_config m = test::hedging_method();
    m.hedging->max_attempts = 9;  // as if built in code: the check still caps it at 5
    test::journal_builder j;
    j.op("a", "POST", test::charge);
    for (int i = 0; i < 6; ++i) j.call(unavailable).wait(100);
    const record::verdict v = test::run_check(check_table, test::declaring(j.run(), test::service_config(m)));
    EXPECT_FALSE(v.passed);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("6 attempts > maxAttempts 5 of its hedgingPolicy:"));
}

TEST(grpc_max_attempts, without_a_config_it_cannot_judge) {
    test::journal_builder j;
    j.op("a", "POST", "/other.Svc/Get").call(unavailable).wait(10).call(unavailable).wait(10).call(unavailable);
    const record::verdict none = test::run_check(check_table, j.run());
    EXPECT_EQ(none.outcome(), record::verdict_outcome::insufficient_evidence);
    EXPECT_THAT(none.summary, HasSubstr("no gRPC service config to judge against"));
}

// gRPC's default: a method without a retryPolicy or hedgingPolicy makes one attempt.
TEST(grpc_max_attempts, a_method_without_a_policy_is_held_to_one_attempt) {
    test::journal_builder j;
    j.op("a", "POST", "/other.Svc/Get").call(unavailable).wait(10).call(unavailable);
    j.op("b", "POST", "/other.Svc/Get").at(100).refused_stream().wait(10).call(ok);
    const record::verdict v = test::run_check(check_table, test::declaring(j.run(), test::service_config(test::retry_method(2))));
    EXPECT_FALSE(v.passed);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_EQ(v.evidence[0].operation, "a");
    EXPECT_THAT(v.evidence[0].detail,
                HasSubstr("2 attempts > 1: its method has no retryPolicy, and gRPC retries nothing without one:"));
}

TEST(grpc_max_attempts, bad_config) {
    const auto errors = test::parse_errors(std::string(check_table) + "\nmax = 3\n");
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_THAT(errors[0].message, HasSubstr("unknown key \"max\"; allowed: check, expect_failure, failures_only, service_config"));
}

}  // namespace
}  // namespace faultline::checks
