#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "check_test_support.hpp"

namespace faultline::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(amplification, every_operation_retrying_to_the_limit_fails_overall) {
    test::journal_builder j;
    for (int i = 0; i < 10; ++i) {
        j.op("op" + std::to_string(i)).at(i).attempt(503).attempt(503).attempt(503).attempt(503).attempt(503);
    }
    const record::verdict v = test::run_check(R"(check = "amplification")", j.run());
    EXPECT_FALSE(v.passed);
    ASSERT_GE(v.evidence.size(), 2u);
    EXPECT_EQ(v.evidence[0].operation, "");
    EXPECT_EQ(v.evidence[0].detail, "50 attempts for 10 operations = 5 per operation > 2");
    EXPECT_EQ(v.evidence[1].operation, "op0");
    EXPECT_THAT(v.evidence[1].seqs, ElementsAre(1u, 2u, 3u, 4u, 5u));
    EXPECT_THAT(v.summary, HasSubstr("50 attempts for 10 operations: 5 per operation (max 2)"));
}

TEST(amplification, a_burst_of_retries_breaks_the_peak_ratio) {
    test::journal_builder j;
    for (int i = 0; i < 10; ++i) j.op("quiet" + std::to_string(i)).at(i * 10).attempt(200);
    for (int i = 0; i < 10; ++i) {
        j.op("storm" + std::to_string(i)).at(1000 + i).attempt(503).wait(1).attempt(503).wait(1).attempt(200);
    }
    const record::verdict v = test::run_check(
        "check = \"amplification\"\nmax_ratio = 10\nmax_peak_ratio = 1.5\nwindow = \"100ms\"\n",
        j.run());
    EXPECT_FALSE(v.passed);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_EQ(v.evidence[0].operation, "");
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("30 attempts for 10 first attempts = 3 > 1.5"));
    EXPECT_EQ(v.evidence[0].seqs.size(), 20u);
    EXPECT_EQ(v.evidence[0].seqs[0], 11u);
}

// A window that ends at an early attempt starts before the run did: evidence says where it is within
// the run (from 0), and the ratio to three significant digits.
TEST(amplification, the_peak_window_is_shown_within_the_run_and_its_ratio_rounded) {
    test::journal_builder j;
    for (int i = 0; i < 7; ++i) {
        j.op("storm" + std::to_string(i)).at(i).attempt(503).wait(1).attempt(503).wait(1).attempt(200);
        if (i < 3) j.wait(1).attempt(200);
    }
    const record::verdict v = test::run_check(
        "check = \"amplification\"\nmax_ratio = 10\nmax_peak_ratio = 1.5\nmin_first_attempts = 7\nwindow = \"100ms\"\n",
        j.run());
    EXPECT_FALSE(v.passed);
    EXPECT_THAT(v.summary, HasSubstr("peak 3.43 in 0.0ms–"));
    EXPECT_THAT(v.summary, ::testing::Not(HasSubstr("-")));
}

TEST(amplification, single_attempts_pass) {
    test::journal_builder j;
    for (int i = 0; i < 20; ++i) j.op("op" + std::to_string(i)).at(i * 10).attempt(200);
    const record::verdict v = test::run_check(R"(check = "amplification")", j.run());
    EXPECT_TRUE(v.passed) << v.summary;
    EXPECT_THAT(v.summary, HasSubstr("1 per operation (max 2); peak 1 in"));
}

TEST(amplification, a_run_too_small_for_a_judged_window_is_insufficient_evidence) {
    test::journal_builder j;
    for (int i = 0; i < 5; ++i) j.op("op" + std::to_string(i)).at(i * 10).attempt(200);
    const record::verdict v = test::run_check(R"(check = "amplification")", j.run());
    EXPECT_EQ(v.outcome(), record::verdict_outcome::insufficient_evidence) << v.summary;
    EXPECT_THAT(v.summary, HasSubstr("no window judged: 5 attempts for 5 operations"));
    EXPECT_THAT(v.summary, HasSubstr("peak not judged (no 1000.0ms window with 10 first attempts)"));
}

TEST(amplification, an_overall_ratio_over_the_limit_fails_without_a_judged_window) {
    test::journal_builder j;
    j.op("a").attempt(503).attempt(503).attempt(503).attempt(200);
    const record::verdict v = test::run_check(R"(check = "amplification")", j.run());
    EXPECT_EQ(v.outcome(), record::verdict_outcome::fail) << v.summary;
}

// A merged history of two tiers: each operation's first attempt journaled by "edge", its three
// forwarded attempts by "backend".
record::run_record two_tiers() {
    test::journal_builder j;
    for (int i = 0; i < 10; ++i) j.op("op" + std::to_string(i)).at(i).attempt(503).attempt(503).attempt(503).attempt(503);
    record::run_record run = j.run();
    for (auto& r : run.journal) r.instance = r.attempt == 1 ? "edge" : "backend";
    return run;
}

TEST(amplification, with_an_instance_counts_only_the_attempts_that_instance_journaled) {
    const record::run_record run = two_tiers();
    const record::verdict over = test::run_check("check = \"amplification\"\ninstance = \"backend\"\nmax_ratio = 2.5\n", run);
    EXPECT_FALSE(over.passed);
    ASSERT_GE(over.evidence.size(), 2u);
    EXPECT_EQ(over.evidence[0].detail, "30 attempts at backend for 10 operations = 3 per operation > 2.5");
    EXPECT_EQ(over.evidence[1].operation, "op0");
    EXPECT_THAT(over.evidence[1].seqs, ElementsAre(2u, 3u, 4u));  // not the edge's seq 1

    const record::verdict within = test::run_check("check = \"amplification\"\ninstance = \"backend\"\nmax_ratio = 3\n", run);
    EXPECT_TRUE(within.passed) << within.summary;
    EXPECT_THAT(within.summary, HasSubstr("30 attempts at backend for 10 operations: 3 per operation (max 3); peak 3 in"));
    // The whole history holds 4 per operation.
    EXPECT_FALSE(test::run_check("check = \"amplification\"\nmax_ratio = 3\n", run).passed);
}

TEST(amplification, an_instance_that_journaled_nothing_is_insufficient_evidence) {
    const record::verdict v = test::run_check("check = \"amplification\"\ninstance = \"relay-z\"\n", two_tiers());
    EXPECT_EQ(v.outcome(), record::verdict_outcome::insufficient_evidence) << v.summary;
    EXPECT_EQ(v.summary, "no attempts journaled by instance relay-z: nothing to judge");
}

TEST(amplification, bad_config) {
    const auto errors = test::parse_errors("check = \"amplification\"\nmax_ratio = 0.5\nwindow = \"1 s\"\n");
    ASSERT_EQ(errors.size(), 2u);
    EXPECT_THAT(errors[0].message, HasSubstr("max_ratio: must be in [1, 1000000000], got 0.5"));
    EXPECT_THAT(errors[1].message, HasSubstr("window: bad duration \"1 s\""));
}

}  // namespace
}  // namespace faultline::checks
