#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "check_test_support.hpp"

namespace faultline::harness {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(no_retry_on_status, a_retry_after_404_is_named) {
    test::journal_builder j;
    j.op("a").attempt(404).fault("status").wait(3).attempt(200);
    j.op("b").at(1).attempt(503).wait(3).attempt(200);
    const verdict v = test::run_check(R"(check = "no_retry_on_status")", j.run());
    EXPECT_FALSE(v.passed);
    EXPECT_EQ(v.summary, "1 responses with a permanent status (400, 401, 403, 404, 422, 501); 1 operations retried after one");
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_EQ(v.evidence[0].operation, "a");
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(1u, 2u));
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("retried after a 404:\n#1 POST /charge on conn 1 at 0.0ms→1.0ms: 404 [fault status, rule r1]"));
}

TEST(no_retry_on_status, stopping_at_a_permanent_status_passes) {
    test::journal_builder j;
    j.op("a").attempt(404);
    j.op("b").at(1).attempt(503).wait(3).attempt(200);
    const verdict v = test::run_check(R"(check = "no_retry_on_status")", j.run());
    EXPECT_TRUE(v.passed);
}

TEST(no_retry_on_status, statuses_are_configurable) {
    test::journal_builder j;
    j.op("a").attempt(409).wait(3).attempt(200);
    EXPECT_TRUE(test::run_check(R"(check = "no_retry_on_status")", j.run()).passed);
    const verdict v = test::run_check("check = \"no_retry_on_status\"\nstatuses = [409]\n", j.run());
    EXPECT_FALSE(v.passed);
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(1u, 2u));
}

TEST(no_retry_on_status, bad_config) {
    auto errors = test::parse_errors("check = \"no_retry_on_status\"\nstatuses = [404, 99]\n");
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].to_string(),
              "scenario.toml:2:18: check \"no_retry_on_status\": statuses: every item must be an integer in [100, 599], got 99");
    errors = test::parse_errors("check = \"no_retry_on_status\"\nstatuses = \"404\"\n");
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_THAT(errors[0].message, HasSubstr("statuses: expected an array of integers, got a string"));
}

}  // namespace
}  // namespace faultline::harness
