#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "check_test_support.hpp"

namespace faultline::harness {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(retry_after, a_retry_sooner_than_asked_is_named) {
    test::journal_builder j;
    j.op("a").attempt(503).retry_after(100).wait(10).attempt(200);
    const verdict v = test::run_check(R"(check = "retry_after")", j.run());
    EXPECT_FALSE(v.passed);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_EQ(v.evidence[0].operation, "a");
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(1u, 2u));
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("waited 10.0ms of the 100 ms Retry-After asked"));
    EXPECT_EQ(v.summary, "1 responses carried Retry-After; 1 retries came too soon, 0 went on past the deadline (tolerance 10.0ms)");
}

TEST(retry_after, a_retry_after_past_the_deadline_must_end_the_operation) {
    test::journal_builder j;
    j.op("b").attempt(503).deadline(200).retry_after(500).wait(500).attempt(200);
    const verdict v = test::run_check(R"(check = "retry_after")", j.run());
    EXPECT_FALSE(v.passed);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_EQ(v.evidence[0].operation, "b");
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(1u, 2u));
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("Retry-After 500 ms reaches past the deadline (199.0ms left), yet the operation went on"));
}

TEST(retry_after, a_client_that_waits_and_gives_up_in_time_passes) {
    test::journal_builder j;
    j.op("a").attempt(429).retry_after(100).wait(95).attempt(200);
    j.op("b").at(3).attempt(503).deadline(200).retry_after(500);
    const verdict v = test::run_check(R"(check = "retry_after")", j.run());
    EXPECT_TRUE(v.passed) << v.summary;
    EXPECT_THAT(v.summary, HasSubstr("2 responses carried Retry-After"));
}

// The rule that sends Retry-After never fired: the client was never asked to wait, which is no pass.
TEST(retry_after, no_response_with_retry_after_is_insufficient_evidence) {
    test::journal_builder j;
    j.op("a").attempt(503).wait(1).attempt(200);
    const verdict v = test::run_check(R"(check = "retry_after")", j.run());
    EXPECT_EQ(v.outcome(), verdict_outcome::insufficient_evidence);
    EXPECT_THAT(v.summary, HasSubstr("0 responses carried Retry-After"));
}

TEST(retry_after, bad_config) {
    const auto errors = test::parse_errors("check = \"retry_after\"\ntolerance = \"soon\"\nmax = 1\n");
    ASSERT_EQ(errors.size(), 2u);
    EXPECT_THAT(errors[0].message, HasSubstr("tolerance: bad duration \"soon\""));
    EXPECT_THAT(errors[1].message, HasSubstr("unknown key \"max\"; allowed: check, expect_failure, failures_only, tolerance"));
}

}  // namespace
}  // namespace faultline::harness
