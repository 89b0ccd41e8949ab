#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "check_test_support.hpp"
#include "faultline/checks/timing_control.hpp"

namespace faultline::checks {
namespace {

using ::testing::HasSubstr;

// 50 operations fail together at 0–1 ms; operation i retries after `gap(i)` ms.
template <class Gap>
record::run_record herd(Gap gap) {
    test::journal_builder j;
    for (int i = 0; i < 50; ++i) j.op("op" + std::to_string(i)).attempt(503).wait(gap(i)).attempt(200);
    return j.run();
}

TEST(desynchronized, lock_step_retries_fill_one_bucket) {
    const record::verdict v = test::run_check(R"(check = "desynchronized")", herd([](int) { return 100.0; }));
    EXPECT_EQ(v.outcome(), record::verdict_outcome::fail);
    ASSERT_EQ(v.evidence.size(), 1u);  // the half-offset bucket holding the same wave is not listed again
    EXPECT_EQ(v.evidence[0].operation, "");
    ASSERT_EQ(v.evidence[0].seqs.size(), 20u);
    EXPECT_EQ(v.evidence[0].seqs[0], 2u);
    EXPECT_EQ(v.evidence[0].seqs[19], 40u);
    EXPECT_THAT(v.evidence[0].detail,
                HasSubstr("retry 1: 50 retries in 101.0ms–111.0ms; 50 retries spread over a 100.0ms window (central "
                          "90 % of 101.0ms–101.0ms, at least 100.0ms) allow at most 20 per bucket (binomial, p = 2 × "
                          "10.0ms / window = 0.2)"));
    EXPECT_THAT(v.summary, HasSubstr("false-alarm rate 0.001 per run over 2 buckets"));
    EXPECT_THAT(v.summary, HasSubstr("retry 1: 50 of 50 (bound 20)"));
}

TEST(desynchronized, instant_lock_step_retries_fail_too) {
    const record::verdict v = test::run_check(R"(check = "desynchronized")", herd([](int) { return 0.0; }));
    EXPECT_EQ(v.outcome(), record::verdict_outcome::fail);
}

TEST(desynchronized, a_wave_across_a_bucket_edge_is_caught_by_the_offset_grid) {
    // Buckets start at the first retry (97 ms), so the wave at 103 and 107 ms straddles the edge at
    // 105 ms: 11 and 10 per bucket, within the bound. The grid offset by half a bucket holds all 20.
    test::journal_builder j;
    j.op("early").attempt(503).wait(96).attempt(200);
    for (int i = 0; i < 20; ++i) j.op("op" + std::to_string(i)).attempt(503).wait(i % 2 == 0 ? 102 : 106).attempt(200);
    const record::verdict v = test::run_check("check = \"desynchronized\"\nbucket = \"8ms\"\nk = 6\n", j.run());
    EXPECT_EQ(v.outcome(), record::verdict_outcome::fail);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("retry 1: 20 retries in 101.0ms–109.0ms"));
}

// A 1 s fixed delay spread over 24 ms by noise: a wave at the scale of the delay. The window is at
// least 0.2 × the median wait (1012 ms), not only min_window; judged against 100 ms alone it passes.
TEST(desynchronized, a_noisy_wave_is_judged_against_a_window_relative_to_the_wait) {
    const record::run_record run = herd([](int i) { return 1000.0 + 6.0 * (i % 5); });
    const record::verdict v = test::run_check(R"(check = "desynchronized")", run);
    EXPECT_EQ(v.outcome(), record::verdict_outcome::fail) << v.summary;
    ASSERT_FALSE(v.evidence.empty());
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("at least 202.4ms) allow at most"));
    const record::verdict absolute = test::run_check("check = \"desynchronized\"\nmin_relative_window = 0\n", run);
    EXPECT_EQ(absolute.outcome(), record::verdict_outcome::pass) << absolute.summary;
}

TEST(desynchronized, retries_spread_over_their_window_pass) {
    const record::verdict v = test::run_check(R"(check = "desynchronized")", herd([](int i) { return 2.0 * i; }));
    EXPECT_EQ(v.outcome(), record::verdict_outcome::pass) << v.summary;
}

TEST(desynchronized, a_narrow_additive_jitter_is_judged_over_where_the_retries_fall) {
    // 400 ms + U(0, 100 ms): the retries sit 400–500 ms after the failure. The window is where they
    // are, not the whole backoff, so the empty 400 ms before them do not make them look dense.
    const record::verdict v = test::run_check(R"(check = "desynchronized")", herd([](int i) { return 400.0 + 2.0 * i; }));
    EXPECT_EQ(v.outcome(), record::verdict_outcome::pass) << v.summary;
    EXPECT_THAT(v.summary, HasSubstr("retry 1: 5 of 50"));
}

// A herd the server let go in two groups 800 ms apart (a barrier that timed out before all had
// arrived): each group is judged alone. axios-retry's 200 ms + U(0, 40 ms) spreads each group; one
// window over both (830 ms) made each group's spread look like a wave.
TEST(desynchronized, a_herd_released_in_groups_is_judged_group_by_group) {
    const auto released_in_two = [](auto gap) {
        test::journal_builder j;
        for (int i = 0; i < 50; ++i) {
            j.op("op" + std::to_string(i)).at(i < 25 ? 0 : 800).attempt(503).wait(gap(i % 25)).attempt(200);
        }
        return j.run();
    };
    const record::verdict spread = test::run_check(R"(check = "desynchronized")",
                                           released_in_two([](int i) { return 200.0 + 40.0 * i / 25; }));
    EXPECT_EQ(spread.outcome(), record::verdict_outcome::pass) << spread.summary;
    EXPECT_THAT(spread.summary, HasSubstr("retry 1 (group 1 of 2): 7 of 25 (bound"));
    EXPECT_THAT(spread.summary, HasSubstr("the server released the herd in 2 groups (first failures more than "
                                          "100.0ms apart), each judged alone"));

    const record::verdict lock_step =
        test::run_check(R"(check = "desynchronized")", released_in_two([](int) { return 200.0; }));
    EXPECT_EQ(lock_step.outcome(), record::verdict_outcome::fail);
    ASSERT_EQ(lock_step.evidence.size(), 2u);
    EXPECT_THAT(lock_step.evidence[0].detail, HasSubstr("retry 1 (group 1 of 2): 25 retries in"));
    EXPECT_THAT(lock_step.evidence[1].detail, HasSubstr("retry 1 (group 2 of 2): 25 retries in"));

    // Groups too small to judge alone are left out, and say so.
    test::journal_builder small;
    for (int i = 0; i < 30; ++i) small.op("op" + std::to_string(i)).at(i < 15 ? 0 : 800).attempt(503).wait(200).attempt(200);
    const record::verdict v = test::run_check(R"(check = "desynchronized")", small.run());
    EXPECT_EQ(v.outcome(), record::verdict_outcome::insufficient_evidence);
    EXPECT_THAT(v.summary, HasSubstr("no retry index had 20 retries in one release group (most: 15)"));
    EXPECT_THAT(v.summary, HasSubstr("30 operations in groups too small to judge left out"));
}

// got's 2 s + U(0, 100 ms), 24 retries, nine of them inside 10 ms by chance (as in a real run): against
// a window of 0.2 × the wait (400 ms) that is a wave; with a control measured in the run, the window's
// floor is its noise (20 ms), the retries' own 100 ms spread is the window, and nine is within it.
TEST(desynchronized, a_control_replaces_the_relative_window) {
    test::journal_builder j;
    for (int i = 0; i < 24; ++i) {
        const double gap = i < 9 ? 2050.0 + i : 2000.0 + 100.0 * (i - 9) / 14;
        j.op("op" + std::to_string(i)).attempt(503).wait(gap).attempt(200);
    }
    const record::run_record run = j.run();
    constexpr std::string_view herd = "check = \"desynchronized\"\nmin_retries = 8\n";
    EXPECT_EQ(test::run_check(herd, run).outcome(), record::verdict_outcome::fail);
    timing_control control;
    control.delay = std::chrono::seconds{1};
    control.processes = 24;
    for (int i = 0; i < 24; ++i) control.gaps_ns.push_back(test::ms(1000 + 20.0 * i / 23.0));
    const record::verdict v = evaluate(test::parse_ok(herd), run, record::group_operations(run.journal), &control);
    EXPECT_EQ(v.outcome(), record::verdict_outcome::pass) << v.summary;
    EXPECT_THAT(v.summary, HasSubstr("the window's floor is the noise the control (24 processes"));
    // A lock-step wave still fails against the control.
    test::journal_builder wave;
    for (int i = 0; i < 24; ++i) wave.op("op" + std::to_string(i)).attempt(503).wait(2000).attempt(200);
    const record::run_record lock_step = wave.run();
    EXPECT_EQ(evaluate(test::parse_ok(herd), lock_step, record::group_operations(lock_step.journal), &control).outcome(),
              record::verdict_outcome::fail);
}

// Retries with no delay, spread over 139 ms by 24 processes queueing for the CPU: no wave at the
// server, but clients on many machines would send one. When every gap the client showed alone at that
// index was under a quarter of the herd's median, the spread is insufficient evidence, never a pass.
TEST(desynchronized, a_spread_the_herds_queueing_explains_is_insufficient_evidence) {
    test::journal_builder j;
    for (int i = 0; i < 24; ++i) j.op("op" + std::to_string(i)).attempt(503).wait(232.0 + 139.0 * i / 23.0).attempt(200);
    const record::run_record run = j.run();
    constexpr std::string_view herd = "check = \"desynchronized\"\nmin_retries = 8\n";
    timing_control control;
    control.delay = std::chrono::seconds{1};
    control.processes = 24;
    for (int i = 0; i < 24; ++i) control.gaps_ns.push_back(test::ms(1000 + 18.7 * i / 23.0));
    const auto judged = [&] { return evaluate(test::parse_ok(herd), run, record::group_operations(run.journal), &control); };
    EXPECT_EQ(judged().outcome(), record::verdict_outcome::pass);
    control.alone_gaps_ns = {{1, {test::ms(22), test::ms(28), test::ms(25)}}};
    const record::verdict v = judged();
    EXPECT_EQ(v.outcome(), record::verdict_outcome::insufficient_evidence) << v.summary;
    EXPECT_THAT(v.summary, HasSubstr("cannot tell a spread from the herd's own queueing: retry 1: alone, the client's 3 "
                                     "gaps at this index were all within 28.0ms, under 1/4 of the herd's median gap, "
                                     "301.5ms"));
    control.alone_gaps_ns = {{1, {test::ms(22), test::ms(28), test::ms(240)}}};
    EXPECT_EQ(judged().outcome(), record::verdict_outcome::pass);
}

TEST(desynchronized, too_few_retries_are_insufficient_evidence) {
    test::journal_builder j;
    for (int i = 0; i < 5; ++i) j.op("op" + std::to_string(i)).attempt(503).wait(100).attempt(200);
    const record::verdict v = test::run_check(R"(check = "desynchronized")", j.run());
    EXPECT_EQ(v.outcome(), record::verdict_outcome::insufficient_evidence);
    EXPECT_FALSE(v.passed);
    EXPECT_THAT(v.summary, HasSubstr("no retry index had 20 retries (most: 5)"));
}

TEST(desynchronized, after_and_before_restrict_the_retries) {
    // A lock-step wave at 101 ms, then operations failing from 1 s on and retrying spread out.
    test::journal_builder j;
    for (int i = 0; i < 50; ++i) j.op("wave" + std::to_string(i)).attempt(503).wait(100).attempt(200);
    for (int i = 0; i < 50; ++i) j.op("late" + std::to_string(i)).at(1000).attempt(503).wait(2.0 * i).attempt(200);
    const record::run_record run = j.run();
    EXPECT_EQ(test::run_check(R"(check = "desynchronized")", run).outcome(), record::verdict_outcome::fail);
    EXPECT_EQ(test::run_check("check = \"desynchronized\"\nafter = \"500ms\"\n", run).outcome(),
              record::verdict_outcome::pass);
    EXPECT_EQ(test::run_check("check = \"desynchronized\"\nbefore = \"500ms\"\n", run).outcome(),
              record::verdict_outcome::fail);
}

TEST(desynchronized, bad_config) {
    auto errors = test::parse_errors(
        "check = \"desynchronized\"\nbucket = \"0s\"\nk = 0.5\nfalse_alarm_rate = 0\nmin_retries = 1\n");
    ASSERT_EQ(errors.size(), 4u);
    EXPECT_THAT(errors[0].message, HasSubstr("bucket: must be longer than 0, got \"0s\""));
    EXPECT_THAT(errors[1].message, HasSubstr("k: must be in [1, 1000000], got 0.5"));
    EXPECT_THAT(errors[2].message, HasSubstr("min_retries: must be in [2, 1000000000], got 1"));
    EXPECT_THAT(errors[3].message, HasSubstr("false_alarm_rate: must be in (0, 0.5], got 0"));
    errors = test::parse_errors("check = \"desynchronized\"\nbucket = \"50ms\"\n");
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_THAT(errors[0].message,
                HasSubstr("min_window: must be longer than k × bucket (2 × 50.0ms), or no bucket can ever hold too many "
                          "retries"));
    errors = test::parse_errors("check = \"desynchronized\"\nmin_relative_window = 1.5\n");
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_THAT(errors[0].message, HasSubstr("min_relative_window: must be in [0, 1], got 1.5"));
}

}  // namespace
}  // namespace faultline::checks
