#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "check_test_support.hpp"

namespace faultline::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr std::string_view equal_policy =
    "check = \"backoff\"\nbase = \"100ms\"\ncap = \"1s\"\njitter = \"equal\"\n";

TEST(backoff, immediate_retries_fall_below_the_envelope) {
    test::journal_builder j;
    j.op("a").attempt(503).attempt(503).attempt(200);
    const record::verdict v = test::run_check(equal_policy, j.run());
    EXPECT_FALSE(v.passed);
    ASSERT_EQ(v.evidence.size(), 2u);
    EXPECT_EQ(v.evidence[0].operation, "a");
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(1u, 2u));
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("retry 1: gap 0.0ms outside [50.0ms, 100.0ms] ± 10.0ms"));
    EXPECT_THAT(v.evidence[1].seqs, ElementsAre(2u, 3u));
    EXPECT_THAT(v.evidence[1].detail, HasSubstr("retry 2: gap 0.0ms outside [100.0ms, 200.0ms]"));
    EXPECT_THAT(v.summary, HasSubstr("2 gaps checked against equal jitter (base 100.0ms, cap 1000.0ms, ×2): 2 outside"));
}

TEST(backoff, a_run_without_a_retry_is_insufficient_evidence) {
    test::journal_builder j;
    j.op("a").attempt(200);
    j.op("b").at(5).attempt(404);
    const record::verdict v = test::run_check(equal_policy, j.run());
    EXPECT_EQ(v.outcome(), record::verdict_outcome::insufficient_evidence) << v.summary;
    EXPECT_THAT(v.summary, HasSubstr("no gap before a retry to judge"));
}

// A gap too short by no more than the server ran late around the previous attempt (its stamps may be
// that late), or too long by no more than it ran late around the retry, is not judged.
TEST(backoff, a_gap_outside_by_no_more_than_the_server_ran_late_is_not_judged) {
    test::journal_builder j;
    j.op("a").attempt(503).wait(20).attempt(503).wait(300).attempt(200);
    record::run_record run = j.run();
    test::add_server_late(run, run.journal[0].request_ns - 30'000'000, 30'000'000);
    test::add_server_late(run, run.journal[2].request_ns - 100'000'000, 100'000'000);
    const record::verdict excused = test::run_check(equal_policy, run);
    EXPECT_EQ(excused.outcome(), record::verdict_outcome::insufficient_evidence) << excused.summary;
    EXPECT_THAT(excused.summary, HasSubstr("2 not judged: outside by no more than the server itself ran late around "
                                           "them (up to 100.0ms, server_late)"));

    run.server_events[0].late_ns = 10'000'000;  // 20 ms short: 10 ms late cannot explain it
    run.server_events[1].late_ns = 50'000'000;  // 90 ms long: nor 50 ms
    const record::verdict caught = test::run_check(equal_policy, run);
    EXPECT_FALSE(caught.passed);
    EXPECT_EQ(caught.evidence.size(), 2u);
}

TEST(backoff, gaps_inside_the_equal_jitter_envelope_pass) {
    test::journal_builder j;
    j.op("a").attempt(503).wait(60).attempt(503).wait(190).attempt(200);
    const record::verdict v = test::run_check(equal_policy, j.run());
    EXPECT_TRUE(v.passed) << v.summary;
}

TEST(backoff, decorrelated_envelope_follows_the_previous_gap) {
    constexpr std::string_view policy =
        "check = \"backoff\"\nbase = \"100ms\"\ncap = \"1s\"\njitter = \"decorrelated\"\n";
    test::journal_builder good;
    good.op("a").attempt(503).wait(250).attempt(503).wait(600).attempt(200);
    EXPECT_TRUE(test::run_check(policy, good.run()).passed);

    test::journal_builder bad;
    bad.op("a").attempt(503).wait(250).attempt(503).wait(900).attempt(200);
    const record::verdict v = test::run_check(policy, bad.run());
    EXPECT_FALSE(v.passed);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(2u, 3u));
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("retry 2: gap 900.0ms outside [100.0ms, 750.0ms]"));
}

TEST(backoff, gaps_after_retry_after_are_left_to_that_check) {
    test::journal_builder j;
    j.op("a").attempt(503).retry_after(2000).wait(2000).attempt(200);
    j.op("b").at(10).attempt(503).wait(60).attempt(200);
    const record::verdict v = test::run_check(equal_policy, j.run());
    EXPECT_TRUE(v.passed) << v.summary;
    EXPECT_THAT(v.summary, HasSubstr("1 gaps checked"));
}

TEST(backoff, clamping_after_jitter_piles_gaps_at_the_cap) {
    constexpr std::string_view policy =
        "check = \"backoff\"\nbase = \"100ms\"\ncap = \"200ms\"\njitter = \"full\"\nmin_samples_at_cap = 5\n";
    test::journal_builder spiky;
    for (int i = 0; i < 10; ++i) {
        spiky.op("op" + std::to_string(i)).at(i * 1000).attempt(503).wait(50).attempt(503).wait(200).attempt(200);
    }
    const record::verdict v = test::run_check(policy, spiky.run());
    EXPECT_FALSE(v.passed);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_EQ(v.evidence[0].operation, "");
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(3u, 6u, 9u, 12u, 15u, 18u, 21u, 24u, 27u, 30u));
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("spike at the cap: share 1 of gaps within 10.0ms of 200.0ms > 0.1"));

    test::journal_builder spread;
    for (int i = 0; i < 10; ++i) {
        spread.op("op" + std::to_string(i)).at(i * 1000).attempt(503).wait(50).attempt(503).wait(15 * i).attempt(200);
    }
    const record::verdict ok = test::run_check(policy, spread.run());
    EXPECT_TRUE(ok.passed) << ok.summary;
    EXPECT_THAT(ok.summary, HasSubstr("0 of 10 gaps that could reach the cap sit at it"));
}

TEST(backoff, additive_jitter_adds_up_to_jitter_max_to_the_curve) {
    constexpr std::string_view policy =
        "check = \"backoff\"\nbase = \"100ms\"\ncap = \"1s\"\njitter = \"additive\"\njitter_max = \"100ms\"\n";
    test::journal_builder good;
    good.op("a").attempt(503).wait(190).attempt(503).wait(200).attempt(200);
    EXPECT_TRUE(test::run_check(policy, good.run()).passed);

    test::journal_builder bad;
    bad.op("a").attempt(503).wait(60).attempt(503).wait(320).attempt(200);
    const record::verdict v = test::run_check(policy, bad.run());
    EXPECT_FALSE(v.passed);
    ASSERT_EQ(v.evidence.size(), 2u);
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("retry 1: gap 60.0ms outside [100.0ms, 200.0ms]"));
    EXPECT_THAT(v.evidence[1].detail, HasSubstr("retry 2: gap 320.0ms outside [200.0ms, 300.0ms]"));
}

TEST(backoff, proportional_matches_grpc_beyond_the_cap_and_one_sided_clients) {
    // gRPC C-core: the capped delay × U[0.8, 1.2), so up to 1.2 × cap.
    constexpr std::string_view grpc =
        "check = \"backoff\"\nbase = \"100ms\"\ncap = \"200ms\"\njitter = \"proportional\"\n";
    test::journal_builder at_cap;
    at_cap.op("a").attempt(503).wait(85).attempt(503).wait(235).attempt(503).wait(165).attempt(200);
    EXPECT_TRUE(test::run_check(grpc, at_cap.run()).passed);

    // "+0–20 %": t × U[1, 1.2); a gap below t is outside.
    const std::string above = std::string(grpc) + "jitter_sides = \"above\"\n";
    test::journal_builder low;
    low.op("a").attempt(503).wait(85).attempt(503).wait(235).attempt(200);
    const record::verdict v = test::run_check(above, low.run());
    EXPECT_FALSE(v.passed);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("retry 1: gap 85.0ms outside [100.0ms, 120.0ms]"));

    const std::string below = std::string(grpc) + "jitter_sides = \"below\"\n";
    test::journal_builder high;
    high.op("a").attempt(503).wait(115).attempt(200);
    EXPECT_THAT(test::run_check(below, high.run()).evidence.at(0).detail,
                HasSubstr("retry 1: gap 115.0ms outside [80.0ms, 100.0ms]"));
}

// wget's linear 1 s, 2 s, 3 s; a constant 1 s; an exponential with no cap.
TEST(backoff, linear_constant_and_uncapped_curves) {
    const auto run_of = [](std::initializer_list<double> gaps) {
        test::journal_builder j;
        j.op("a");
        for (const double g : gaps) j.attempt(503).wait(g);
        j.attempt(200);
        return j.run();
    };
    const record::run_record linear = run_of({1000, 2000, 3000});
    EXPECT_EQ(test::run_check("check = \"backoff\"\nbase = \"1s\"\ngrowth = \"linear\"\njitter = \"none\"\n", linear)
                  .outcome(),
              record::verdict_outcome::pass);
    const record::verdict doubling = test::run_check("check = \"backoff\"\nbase = \"1s\"\njitter = \"none\"\n", linear);
    EXPECT_EQ(doubling.outcome(), record::verdict_outcome::fail);
    EXPECT_THAT(doubling.summary, HasSubstr("(base 1000.0ms, no cap, ×2)"));
    const record::run_record constant = run_of({1000, 1000, 1000});
    EXPECT_EQ(test::run_check("check = \"backoff\"\nbase = \"1s\"\ngrowth = \"constant\"\njitter = \"none\"\n", constant)
                  .outcome(),
              record::verdict_outcome::pass);
    EXPECT_EQ(test::run_check("check = \"backoff\"\nbase = \"1s\"\njitter = \"none\"\n", run_of({1000, 2000, 4000}))
                  .outcome(),
              record::verdict_outcome::pass);
}

TEST(backoff, bad_config) {
    auto errors = test::parse_errors("check = \"backoff\"\nbase = \"1s\"\ncap = \"2s\"\njitter = \"random\"\n");
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_THAT(errors[0].message,
                HasSubstr("jitter: unknown value \"random\"; allowed: none, full, equal, decorrelated, proportional, additive"));
    errors = test::parse_errors("check = \"backoff\"\ncap = \"1s\"\n");
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].to_string(), "scenario.toml:2:7: check \"backoff\": cap: needs base");
    errors = test::parse_errors("check = \"backoff\"\njitter = \"none\"\n");
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].to_string(), "scenario.toml:2:10: check \"backoff\": jitter: only with base (without "
                                     "it the client's declared curve is used)");
    errors = test::parse_errors("check = \"backoff\"\nbase = \"1s\"\ncap = \"100ms\"\n");
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].to_string(), "scenario.toml:3:7: check \"backoff\": cap: must be at least base");
    errors = test::parse_errors(
        "check = \"backoff\"\nbase = \"1s\"\ncap = \"2s\"\njitter = \"additive\"\njitter_sides = \"up\"\n");
    ASSERT_EQ(errors.size(), 2u);
    EXPECT_THAT(errors[0].message, HasSubstr("jitter_sides: unknown value \"up\"; allowed: both, above, below"));
    EXPECT_THAT(errors[1].message, HasSubstr("jitter_max: required for jitter \"additive\""));
}

}  // namespace
}  // namespace faultline::checks

namespace faultline::checks {
namespace {

using ::testing::HasSubstr;

// Without base and cap the check judges against the curve the client declared; without that
// either, it cannot judge.
TEST(backoff, judges_the_declared_curve_when_the_check_gives_none) {
    test::journal_builder j;
    j.op("a").attempt(503).wait(1000).attempt(503).wait(2000).attempt(503).wait(1500).attempt(200);
    record::run_record run = j.run();
    const auto check = test::parse_ok("check = \"backoff\"\n");
    const record::verdict unjudged = evaluate(check, run);
    EXPECT_TRUE(unjudged.insufficient_evidence);
    EXPECT_EQ(unjudged.summary,
              "no backoff curve to judge against: neither base and cap here nor one declared by the client");

    run.declared.backoff = record::declared_backoff{std::chrono::seconds{1}, std::chrono::seconds{4}, 2.0, record::declared_jitter::none, 0.2};
    const record::verdict v = evaluate(check, run);
    EXPECT_FALSE(v.passed);
    EXPECT_THAT(v.summary, HasSubstr("3 gaps checked against none jitter (base 1000.0ms, cap 4000.0ms, ×2): 1 outside"));
    EXPECT_THAT(v.summary, HasSubstr("(the client's declared curve)"));
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("retry 3: gap 1500.0ms outside [4000.0ms, 4000.0ms]"));
}

}  // namespace
}  // namespace faultline::checks
