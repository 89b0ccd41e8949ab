#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "check_test_support.hpp"
#include "faultline/checks/timing_control.hpp"

namespace faultline::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// `operations` operations, each with `retries` retries; gap(i, k) ms before operation i's k-th retry.
template <class Gap>
record::run_record retries(int operations, int retries, Gap gap) {
    test::journal_builder j;
    for (int i = 0; i < operations; ++i) {
        j.op("op" + std::to_string(i));
        for (int k = 1; k <= retries; ++k) j.attempt(503).wait(gap(i, k));
        j.attempt(200);
    }
    return j.run();
}

TEST(jittered, one_delay_for_every_operation_fails_with_the_spread) {
    const record::verdict v = test::run_check(R"(check = "jittered")", retries(10, 1, [](int, int) { return 100.0; }));
    EXPECT_EQ(v.outcome(), record::verdict_outcome::fail);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_EQ(v.evidence[0].operation, "");
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(2u, 4u, 6u, 8u, 10u, 12u, 14u, 16u));
    EXPECT_THAT(v.evidence[0].detail,
                HasSubstr("retry 1: 10 gaps, min/median/max 100.0ms/100.0ms/100.0ms, the densest 5.0ms holds 10 "
                          "(100.0ms–105.0ms), more than half; the width is max(noise floor 5.0ms, 0.001 × median)"));
    EXPECT_THAT(v.evidence[0].detail, Not(HasSubstr("too narrow to tell from noise")));
}

// Full jitter over 10 ms at a 5 ms noise floor (bench/journal_check_bench's client): half the gaps
// fall in one window by chance, but no half-window holds a majority: they fill the window evenly, as
// jitter twice the window wide does. That is too narrow to tell from noise, not a failure.
TEST(jittered, gaps_filling_the_window_evenly_are_insufficient_evidence_not_a_failure) {
    const record::verdict v = test::run_check(R"(check = "jittered")", retries(21, 1, [](int i, int) { return 0.5 * i; }));
    EXPECT_EQ(v.outcome(), record::verdict_outcome::insufficient_evidence);
    EXPECT_TRUE(v.evidence.empty());
    EXPECT_THAT(v.summary, HasSubstr("the densest 5.0ms holds 11"));
    EXPECT_THAT(v.summary, HasSubstr("cannot tell from timing noise: more than half the gaps lie within the noise "
                                     "window, but no 2.5ms holds more than 6: they fill it evenly"));
    EXPECT_THAT(v.summary, HasSubstr("judged against noise_floor 5.0ms (no control measured in this run)"));
}

TEST(jittered, noise_below_the_floor_is_not_jitter) {
    const record::verdict v =
        test::run_check(R"(check = "jittered")", retries(10, 1, [](int i, int) { return 200.0 + 0.4 * i; }));
    EXPECT_EQ(v.outcome(), record::verdict_outcome::fail);
    EXPECT_THAT(v.summary, HasSubstr("the densest 5.0ms holds 10"));
}

TEST(jittered, a_stall_that_shifts_a_minority_of_the_retries_is_not_jitter) {
    // 6 retries on time, 4 held up 20 ms by a scheduler stall: the interquartile range would be 20 ms.
    const record::verdict v =
        test::run_check(R"(check = "jittered")", retries(10, 1, [](int i, int) { return i < 6 ? 100.0 : 120.0; }));
    EXPECT_EQ(v.outcome(), record::verdict_outcome::fail);
    EXPECT_THAT(v.summary, HasSubstr("the densest 5.0ms holds 6"));
}

TEST(jittered, the_relative_threshold_applies_to_long_delays) {
    const auto gap = [](int i, int) { return 10'000.0 + 4.0 * i; };  // 36 ms of spread on 10 s
    EXPECT_EQ(test::run_check(R"(check = "jittered")", retries(10, 1, gap)).outcome(), record::verdict_outcome::pass);
    const record::verdict v = test::run_check("check = \"jittered\"\nmin_relative_spread = 0.01\n", retries(10, 1, gap));
    EXPECT_EQ(v.outcome(), record::verdict_outcome::fail);
    EXPECT_THAT(v.summary, HasSubstr("the densest 100.2ms holds 10"));
}

// With a control measured in the run its noise is the window, not a share of the delay: got's
// +U(0, 100 ms) on a 4 s backoff (2.5 %) is jitter when the control's gaps spread over 17 ms.
TEST(jittered, a_control_replaces_the_relative_threshold) {
    timing_control control = test::evenly_spread_control(1000, 17.0);
    const record::run_record run = retries(24, 1, [](int i, int) { return 4000.0 + 100.0 * i / 23.0; });
    constexpr std::string_view herd = "check = \"jittered\"\nnoise_floor = \"15ms\"\nmin_relative_spread = 0.03\n";
    EXPECT_EQ(test::run_check(herd, run).outcome(), record::verdict_outcome::fail);
    const record::verdict v = evaluate(test::parse_ok(herd), run, record::group_operations(run.journal), &control);
    EXPECT_EQ(v.outcome(), record::verdict_outcome::pass) << v.summary;
    EXPECT_THAT(v.summary, HasSubstr("the densest 15.3ms holds 4; judged against the control"));
}

// The naive Node.js loop under two CPU hogs: in its herd of 24, retries with no delay came 232-371 ms
// after their 503s (the processes queueing for the CPU), far wider than a light control's 18.7 ms;
// alone it retried after 22-28 ms. Its herd's spread is queueing, not jitter: insufficient, never a
// pass. A client that alone once waited as long as in the herd (a real delay) passes, and a wave
// still fails.
TEST(jittered, a_spread_the_herds_queueing_explains_is_insufficient_evidence) {
    timing_control control = test::evenly_spread_control(1000, 18.7);
    constexpr std::string_view herd = "check = \"jittered\"\nnoise_floor = \"20ms\"\nmin_gap = \"20ms\"\n";
    const record::run_record queued = retries(24, 1, [](int i, int) { return 232.0 + 139.0 * i / 23.0; });
    const auto judged = [&](const record::run_record& run) {
        return evaluate(test::parse_ok(herd), run, record::group_operations(run.journal), &control);
    };
    EXPECT_EQ(judged(queued).outcome(), record::verdict_outcome::pass);

    control.alone_gaps_ns = {{1, {test::ms(22), test::ms(28), test::ms(25)}}};
    const record::verdict v = judged(queued);
    EXPECT_EQ(v.outcome(), record::verdict_outcome::insufficient_evidence) << v.summary;
    EXPECT_THAT(v.summary, HasSubstr("cannot tell from timing noise: alone, the client's 3 gaps at this index were "
                                     "all within 28.0ms, under 1/4 of the herd's median gap, 301.5ms: the herd's "
                                     "spread is its processes queueing for the CPU, not a delay the client chose at "
                                     "retry 1"));
    EXPECT_TRUE(v.evidence.empty());

    // Alone it once waited as long as in the herd (a real delay): the spread is its own.
    control.alone_gaps_ns = {{1, {test::ms(22), test::ms(28), test::ms(240)}}};
    EXPECT_EQ(judged(queued).outcome(), record::verdict_outcome::pass);
    // Two lone gaps are too few to say what the client's pace is; gaps at another index say nothing here.
    control.alone_gaps_ns = {{1, {test::ms(22), test::ms(28)}}, {2, {test::ms(1), test::ms(2), test::ms(3)}}};
    EXPECT_EQ(judged(queued).outcome(), record::verdict_outcome::pass);
    // Queueing explains a spread, never a wave.
    control.alone_gaps_ns = {{1, {test::ms(22), test::ms(28), test::ms(25)}}};
    EXPECT_EQ(judged(retries(24, 1, [](int, int) { return 300.0; })).outcome(), record::verdict_outcome::fail);
}

// fetch-retry's fixed 1 s under two CPU hogs: its herd of 24 Node.js processes reached the server
// 1006-1171 ms after the resets, the densest 15 ms holding 11, while the light control saw 14.9 ms —
// a pass. Alone (four lone probes) it waited 1001-1008 ms at every index: its delay is fixed, and the
// herd's spread is queueing. A pace that varies at one index, or is known at one index only, says
// nothing.
TEST(jittered, a_client_that_alone_waits_the_same_at_every_index_is_not_jittered) {
    timing_control control = test::evenly_spread_control(1000, 14.9);
    constexpr std::string_view herd = "check = \"jittered\"\nnoise_floor = \"15ms\"\nmin_gap = \"20ms\"\n";
    const record::run_record queued = retries(24, 3, [](int i, int) { return i < 11 ? 1006.0 + i : 1020.0 + 150.0 * i / 23.0; });
    const auto judged = [&](const record::run_record& run) {
        return evaluate(test::parse_ok(herd), run, record::group_operations(run.journal), &control);
    };
    EXPECT_EQ(judged(queued).outcome(), record::verdict_outcome::pass);

    const auto four = [](double from) {
        return std::vector<std::int64_t>{test::ms(from), test::ms(from + 7), test::ms(from + 2), test::ms(from + 4)};
    };
    control.alone_gaps_ns = {{1, four(1001)}, {2, four(1000)}, {3, four(1002)}};
    const record::verdict v = judged(queued);
    EXPECT_EQ(v.outcome(), record::verdict_outcome::fail) << v.summary;
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_THAT(v.evidence[0].detail,
                HasSubstr("alone, the client waited the same at every retry index (retry 1: 4 gaps in 1001.0ms–1008.0ms; "
                          "retry 2: 4 gaps in 1000.0ms–1007.0ms; retry 3: 4 gaps in 1002.0ms–1009.0ms), each within "
                          "the noise floor 15.0ms: its delay is fixed, not jittered"));

    // One index alone spread wider than the floor (got's +U(0, 100 ms)): the pace is not fixed.
    control.alone_gaps_ns = {{1, four(1001)}, {2, {test::ms(2010), test::ms(2090), test::ms(2040)}}, {3, four(1002)}};
    EXPECT_EQ(judged(queued).outcome(), record::verdict_outcome::pass);
    // One index with enough gaps is too little to call the delay fixed; indexes with two gaps do not count.
    control.alone_gaps_ns = {{1, four(1001)}, {2, {test::ms(1000), test::ms(1001)}}};
    EXPECT_EQ(judged(queued).outcome(), record::verdict_outcome::pass);
    // Under load the herd cannot tell; the fixed pace still decides.
    timing_control loaded = test::evenly_spread_control(1000, 200.0);
    loaded.alone_gaps_ns = {{1, four(1001)}, {2, four(1000)}};
    const record::verdict under_load =
        evaluate(test::parse_ok(herd), queued, record::group_operations(queued.journal), &loaded);
    EXPECT_EQ(under_load.outcome(), record::verdict_outcome::fail) << under_load.summary;
}

// One operation alone, retrying with every gap under min_gap: it never waits, so it has no delay to
// jitter, though one operation says nothing about spread.
TEST(jittered, an_operation_that_never_waits_fails_however_few_operations_ran) {
    constexpr std::string_view solo = "check = \"jittered\"\nmin_gap = \"20ms\"\n";
    const record::verdict v = test::run_check(solo, retries(1, 3, [](int, int k) { return 8.0 + k; }));
    EXPECT_EQ(v.outcome(), record::verdict_outcome::fail);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(2u, 3u, 4u));
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("1 operation retried back to back: all 3 of their gaps under min_gap "
                                                "20.0ms (the longest 11.0ms): the client does not wait"));
    // One gap that waited, or only two gaps, is not enough to say so: too few to judge.
    EXPECT_EQ(test::run_check(solo, retries(1, 3, [](int, int k) { return k == 3 ? 150.0 : 9.0; })).outcome(),
              record::verdict_outcome::insufficient_evidence);
    EXPECT_EQ(test::run_check(solo, retries(1, 2, [](int, int) { return 9.0; })).outcome(),
              record::verdict_outcome::insufficient_evidence);
}

TEST(jittered, spread_gaps_pass_per_retry_index) {
    const record::verdict v = test::run_check(R"(check = "jittered")",
                                      retries(10, 2, [](int i, int k) { return 100.0 * k + 10.0 * i; }));
    EXPECT_EQ(v.outcome(), record::verdict_outcome::pass) << v.summary;
    EXPECT_THAT(v.summary,
                HasSubstr("retry 1: 10 gaps, min/median/max 100.0ms/145.0ms/190.0ms, the densest 5.0ms holds 1"));
    EXPECT_THAT(v.summary, HasSubstr("retry 2: 10 gaps"));
}

TEST(jittered, one_unjittered_index_fails) {
    const record::verdict v = test::run_check(R"(check = "jittered")",
                                      retries(10, 2, [](int i, int k) { return k == 1 ? 10.0 * i : 400.0; }));
    EXPECT_EQ(v.outcome(), record::verdict_outcome::fail);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("retry 2: 10 gaps"));
}

TEST(jittered, small_indexes_are_pooled_over_their_medians) {
    // 4 operations × 3 retries: no index has 8 gaps, but 12 pool.
    const record::verdict flat = test::run_check(R"(check = "jittered")", retries(4, 3, [](int, int k) { return 100.0 * k; }));
    EXPECT_EQ(flat.outcome(), record::verdict_outcome::fail);
    ASSERT_EQ(flat.evidence.size(), 1u);
    EXPECT_THAT(flat.evidence[0].detail,
                HasSubstr("retries 1, 2, 3 pooled (12 gaps, each over its index's median): the densest 0.05 of a "
                          "median holds 12, more than half; the width is max(0.001, noise floor 5.0ms / 100.0ms)"));

    const record::verdict spread =
        test::run_check(R"(check = "jittered")", retries(4, 3, [](int i, int k) { return 100.0 * k * (1 + 0.1 * i); }));
    EXPECT_EQ(spread.outcome(), record::verdict_outcome::pass) << spread.summary;
    EXPECT_THAT(spread.summary, HasSubstr("not judged alone: 1 (4), 2 (4), 3 (4)"));
}

TEST(jittered, too_few_gaps_are_insufficient_evidence) {
    const record::verdict v = test::run_check(R"(check = "jittered")", retries(5, 1, [](int, int) { return 100.0; }));
    EXPECT_EQ(v.outcome(), record::verdict_outcome::insufficient_evidence);
    EXPECT_TRUE(v.evidence.empty());
    EXPECT_THAT(v.summary, HasSubstr("no retry index had 8 gaps and indexes with two or more pool 5 (8 needed)"));

    const record::verdict lower = test::run_check("check = \"jittered\"\nmin_samples = 5\n",
                                          retries(5, 1, [](int, int) { return 100.0; }));
    EXPECT_EQ(lower.outcome(), record::verdict_outcome::fail);
}

TEST(jittered, gaps_after_retry_after_are_left_out) {
    test::journal_builder j;
    for (int i = 0; i < 10; ++i) j.op("op" + std::to_string(i)).attempt(503).retry_after(1000).wait(1000).attempt(200);
    const record::verdict v = test::run_check(R"(check = "jittered")", j.run());
    EXPECT_EQ(v.outcome(), record::verdict_outcome::insufficient_evidence);
    EXPECT_THAT(v.summary, HasSubstr("10 gaps after Retry-After left out"));
}

// A client whose own timeout fired while the server still held the attempt (at a barrier, say)
// resends before that attempt ended: a negative "gap" is no backoff and is left out.
TEST(jittered, retries_sent_before_their_previous_attempt_ended_are_left_out) {
    test::journal_builder j;
    for (int i = 0; i < 10; ++i) j.op("op" + std::to_string(i)).attempt(503, 2000).wait(-1000).attempt(200);
    const record::verdict v = test::run_check(R"(check = "jittered")", j.run());
    EXPECT_EQ(v.outcome(), record::verdict_outcome::insufficient_evidence);
    EXPECT_THAT(v.summary, HasSubstr("10 retries sent before their previous attempt ended (the client's timeout fired) "
                                     "left out"));
}

TEST(jittered, insufficient_evidence_survives_expect_failure) {
    const record::verdict v = test::run_check("check = \"jittered\"\nexpect_failure = true\n",
                                      retries(3, 1, [](int, int) { return 100.0; }));
    EXPECT_EQ(v.outcome(), record::verdict_outcome::insufficient_evidence);
}

TEST(jittered, bad_config) {
    const auto errors =
        test::parse_errors("check = \"jittered\"\nmin_samples = 3\nnoise_floor = \"5\"\nmin_relative_spread = 2\n");
    ASSERT_EQ(errors.size(), 3u);
    EXPECT_THAT(errors[0].message, HasSubstr("min_samples: must be in [4, 1000000000], got 3"));
    EXPECT_THAT(errors[1].message, HasSubstr("noise_floor: bad duration \"5\""));
    EXPECT_THAT(errors[2].message, HasSubstr("min_relative_spread: must be in [0, 1], got 2"));
}

}  // namespace
}  // namespace faultline::checks
