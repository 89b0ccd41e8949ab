// lateness_excuses: a finding is left out only when a spell of the server's own lateness around its
// stamp lasted at least as long as the finding is off; what is left out is counted and named.
#include <gtest/gtest.h>

#include <cstdint>

#include "../src/support.hpp"
#include "check_test_support.hpp"

namespace faultline::checks {
namespace {

constexpr std::int64_t ms = 1'000'000;

TEST(lateness_excuses, a_finding_no_larger_than_the_spell_around_its_stamp_is_excused_and_counted) {
    record::run_record run;
    test::add_server_late(run, 1000 * ms, 80 * ms);
    test::add_server_late(run, 1010 * ms, 120 * ms);
    const server_lateness spells{run};
    lateness_excuses excused{spells};

    EXPECT_TRUE(excused.excuse(1050 * ms, 1050 * ms, 120 * ms));       // the longer spell covers it, just
    EXPECT_FALSE(excused.excuse(1050 * ms, 1050 * ms, 120 * ms + 1));  // one ns more is a finding
    EXPECT_TRUE(excused.excuse(1140 * ms, 1140 * ms, 50e6));  // within one watch period after the spell
    EXPECT_FALSE(excused.excuse(2000 * ms, 2000 * ms, std::int64_t{1}));  // no spell there
    EXPECT_EQ(excused.count(), 2U);
    EXPECT_EQ(excused.clause("late", "around the stamp"),
              "; 2 not judged: late by no more than the server itself ran late around the stamp (up to 120.0ms, "
              "server_late)");
    EXPECT_EQ(excused.clause("they came too soon", "around the response", ", which its stamps may be"),
              "; 2 not judged: they came too soon by no more than the server itself ran late around the response "
              "(up to 120.0ms, server_late), which its stamps may be");
}

TEST(lateness_excuses, nothing_excused_adds_no_clause) {
    record::run_record run;
    const server_lateness spells{run};
    lateness_excuses excused{spells};
    EXPECT_FALSE(excused.excuse(0, 10 * ms, std::int64_t{1}));
    EXPECT_EQ(excused.count(), 0U);
    EXPECT_EQ(excused.clause("late", "around the stamp"), "");
}

}  // namespace
}  // namespace faultline::checks
