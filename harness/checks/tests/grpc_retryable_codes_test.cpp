#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "grpc_test_support.hpp"

namespace faultline::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using enum grpc_status;

constexpr std::string_view check_table = R"(check = "grpc_retryable_codes")";

TEST(grpc_retryable_codes, a_retry_after_what_allows_none_is_named_with_the_status_and_the_codes) {
    test::journal_builder j;
    j.op("fatal", "POST", test::charge).call(unavailable).wait(100).call(invalid_argument).wait(100).call(ok);
    j.op("after_ok", "POST", test::charge).at(1000).call(ok).wait(100).call(ok);
    j.op("committed", "POST", test::charge).at(2000).lost(record::wire_outcome::truncated).grpc(unavailable).wait(100).call(ok);
    j.op("stopped", "POST", test::charge).at(3000).call(unavailable).pushback(-1).wait(100).call(ok);
    const record::verdict v = test::run_check(check_table, test::declaring(j.run(), test::service_config(test::retry_method())));
    EXPECT_FALSE(v.passed);
    EXPECT_EQ(v.summary, "4 operations made an attempt after one that allowed none (5 next attempts judged, 0 operations "
              "stopped where no retry was allowed)");
    ASSERT_EQ(v.evidence.size(), 4u);
    EXPECT_EQ(v.evidence[0].operation, "fatal");
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(2u, 3u));
    EXPECT_EQ(v.evidence[0].detail,
              "attempt #3 at 202.0ms followed #2 POST /pkg.Svc/Charge on conn 2 at 101.0ms→102.0ms: 200 grpc "
              "INVALID_ARGUMENT, which ended with INVALID_ARGUMENT, not in the method's retryableStatusCodes [UNAVAILABLE]");
    EXPECT_THAT(v.evidence[1].detail, HasSubstr("which ended OK: the call had succeeded"));
    EXPECT_THAT(v.evidence[2].detail,
                HasSubstr("which passed the commit point: response headers were sent, then the call failed (UNAVAILABLE)"));
    EXPECT_THAT(v.evidence[3].detail, HasSubstr("pushback -1ms, which sent pushback -1ms: do not retry"));
}

TEST(grpc_retryable_codes, retries_after_retryable_codes_and_refused_streams_pass) {
    test::journal_builder j;
    j.op("a", "POST", test::charge).call(unavailable).wait(100).call(unavailable).wait(200).call(ok);
    j.op("b", "POST", test::charge).at(1000).refused_stream().call(ok);
    j.op("c", "POST", test::charge).at(2000).call(ok);
    const record::verdict v = test::run_check(check_table, test::declaring(j.run(), test::service_config(test::retry_method())));
    EXPECT_TRUE(v.passed) << v.summary;
    EXPECT_EQ(v.summary, "0 operations made an attempt after one that allowed none (3 next attempts judged, 0 operations "
                         "stopped where no retry was allowed)");
}

TEST(grpc_retryable_codes, hedges_are_judged_by_the_attempts_that_had_ended) {
    test::journal_builder j;
    // #2 starts while #1 is in flight (a hedge); #3 starts after #1 ended with a fatal status.
    j.op("h", "POST", test::charge).call(internal, 150);
    j.op("h").at(100).call(unavailable, 10).at(200).call(ok);
    const record::verdict v = test::run_check(check_table, test::declaring(j.run(), test::service_config(test::hedging_method())));
    EXPECT_FALSE(v.passed);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(1u, 3u));
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("not in the method's nonFatalStatusCodes [UNAVAILABLE]"));
}

TEST(grpc_retryable_codes, without_a_service_config_it_cannot_judge) {
    test::journal_builder j;
    j.op("a", "POST", test::charge).call(ok).wait(10).call(ok);
    const record::verdict v = test::run_check(check_table, j.run());
    EXPECT_EQ(v.outcome(), record::verdict_outcome::insufficient_evidence);
    EXPECT_THAT(v.summary, HasSubstr("no gRPC service config to judge against"));
}

// gRPC's default: without a policy nothing is retried but what was never processed.
TEST(grpc_retryable_codes, a_method_without_a_policy_retries_only_streams_never_processed) {
    test::journal_builder j;
    j.op("a", "POST", "/other.Svc/Get").call(unavailable).wait(10).call(ok);
    j.op("b", "POST", "/other.Svc/Get").at(100).refused_stream().wait(10).call(ok);
    const record::verdict v = test::run_check(check_table, test::declaring(j.run(), test::service_config(test::retry_method())));
    EXPECT_FALSE(v.passed);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_EQ(v.evidence[0].operation, "a");
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("not in the method's retry policy: it has none"));
    EXPECT_EQ(v.summary, "1 operations made an attempt after one that allowed none (2 next attempts judged, 0 operations "
                         "stopped where no retry was allowed)");
}

TEST(grpc_retryable_codes, an_operation_without_any_grpc_status_is_not_judged) {
    test::journal_builder j;
    j.op("a", "POST", "/payments").attempt(503).wait(10).attempt(200);
    const record::verdict v = test::run_check(check_table, test::declaring(j.run(), test::service_config(test::retry_method())));
    EXPECT_EQ(v.outcome(), record::verdict_outcome::insufficient_evidence);
    EXPECT_EQ(v.summary, "no attempt of a gRPC operation followed another, and none stopped where a retry was not "
                         "allowed: nothing to judge; 1 operations not judged (no attempt of theirs carried a gRPC status)");
}

// A client that stopped at a status it may not retry obeyed: that is judged, and passes.
TEST(grpc_retryable_codes, stopping_at_a_status_that_allows_no_retry_is_judged_a_pass) {
    test::journal_builder j;
    j.op("a", "POST", test::charge).call(internal);
    j.op("b", "POST", test::charge).at(100).lost(record::wire_outcome::truncated).grpc(unavailable);
    const record::verdict v = test::run_check(check_table, test::declaring(j.run(), test::service_config(test::retry_method())));
    EXPECT_TRUE(v.passed) << v.summary;
    EXPECT_EQ(v.summary, "0 operations made an attempt after one that allowed none (0 next attempts judged, 2 operations "
                         "stopped where no retry was allowed)");
}

TEST(grpc_retryable_codes, a_next_attempt_after_an_attempt_without_a_status_is_not_judged) {
    test::journal_builder j;
    j.op("a", "POST", test::charge).lost(record::wire_outcome::closed).wait(10).call(ok);
    const record::verdict v = test::run_check(check_table, test::declaring(j.run(), test::service_config(test::retry_method())));
    EXPECT_EQ(v.outcome(), record::verdict_outcome::insufficient_evidence);
    EXPECT_THAT(v.summary, HasSubstr("; 1 not judged (the attempts before ended without a status)"));
}

TEST(grpc_retryable_codes, the_service_config_file_wins_over_the_declared_one) {
    const std::string path = ::testing::TempDir() + "grpc_retryable_codes_test.json";
    std::ofstream(path) << R"({"methodConfig":[{"name":[{"service":"pkg.Svc"}],"retryPolicy":{"maxAttempts":3,
        "initialBackoff":"0.1s","maxBackoff":"1s","backoffMultiplier":2,"retryableStatusCodes":["INTERNAL"]}}]})";
    test::journal_builder j;
    j.op("a", "POST", test::charge).call(internal).wait(100).call(ok);
    const std::string table = std::string(check_table) + "\nservice_config = \"" + path + "\"\n";
    // Declared: only UNAVAILABLE is retryable; the file says INTERNAL is.
    const record::verdict v = test::run_check(table, test::declaring(j.run(), test::service_config(test::retry_method())));
    EXPECT_TRUE(v.passed) << v.summary;
    EXPECT_FALSE(test::run_check(check_table, test::declaring(j.run(), test::service_config(test::retry_method()))).passed);
}

TEST(grpc_retryable_codes, bad_config) {
    auto errors = test::parse_errors(std::string(check_table) + "\nservice_config = \"/no/such/file.json\"\n");
    ASSERT_EQ(errors.size(), 2u);
    EXPECT_EQ(errors[0].to_string(),
              "scenario.toml:2:18: check \"grpc_retryable_codes\": service_config: \"/no/such/file.json\" is not a "
              "usable gRPC service config (1 error below)");
    EXPECT_EQ(errors[1].to_string(), "/no/such/file.json: cannot read the gRPC service config");

    const std::string path = ::testing::TempDir() + "grpc_retryable_codes_bad.json";
    std::ofstream(path) << R"({"methodConfig":[{"name":[{"service":"pkg.Svc"}],"retryPolicy":{"maxAttempts":1}}]})";
    errors = test::parse_errors(std::string(check_table) + "\nservice_config = \"" + path + "\"\n");
    ASSERT_EQ(errors.size(), 6u);
    EXPECT_EQ(errors[1].to_string(), path + ": methodConfig[0].retryPolicy.maxAttempts: must be an integer > 1 (values "
                                            "above 5 are treated as 5), got 1");

    errors = test::parse_errors(std::string(check_table) + "\ntolerance = \"1s\"\n");
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_THAT(errors[0].message, HasSubstr("unknown key \"tolerance\"; allowed: check, expect_failure, failures_only, service_config"));
}

}  // namespace
}  // namespace faultline::checks
