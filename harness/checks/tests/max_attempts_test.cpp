#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "check_test_support.hpp"

namespace faultline::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(max_attempts, an_operation_over_the_limit_is_named_with_its_attempts) {
    test::journal_builder j;
    j.op("a").attempt(503).wait(10).attempt(503).wait(10).attempt(503).wait(10).attempt(200);
    j.op("b").at(1).attempt(200);
    const record::verdict v = test::run_check("check = \"max_attempts\"\nmax = 3\n", j.run());
    EXPECT_FALSE(v.passed);
    EXPECT_EQ(v.summary, "1 of 2 operations made more than 3 attempts (most: 4)");
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_EQ(v.evidence[0].operation, "a");
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(1u, 2u, 3u, 4u));
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("4 attempts on the wire > max 3"));
}

TEST(max_attempts, counts_attempts_the_server_never_saw_from_client_records) {
    test::journal_builder j;
    j.op("c").attempt(200);
    j.client(test::client_op("c", 0, 50, true, 5));
    const record::verdict v = test::run_check("check = \"max_attempts\"\nmax = 3\n", j.run());
    EXPECT_FALSE(v.passed);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_EQ(v.evidence[0].operation, "c");
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("1 attempts on the wire, 5 by the client's count > max 3"));
}

TEST(max_attempts, a_client_within_the_limit_passes) {
    test::journal_builder j;
    j.op("a").attempt(503).wait(10).attempt(503).wait(10).attempt(200);
    const record::verdict v = test::run_check("check = \"max_attempts\"\nmax = 3\n", j.run());
    EXPECT_TRUE(v.passed);
    EXPECT_TRUE(v.evidence.empty());
}

TEST(max_attempts, without_max_the_client_is_held_to_its_declared_limit) {
    test::journal_builder j;
    j.op("a").attempt(503).wait(10).attempt(503).wait(10).attempt(200);
    j.op("b").at(1).attempt(503).wait(10).attempt(200);
    record::run_record run = j.run();
    run.declared.max_attempts = 2;
    const record::verdict v = test::run_check(R"(check = "max_attempts")", run);
    EXPECT_FALSE(v.passed);
    EXPECT_EQ(v.summary, "1 of 2 operations made more than 2 attempts (most: 3; the client's declared max_attempts)");
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_EQ(v.evidence[0].operation, "a");
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(1u, 2u, 3u));
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("3 attempts on the wire > the declared max_attempts 2:"));

    // A client that keeps to what it declared passes.
    run.declared.max_attempts = 3;
    const record::verdict kept = test::run_check(R"(check = "max_attempts")", run);
    EXPECT_TRUE(kept.passed) << kept.summary;
    EXPECT_EQ(kept.summary, "0 of 2 operations made more than 3 attempts (most: 3; the client's declared max_attempts)");
}

TEST(max_attempts, the_scenarios_max_wins_over_the_declared_one) {
    test::journal_builder j;
    j.op("a").attempt(503).wait(10).attempt(503).wait(10).attempt(200);
    record::run_record run = j.run();
    run.declared.max_attempts = 5;
    const record::verdict v = test::run_check("check = \"max_attempts\"\nmax = 2\n", run);
    EXPECT_FALSE(v.passed);
    EXPECT_EQ(v.summary, "1 of 1 operations made more than 2 attempts (most: 3)");
}

TEST(max_attempts, with_neither_the_limit_is_three) {
    test::journal_builder j;
    j.op("a").attempt(503).wait(10).attempt(503).wait(10).attempt(503).wait(10).attempt(200);
    const record::verdict v = test::run_check(R"(check = "max_attempts")", j.run());
    EXPECT_FALSE(v.passed);
    EXPECT_EQ(v.summary, "1 of 1 operations made more than 3 attempts (most: 4)");
}

TEST(max_attempts, bad_config) {
    auto errors = test::parse_errors("check = \"max_attempts\"\nmax = 0\n");
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].to_string(), "scenario.toml:2:7: check \"max_attempts\": max: must be in [1, 1000000], got 0");
    errors = test::parse_errors("check = \"max_attempts\"\nmax = \"3\"\n");
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_THAT(errors[0].message, HasSubstr("max: expected an integer, got a string"));
}

}  // namespace
}  // namespace faultline::checks
