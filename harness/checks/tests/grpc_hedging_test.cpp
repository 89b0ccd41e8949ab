#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "grpc_test_support.hpp"

namespace faultline::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using enum grpc_status;

constexpr std::string_view check_table = R"(check = "grpc_hedging")";

TEST(grpc_hedging, an_early_hedge_a_late_cancel_and_a_hedge_after_the_success_are_named) {
    test::journal_builder j;
    j.op("h", "POST", test::charge).lost(record::wire_outcome::client_gone, 300);  // #1 0→300: cancelled late
    j.op("h").at(30).call(ok, 100);                                          // #2 30→130: 30 ms after #1
    j.op("h").at(150).lost(record::wire_outcome::client_gone, 5);                   // #3 after the success
    const record::verdict v = test::run_check(check_table, test::declaring(j.run(), test::service_config(test::hedging_method())));
    EXPECT_FALSE(v.passed);
    EXPECT_EQ(v.summary, "3 hedging violations in 1 hedged operations (tolerance 50.0ms, the machine's noise; grace "
                         "20.0ms for cancelling)");
    ASSERT_EQ(v.evidence.size(), 3u);
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(1u, 2u));
    EXPECT_EQ(v.evidence[0].detail, "hedge #2 at 30.0ms started 30.0ms after #1 < hedgingDelay 100.0ms − tolerance "
                                    "50.0ms, and no attempt had ended with one of its nonFatalStatusCodes [UNAVAILABLE]");
    EXPECT_THAT(v.evidence[1].seqs, ElementsAre(2u, 1u));
    EXPECT_THAT(v.evidence[1].detail, HasSubstr("was still in flight 170.0ms after the success #2"));
    EXPECT_THAT(v.evidence[2].seqs, ElementsAre(2u, 3u));
    EXPECT_THAT(v.evidence[2].detail, HasSubstr("attempt #3 POST /pkg.Svc/Charge on conn 3 at 150.0ms→155.0ms: "
                                                "client_gone started after the success #2"));
}

TEST(grpc_hedging, more_attempts_in_flight_than_max_attempts) {
    test::journal_builder j;
    j.op("h", "POST", test::charge).lost(record::wire_outcome::client_gone, 250);
    j.op("h").at(100).lost(record::wire_outcome::client_gone, 150);
    j.op("h").at(200).call(internal, 50);
    const record::verdict v = test::run_check(check_table, test::declaring(j.run(), test::service_config(test::hedging_method(2))));
    EXPECT_FALSE(v.passed);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(1u, 2u, 3u));
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("3 attempts in flight at 200.0ms > maxAttempts 2:"));
}

TEST(grpc_hedging, a_client_that_hedges_on_time_and_cancels_at_the_success_passes) {
    test::journal_builder j;
    j.op("h", "POST", test::charge).lost(record::wire_outcome::client_gone, 250);  // cancelled at the success
    j.op("h").at(100).call(ok, 150);                                         // OK at 250
    j.op("h").at(200).lost(record::wire_outcome::client_gone, 55);
    // A non-fatal status sends the next hedge at once.
    j.op("g", "POST", test::charge).at(1000).call(unavailable, 20);
    j.op("g").at(1020).call(ok, 10);
    const record::verdict v = test::run_check(check_table, test::declaring(j.run(), test::service_config(test::hedging_method())));
    EXPECT_TRUE(v.passed) << v.summary;
    EXPECT_EQ(v.summary, "0 hedging violations in 2 hedged operations (tolerance 50.0ms, the machine's noise; grace "
                         "20.0ms for cancelling)");
}

TEST(grpc_hedging, nothing_to_judge_without_a_hedge_or_a_hedging_policy) {
    test::journal_builder j;
    j.op("a", "POST", test::charge).call(ok);
    const record::verdict unhedged = test::run_check(check_table, test::declaring(j.run(), test::service_config(test::hedging_method())));
    EXPECT_EQ(unhedged.outcome(), record::verdict_outcome::insufficient_evidence);
    EXPECT_EQ(unhedged.summary, "no hedge in 1 operations with a hedgingPolicy: nothing to judge");
    const record::verdict retrying = test::run_check(check_table, test::declaring(j.run(), test::service_config(test::retry_method())));
    EXPECT_EQ(retrying.summary, "no operation of a method with a hedgingPolicy: nothing to judge; 1 operations not "
                                "judged (their method has no hedgingPolicy)");
    EXPECT_THAT(test::run_check(check_table, j.run()).summary, HasSubstr("no gRPC service config"));
}

TEST(grpc_hedging, bad_config) {
    const auto errors = test::parse_errors(std::string(check_table) + "\ngrace = \"-1ms\"\ndelay = \"1s\"\n");
    ASSERT_EQ(errors.size(), 2u);
    EXPECT_THAT(errors[0].message, HasSubstr("grace: bad duration \"-1ms\""));
    EXPECT_THAT(errors[1].message,
                HasSubstr("unknown key \"delay\"; allowed: check, expect_failure, failures_only, grace, service_config, tolerance"));
}

}  // namespace
}  // namespace faultline::checks
