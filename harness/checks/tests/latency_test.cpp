#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "check_test_support.hpp"

namespace faultline::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Ten single-attempt operations taking 1, 2, …, 10 ms.
record::run_record ten_operations() {
    test::journal_builder j;
    for (int i = 1; i <= 10; ++i) j.op("op" + std::to_string(i)).at(i * 100).attempt(200, i);
    return j.run();
}

TEST(latency, a_slow_tail_fails_and_names_the_slowest_operations) {
    const record::verdict v = test::run_check("check = \"latency\"\np50 = \"5ms\"\np99 = \"8ms\"\n", ten_operations());
    EXPECT_FALSE(v.passed);
    EXPECT_EQ(v.summary, "10 operations (from the journal): p50 5.0ms (max 5.0ms), p99 10.0ms (max 8.0ms)");
    ASSERT_EQ(v.evidence.size(), 3u);
    EXPECT_EQ(v.evidence[0].detail, "p99 10.0ms > 8.0ms over 10 operations");
    EXPECT_EQ(v.evidence[1].operation, "op10");
    EXPECT_THAT(v.evidence[1].seqs, ElementsAre(10u));
    EXPECT_THAT(v.evidence[1].detail, HasSubstr("took 10.0ms, last #10"));
    EXPECT_EQ(v.evidence[2].operation, "op9");
}

TEST(latency, client_records_include_backoff_time) {
    test::journal_builder j;
    j.op("a").attempt(200);
    j.client(test::client_op("a", 0, 900, true));
    const record::verdict v = test::run_check("check = \"latency\"\np90 = \"500ms\"\n", j.run());
    EXPECT_FALSE(v.passed);
    EXPECT_THAT(v.summary, HasSubstr("1 operations (from client records): p90 900.0ms (max 500.0ms)"));
}

TEST(latency, within_limits_passes) {
    const record::verdict v = test::run_check("check = \"latency\"\np50 = \"5ms\"\np99 = \"10ms\"\n", ten_operations());
    EXPECT_TRUE(v.passed) << v.summary;
}

TEST(latency, bad_config) {
    auto errors = test::parse_errors("check = \"latency\"\n");
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_THAT(errors[0].message, HasSubstr("check \"latency\": set at least one of p50, p90, p99"));
    errors = test::parse_errors("check = \"latency\"\np50 = 5\n");
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_THAT(errors[0].message, HasSubstr("p50: expected a duration such as \"250ms\", got an integer"));
}

}  // namespace
}  // namespace faultline::checks
