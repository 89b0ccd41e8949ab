#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "check_test_support.hpp"
#include "faultline/checks/timing_control.hpp"

namespace faultline::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

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

record::verdict with_control(std::string_view toml, const record::run_record& run, const timing_control& control) {
    const expectation e = test::parse_ok(toml);
    return evaluate(e, run, record::group_operations(run.journal), &control);
}

TEST(spacing, an_exponential_backoff_passes) {
    const record::verdict v = test::run_check(R"(check = "spacing")",
                                      retries(10, 3, [](int i, int k) { return 100.0 * (1 << (k - 1)) + i; }));
    EXPECT_EQ(v.outcome(), record::verdict_outcome::pass) << v.summary;
    EXPECT_THAT(v.summary, HasSubstr("30 gaps judged: 0 operations retried back to back"));
    EXPECT_THAT(v.summary, HasSubstr("median gap from retry 1 to 3 grows by 300.0ms (at least 10.4ms (max(noise floor, 0.1 × the "
                          "first median)))"));
}

TEST(spacing, an_operation_that_never_waits_fails_with_its_attempts) {
    test::journal_builder j;
    j.op("a").attempt(503).wait(1).attempt(503).wait(2).attempt(200);
    const record::verdict v = test::run_check(R"(check = "spacing")", j.run());
    EXPECT_EQ(v.outcome(), record::verdict_outcome::fail);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_EQ(v.evidence[0].operation, "a");
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(1u, 2u, 3u));
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("2 of its 2 retries came under min_gap 20.0ms"));
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("(gap 2.0ms)"));
}

// The server could not run for 40 ms around each previous attempt (a loaded machine): its end may be
// stamped that late, so gaps of 1 and 2 ms may have been 20 ms or more. Not judged; nothing else was.
// A spell shorter than the shortfall explains nothing.
TEST(spacing, a_short_gap_the_servers_own_lateness_explains_is_not_judged) {
    test::journal_builder j;
    j.op("a").attempt(503).wait(1).attempt(503).wait(2).attempt(200);
    record::run_record run = j.run();
    test::add_server_late(run, run.journal[0].request_ns, 40'000'000);
    test::add_server_late(run, run.journal[1].request_ns, 40'000'000);
    const record::verdict excused = test::run_check(R"(check = "spacing")", run);
    EXPECT_EQ(excused.outcome(), record::verdict_outcome::insufficient_evidence) << excused.summary;
    EXPECT_THAT(excused.summary, HasSubstr("2 not judged: they came under min_gap by no more than the server itself "
                                           "ran late around the previous attempt (up to 40.0ms, server_late)"));
    // The second gap explained (a spell of 18.5 ms from the second attempt: 2 ms short of 20 needs 18),
    // the first not (1 ms short of it needs 19): the one gap left is short, so no pass either.
    record::run_record half = j.run();
    test::add_server_late(half, half.journal[1].request_ns, 18'500'000);
    const record::verdict one_left = test::run_check(R"(check = "spacing")", half);
    EXPECT_EQ(one_left.outcome(), record::verdict_outcome::insufficient_evidence) << one_left.summary;
    EXPECT_THAT(one_left.summary, HasSubstr("1 operations not judged: every gap the server's lateness does not "
                                            "explain was under min_gap"));

    for (record::server_event& e : run.server_events) e.late_ns = 10'000'000;
    const record::verdict caught = test::run_check(R"(check = "spacing")", run);
    EXPECT_EQ(caught.outcome(), record::verdict_outcome::fail) << caught.summary;
    EXPECT_THAT(caught.summary, HasSubstr("1 operations retried back to back"));
}

// A herd of 8 that retries at once, the server late around half of the previous attempts: the gaps
// it explains count neither as short nor as waits, so the medians stay under min_gap, and with the
// short majority resting on explained gaps the indexes cannot be judged — never a pass (leaving the
// explained gaps out would lift the medians past min_gap). Unexplained, the same herd fails.
TEST(spacing, a_herd_whose_short_medians_rest_on_explained_gaps_is_not_a_pass) {
    const record::run_record plain = retries(8, 3, [](int, int) { return 2.0; });
    EXPECT_EQ(test::run_check(R"(check = "spacing")", plain).outcome(), record::verdict_outcome::fail);
    record::run_record late = plain;
    for (const record::journal_record& r : plain.journal) {
        if (r.status == 503 && r.seq % 2 == 0) test::add_server_late(late, r.request_ns, 40'000'000);
    }
    const record::verdict v = test::run_check(R"(check = "spacing")", late);
    EXPECT_EQ(v.outcome(), record::verdict_outcome::insufficient_evidence) << v.summary;
    EXPECT_THAT(v.summary, HasSubstr("retry indexes with a median under min_gap not judged: most of their short gaps "
                                     "are ones the server's lateness explains"));
}

// Full jitter draws a near-zero delay now and then: one short gap is no finding.
// A naive loop whose first retry is slow (Node's, 81 ms) and the rest back to back is not caught in
// one process: full jitter at a 50 ms base draws such runs too (docs/checks.md, spacing).
TEST(spacing, a_slow_first_retry_then_back_to_back_is_no_finding_in_one_process) {
    test::journal_builder j;
    j.op("a").attempt(503).wait(81).attempt(503).wait(8).attempt(503).wait(9).attempt(200);
    EXPECT_EQ(test::run_check(R"(check = "spacing")", j.run()).outcome(), record::verdict_outcome::pass);
}

TEST(spacing, one_short_gap_of_a_jittered_client_is_no_finding) {
    test::journal_builder j;
    j.op("a").attempt(503).wait(3).attempt(503).wait(180).attempt(200);
    EXPECT_EQ(test::run_check(R"(check = "spacing")", j.run()).outcome(), record::verdict_outcome::pass);
}

// urllib3 sleeps 0 before its first retry, then backs off: one back-to-back index is its design;
// two are a client that does not back off.
TEST(spacing, two_indexes_whose_median_gap_is_back_to_back_fail) {
    const record::verdict one = test::run_check(R"(check = "spacing")",
                                        retries(10, 3, [](int i, int k) { return k == 1 ? 0.5 : 400.0 * k + i; }));
    EXPECT_EQ(one.outcome(), record::verdict_outcome::pass) << one.summary;
    EXPECT_THAT(one.summary, HasSubstr("1 retry indexes with a median under it (one alone is no finding)"));
    const record::verdict two = test::run_check(R"(check = "spacing")",
                                        retries(10, 3, [](int i, int k) { return k < 3 ? 0.5 : 400.0 + i; }));
    EXPECT_EQ(two.outcome(), record::verdict_outcome::fail);
    ASSERT_GE(two.evidence.size(), 2u);
    EXPECT_THAT(two.evidence[0].detail, HasSubstr("retry 1: the median of 10 gaps is 0.5ms, under min_gap 20.0ms"));
}

TEST(spacing, a_constant_delay_does_not_grow) {
    const record::verdict v = test::run_check(R"(check = "spacing")", retries(10, 3, [](int i, int) { return 1000.0 + i; }));
    EXPECT_EQ(v.outcome(), record::verdict_outcome::fail);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("the backoff does not grow: median gap from retry 1 to 3 grows by 0.0ms"));
    // Declared constant, or growth switched off: only the spacing is judged.
    record::run_record declared = retries(10, 3, [](int i, int) { return 1000.0 + i; });
    declared.declared.backoff = record::declared_backoff{std::chrono::seconds{1}, std::chrono::seconds{1}, 1.0};
    const record::verdict constant = test::run_check(R"(check = "spacing")", declared);
    EXPECT_EQ(constant.outcome(), record::verdict_outcome::pass);
    EXPECT_THAT(constant.summary, HasSubstr("growth not judged: the client declared a constant backoff"));
    EXPECT_EQ(test::run_check("check = \"spacing\"\ngrow = false\n", retries(10, 3, [](int, int) { return 1000.0; }))
                  .outcome(),
              record::verdict_outcome::pass);
}

// Growth of 80 ms on 580 ms, within 150 ms of noise the control measured: not a pass, not a failure.
TEST(spacing, growth_within_the_controls_noise_cannot_be_told) {
    const record::run_record run = retries(10, 2, [](int i, int k) { return 500.0 + 80.0 * k + i; });
    const record::verdict quiet = with_control(R"(check = "spacing")", run, test::evenly_spread_control(500, 2));
    EXPECT_EQ(quiet.outcome(), record::verdict_outcome::pass) << quiet.summary;
    const record::verdict noisy = with_control(R"(check = "spacing")", run, test::evenly_spread_control(500, 150));
    EXPECT_EQ(noisy.outcome(), record::verdict_outcome::insufficient_evidence);
    EXPECT_THAT(noisy.summary, HasSubstr("growth cannot be told from a constant delay"));
    EXPECT_THAT(noisy.summary, HasSubstr("the control (24 processes, fixed 500.0ms delay): 24 gaps"));
}

// The careful loop in a Node.js herd under two hogs: its full jitter (200 ms ×2) showed herd medians
// of 302, 293 and 326 ms, no growth, while the control (a light C++ process) saw 9.9 ms. Alone, its
// gaps grew from about 100 to 400 ms: the herd hides the curve, so its "does not grow" cannot stand.
// A client whose lone gaps stay flat still fails.
TEST(spacing, growth_the_lone_probes_show_is_not_failed_in_a_herd_that_hides_it) {
    const record::run_record herd = retries(8, 3, [](int i, int k) { return (k == 3 ? 326.0 : k == 2 ? 293.0 : 302.0) + i; });
    timing_control quiet = test::evenly_spread_control(500, 9.9);
    const record::verdict alone_unknown = with_control(R"(check = "spacing")", herd, quiet);
    EXPECT_EQ(alone_unknown.outcome(), record::verdict_outcome::fail) << alone_unknown.summary;

    timing_control grew = quiet;
    grew.alone_gaps_ns = {{1, {test::ms(60), test::ms(110), test::ms(150), test::ms(90)}},
                          {3, {test::ms(250), test::ms(420), test::ms(700), test::ms(380)}}};
    const record::verdict hidden = with_control(R"(check = "spacing")", herd, grew);
    EXPECT_EQ(hidden.outcome(), record::verdict_outcome::insufficient_evidence) << hidden.summary;
    EXPECT_THAT(hidden.summary, HasSubstr("alone, the client's median gap grew from 100.0ms at retry 1 to 400.0ms at "
                                          "retry 3: the herd's queueing hides its curve, growth cannot be told"));

    timing_control flat = quiet;
    flat.alone_gaps_ns = {{1, {test::ms(1000), test::ms(1002), test::ms(1001)}},
                          {3, {test::ms(1001), test::ms(1003), test::ms(1000)}}};
    EXPECT_EQ(with_control(R"(check = "spacing")", herd, flat).outcome(), record::verdict_outcome::fail);
}

TEST(spacing, resends_after_a_dead_kept_alive_connection_and_retry_after_are_left_out) {
    test::journal_builder j;
    j.op("a").attempt(503).retry_after(1000).wait(1).attempt(200);
    // Its connection's second request (the first was another operation's), lost when it died.
    j.op("b").lost(record::wire_outcome::reset);
    j.last().connection_request = 2;
    j.wait(1).attempt(200);
    const record::verdict v = test::run_check(R"(check = "spacing")", j.run());
    EXPECT_EQ(v.outcome(), record::verdict_outcome::insufficient_evidence);
    EXPECT_THAT(v.summary, HasSubstr("1 resends after a reused kept-alive connection died without a reply left out"));
    EXPECT_THAT(v.summary, HasSubstr("1 gaps after Retry-After left out"));
}

TEST(spacing, bad_config) {
    const auto errors = test::parse_errors("check = \"spacing\"\nmin_samples = 2\nmin_gap = \"x\"\ngrow = 1\n");
    ASSERT_EQ(errors.size(), 3u);
    EXPECT_THAT(errors[0].message, HasSubstr("min_gap: bad duration \"x\""));
    EXPECT_THAT(errors[1].message, HasSubstr("min_samples: must be in [4, 1000000000], got 2"));
    EXPECT_THAT(errors[2].message, HasSubstr("grow"));
}

}  // namespace
}  // namespace faultline::checks
