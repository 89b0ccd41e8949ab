// The progress line of `faultline run`: its exact bytes for given counts and times (drawn, throttled,
// padded over a longer line, erased), when it is on, the tally of the runner's events over real
// journals, and the binary writing it to a stderr that is no terminal only with `--progress`.
#include "progress_line.hpp"

#include "child_process.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace faultline::cli {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const time_point t0{std::chrono::hours{1}};

TEST(progress_text, says_scenarios_attempts_and_elapsed) {
    EXPECT_EQ(progress_text({2, 5, 1204}, milliseconds{12'345}), "2/5 scenarios done, 1204 attempts, 12.3 s");
    EXPECT_EQ(progress_text({0, 1, 0}, milliseconds{99}), "0/1 scenarios done, 0 attempts, 0.0 s");
    EXPECT_EQ(progress_text({8, 8, 70'000}, seconds{75}), "8/8 scenarios done, 70000 attempts, 1m15s");
}

TEST(progress_line, draws_in_place_at_most_once_per_interval) {
    progress_line line(t0);
    EXPECT_EQ(line.draw({0, 2, 0}, t0), "\r0/2 scenarios done, 0 attempts, 0.0 s");
    EXPECT_EQ(line.draw({0, 2, 5}, t0 + milliseconds{99}), "");
    EXPECT_EQ(line.draw({0, 2, 5}, t0 + milliseconds{100}), "\r0/2 scenarios done, 5 attempts, 0.1 s");
    EXPECT_EQ(line.draw({1, 2, 40}, t0 + milliseconds{350}), "\r1/2 scenarios done, 40 attempts, 0.3 s");
}

TEST(progress_line, skips_a_frame_that_would_not_change) {
    progress_line line(t0, milliseconds{10});
    EXPECT_EQ(line.draw({0, 1, 3}, t0 + milliseconds{200}), "\r0/1 scenarios done, 3 attempts, 0.2 s");
    EXPECT_EQ(line.draw({0, 1, 3}, t0 + milliseconds{250}), "");
    EXPECT_EQ(line.draw({0, 1, 4}, t0 + milliseconds{260}), "\r0/1 scenarios done, 4 attempts, 0.2 s");
}

TEST(progress_line, pads_over_the_rest_of_a_longer_line) {
    progress_line line(t0);
    EXPECT_EQ(line.draw({0, 1, 9}, t0 + milliseconds{59'900}), "\r0/1 scenarios done, 9 attempts, 59.9 s");
    // "1m00s" is one character shorter than "59.9 s".
    EXPECT_EQ(line.draw({0, 1, 9}, t0 + seconds{60}), "\r0/1 scenarios done, 9 attempts, 1m00s ");
}

TEST(progress_line, clears_what_it_drew_and_comes_back_at_once) {
    progress_line line(t0);
    EXPECT_EQ(line.clear(), "");
    const std::string drawn = line.draw({1, 3, 12}, t0 + milliseconds{1'000});
    ASSERT_EQ(drawn, "\r1/3 scenarios done, 12 attempts, 1.0 s");
    EXPECT_EQ(line.clear(), "\r" + std::string(drawn.size() - 1, ' ') + "\r");
    EXPECT_EQ(line.clear(), "");
    // Not throttled after an erase, though only 10 ms passed.
    EXPECT_EQ(line.draw({1, 3, 12}, t0 + milliseconds{1'010}), "\r1/3 scenarios done, 12 attempts, 1.0 s");
}

TEST(progress_wanted, on_a_terminal_unless_quiet_or_no_color_and_always_when_forced) {
    EXPECT_TRUE(progress_wanted(false, false, true, false));
    EXPECT_FALSE(progress_wanted(false, false, false, false));  // not a terminal
    EXPECT_FALSE(progress_wanted(false, true, true, false));    // --quiet
    EXPECT_FALSE(progress_wanted(false, false, true, true));    // NO_COLOR
    EXPECT_TRUE(progress_wanted(true, false, false, true));     // --progress
}

record::journal_record attempt_record() {
    record::journal_record r;
    r.method = "GET";
    r.target = "/";
    return r;
}

TEST(progress_tally, counts_live_attempts_then_closed_ones_and_finished_scenarios) {
    progress_tally tally(2);
    server::journal first;
    server::journal second;
    tally.attempts_opened(first);
    tally.attempts_opened(second);
    first.append(attempt_record());
    first.append(attempt_record());
    second.append(attempt_record());
    EXPECT_EQ(tally.snapshot().attempts, 3u);
    EXPECT_EQ(tally.snapshot().scenarios_done, 0u);
    tally.attempts_closed(first);
    tally.scenario_finished(record::run_record{});
    second.append(attempt_record());
    const progress_snapshot s = tally.snapshot();
    EXPECT_EQ(s.scenarios_done, 1u);
    EXPECT_EQ(s.scenarios_total, 2u);
    EXPECT_EQ(s.attempts, 4u);
    tally.attempts_closed(second);
    EXPECT_EQ(tally.snapshot().attempts, 4u);
}

using cli::testing::child;

const std::string suite = std::string{FAULTLINE_SUITES_DIR} + "/lost-response-keys.good.toml";

TEST(run_progress, forced_on_a_pipe_it_draws_the_line_and_erases_it_before_the_totals) {
    child proc{{FAULTLINE_BINARY, "run", suite, "--seed", "5", "--progress"}};
    const auto r = proc.finish();
    ASSERT_EQ(r.code, 0) << r.err;
    // The first frame is drawn before the run starts; the last bytes erase the line.
    EXPECT_EQ(r.err.rfind("\r0/1 scenarios done, 0 attempts, ", 0), 0u) << r.err;
    ASSERT_GE(r.err.size(), 2u);
    EXPECT_EQ(r.err.back(), '\r') << r.err;
    EXPECT_EQ(r.err.find('\n'), std::string::npos) << r.err;
    EXPECT_NE(r.out.find("1 of 1 scenario(s) passed"), std::string::npos) << r.out;
}

TEST(run_progress, off_on_a_pipe_by_default) {
    child proc{{FAULTLINE_BINARY, "run", suite, "--seed", "5"}};
    const auto r = proc.finish();
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err, "");
}

// `score` runs the probes through the same runner seam: the line counts probes as scenarios.
TEST(score_progress, forced_on_a_pipe_it_draws_the_line_and_erases_it_before_the_scorecard) {
    child proc{{FAULTLINE_BINARY, "score", "--catalogue", std::string{FAULTLINE_SUITES_DIR} + "/conformance", "--only",
                "status-404", "--only", "status-501", "--progress"}};
    const auto r = proc.finish();
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_EQ(r.err.rfind("\r0/2 scenarios done, 0 attempts, ", 0), 0u) << r.err;
    EXPECT_EQ(r.err.back(), '\r') << r.err;
    EXPECT_EQ(r.err.find('\n'), std::string::npos) << r.err;
}

TEST(run_progress, quiet_and_progress_together_are_a_usage_error) {
    child proc{{FAULTLINE_BINARY, "run", suite, "--quiet", "--progress"}};
    const auto r = proc.finish();
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("excludes"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace faultline::cli
