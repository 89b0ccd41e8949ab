#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "check_test_support.hpp"

namespace faultline::harness {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(deadline, an_attempt_after_the_header_deadline_is_named) {
    test::journal_builder j;
    // The first attempt says 100 ms are left; the client sleeps 200 ms and tries again anyway.
    j.op("a").attempt(503).deadline(100).wait(200).attempt(200).deadline(1);
    const verdict v = test::run_check(R"(check = "deadline")", j.run());
    EXPECT_FALSE(v.passed);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_EQ(v.evidence[0].operation, "a");
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(2u));
    EXPECT_THAT(v.evidence[0].detail,
                HasSubstr("attempt started 101.0ms after the deadline 100.0ms: #2 POST /charge on conn 2 at 201.0ms→202.0ms: 200"));
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("deadline header 1 ms exceeds the -101.0ms left"));
    EXPECT_THAT(v.summary, HasSubstr("1 attempts started late, 0 clients finished late, 1 bad deadline headers"));
}

TEST(deadline, header_zero_and_growing_header_are_flagged) {
    test::journal_builder j;
    j.op("b").attempt(503).deadline(0);
    j.op("c").at(10).attempt(503).deadline(100).wait(10).attempt(200).deadline(150);
    const verdict v = test::run_check(R"(check = "deadline")", j.run());
    EXPECT_FALSE(v.passed);
    ASSERT_EQ(v.evidence.size(), 2u);
    EXPECT_EQ(v.evidence[0].operation, "b");
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(1u));
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("deadline header 0 ms (must be ≥ 1)"));
    EXPECT_EQ(v.evidence[1].operation, "c");
    EXPECT_THAT(v.evidence[1].seqs, ElementsAre(3u));
    EXPECT_THAT(v.evidence[1].detail, HasSubstr("deadline header 150 ms exceeds the 89.0ms left"));
}

TEST(deadline, client_records_give_the_deadline_and_the_finish_time) {
    test::journal_builder j;
    j.op("d").attempt(503).wait(30).attempt(503);
    j.client(test::client_op("d", 0, 120, false, 2, 50.0));
    const verdict v = test::run_check(R"(check = "deadline")", j.run());
    EXPECT_FALSE(v.passed);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_EQ(v.evidence[0].operation, "d");
    EXPECT_TRUE(v.evidence[0].seqs.empty());
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("client finished at 120.0ms, 70.0ms after the deadline 50.0ms"));
}

TEST(deadline, a_client_that_honours_its_deadline_passes) {
    test::journal_builder j;
    j.op("a").attempt(503).deadline(300).wait(50).attempt(200).deadline(249);
    j.op("d").at(5).attempt(503).wait(30).attempt(200);
    j.client(test::client_op("d", 5, 40, true, 2, 60.0));
    const verdict v = test::run_check(R"(check = "deadline")", j.run());
    EXPECT_TRUE(v.passed) << v.summary;
    EXPECT_THAT(v.summary, HasSubstr("2 of 2 operations had a deadline"));
}

TEST(deadline, require_header_flags_attempts_without_one) {
    test::journal_builder j;
    j.op("a").attempt(200);
    const verdict v = test::run_check("check = \"deadline\"\nrequire_header = true\n", j.run());
    EXPECT_FALSE(v.passed);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("no deadline header"));
}

TEST(deadline, bad_config) {
    const auto errors = test::parse_errors("check = \"deadline\"\ntolerance = 5\nrequire_header = 1\n");
    ASSERT_EQ(errors.size(), 2u);
    EXPECT_THAT(errors[0].message, HasSubstr("tolerance: expected a duration such as \"250ms\", got an integer"));
    EXPECT_THAT(errors[1].message, HasSubstr("require_header: expected true or false, got an integer"));
}

}  // namespace
}  // namespace faultline::harness
