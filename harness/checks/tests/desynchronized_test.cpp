#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "check_test_support.hpp"

namespace faultline::harness {
namespace {

using ::testing::HasSubstr;

// 50 operations fail together at 0–1 ms; operation i retries after `gap(i)` ms.
template <class Gap>
run_record herd(Gap gap) {
    test::journal_builder j;
    for (int i = 0; i < 50; ++i) j.op("op" + std::to_string(i)).attempt(503).wait(gap(i)).attempt(200);
    return j.run();
}

TEST(desynchronized, lock_step_retries_fill_one_bucket) {
    const verdict v = test::run_check(R"(check = "desynchronized")", herd([](int) { return 100.0; }));
    EXPECT_FALSE(v.passed);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_EQ(v.evidence[0].operation, "");
    ASSERT_EQ(v.evidence[0].seqs.size(), 20u);
    EXPECT_EQ(v.evidence[0].seqs[0], 2u);
    EXPECT_EQ(v.evidence[0].seqs[19], 40u);
    EXPECT_THAT(v.evidence[0].detail,
                HasSubstr("retry 1: 50 retries in 101.0ms–111.0ms; a uniform spread of 50 retries over the 100.0ms "
                          "window from 1.0ms expects 5 per bucket, limit 15"));
    EXPECT_THAT(v.summary, HasSubstr("retry 1: 50 of 50 (limit 15)"));
}

TEST(desynchronized, instant_lock_step_retries_fail_too) {
    const verdict v = test::run_check(R"(check = "desynchronized")", herd([](int) { return 0.0; }));
    EXPECT_FALSE(v.passed);
}

TEST(desynchronized, jittered_retries_pass) {
    const verdict v = test::run_check(R"(check = "desynchronized")", herd([](int i) { return 2.0 * i; }));
    EXPECT_TRUE(v.passed) << v.summary;
}

TEST(desynchronized, too_few_retries_are_not_judged) {
    test::journal_builder j;
    for (int i = 0; i < 5; ++i) j.op("op" + std::to_string(i)).attempt(503).wait(100).attempt(200);
    const verdict v = test::run_check(R"(check = "desynchronized")", j.run());
    EXPECT_TRUE(v.passed);
    EXPECT_THAT(v.summary, HasSubstr("no retry index had 20 retries"));
}

TEST(desynchronized, after_and_before_restrict_the_retries) {
    const verdict v = test::run_check("check = \"desynchronized\"\nafter = \"200ms\"\n", herd([](int) { return 100.0; }));
    EXPECT_TRUE(v.passed);
}

TEST(desynchronized, bad_config) {
    const auto errors = test::parse_errors("check = \"desynchronized\"\nbucket = \"0s\"\nk = 0.5\n");
    ASSERT_EQ(errors.size(), 2u);
    EXPECT_THAT(errors[0].message, HasSubstr("bucket: must be longer than 0, got \"0s\""));
    EXPECT_THAT(errors[1].message, HasSubstr("k: must be in [1, 1000000], got 0.5"));
}

}  // namespace
}  // namespace faultline::harness
