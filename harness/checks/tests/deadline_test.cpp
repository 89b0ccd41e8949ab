#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "check_test_support.hpp"

namespace faultline::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(deadline, an_attempt_after_the_header_deadline_is_named) {
    test::journal_builder j;
    // The first attempt says 100 ms are left; the client sleeps 200 ms and tries again anyway.
    j.op("a").attempt(503).deadline(100).wait(200).attempt(200).deadline(1);
    const record::verdict v = test::run_check(R"(check = "deadline")", j.run());
    EXPECT_FALSE(v.passed);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_EQ(v.evidence[0].operation, "a");
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(2u));
    EXPECT_THAT(v.evidence[0].detail,
                HasSubstr("attempt started 101.0ms after the deadline 100.0ms: #2 POST /charge on conn 2 at 201.0ms→202.0ms: 200"));
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("deadline header 1 ms exceeds the -101.0ms left"));
    EXPECT_THAT(v.summary, HasSubstr("1 attempts started late, 0 clients finished late, 1 bad deadline headers"));
}

// The server ran late for 150 ms just before the second attempt's stamp (its worker could not run):
// that attempt, stamped 101 ms after the deadline, may have come in time, so it is not judged; a
// spell of 50 ms cannot explain it.
TEST(deadline, an_attempt_late_by_no_more_than_the_server_ran_late_is_not_judged) {
    test::journal_builder j;
    j.op("a").attempt(503).deadline(100).wait(200).attempt(200).deadline(1);
    record::run_record run = j.run();
    test::add_server_late(run, run.journal[1].request_ns - 150'000'000, 150'000'000);
    const record::verdict excused = test::run_check(R"(check = "deadline")", run);
    EXPECT_TRUE(excused.passed) << excused.summary;
    EXPECT_THAT(excused.summary, HasSubstr("0 attempts started late"));
    EXPECT_THAT(excused.summary, HasSubstr("2 not judged: late by no more than the server itself ran late around the "
                                           "stamp (up to 150.0ms, server_late)"));

    run.server_events[0].late_ns = 50'000'000;
    run.server_events[0].at_ns = run.journal[1].request_ns - 50'000'000;
    const record::verdict caught = test::run_check(R"(check = "deadline")", run);
    EXPECT_FALSE(caught.passed);
    EXPECT_THAT(caught.summary, HasSubstr("1 attempts started late"));
}

TEST(deadline, header_zero_and_growing_header_are_flagged) {
    test::journal_builder j;
    j.op("b").attempt(503).deadline(0);
    j.op("c").at(10).attempt(503).deadline(100).wait(10).attempt(200).deadline(150);
    const record::verdict v = test::run_check(R"(check = "deadline")", j.run());
    EXPECT_FALSE(v.passed);
    ASSERT_EQ(v.evidence.size(), 2u);
    EXPECT_EQ(v.evidence[0].operation, "b");
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(1u));
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("deadline header 0 ms (must be ≥ 1)"));
    EXPECT_EQ(v.evidence[1].operation, "c");
    EXPECT_THAT(v.evidence[1].seqs, ElementsAre(3u));
    EXPECT_THAT(v.evidence[1].detail, HasSubstr("deadline header 150 ms exceeds the 89.0ms left"));
}

TEST(deadline, client_records_give_the_deadline_and_the_finish_time) {
    test::journal_builder j;
    j.op("d").attempt(503).wait(30).attempt(503);
    j.client(test::client_op("d", 0, 120, false, 2, 50.0));
    const record::verdict v = test::run_check(R"(check = "deadline")", j.run());
    EXPECT_FALSE(v.passed);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_EQ(v.evidence[0].operation, "d");
    EXPECT_TRUE(v.evidence[0].seqs.empty());
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("client finished at 120.0ms, 70.0ms after the deadline 50.0ms"));
}

TEST(deadline, a_client_that_honours_its_deadline_passes) {
    test::journal_builder j;
    j.op("a").attempt(503).deadline(300).wait(50).attempt(200).deadline(249);
    j.op("d").at(5).attempt(503).wait(30).attempt(200);
    j.client(test::client_op("d", 5, 40, true, 2, 60.0));
    const record::verdict v = test::run_check(R"(check = "deadline")", j.run());
    EXPECT_TRUE(v.passed) << v.summary;
    EXPECT_THAT(v.summary, HasSubstr("2 of 2 operations had a deadline"));
}

TEST(deadline, require_header_flags_attempts_without_one) {
    test::journal_builder j;
    j.op("a").attempt(200);
    const record::verdict v = test::run_check("check = \"deadline\"\nrequire_header = true\n", j.run());
    EXPECT_FALSE(v.passed);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("no deadline header"));
}

TEST(deadline, bad_config) {
    const auto errors = test::parse_errors(
        "check = \"deadline\"\ntolerance = 5\nrequire_header = 1\nprocess_tolerance = \"1 s\"\n");
    ASSERT_EQ(errors.size(), 3u);
    EXPECT_THAT(errors[0].message, HasSubstr("tolerance: expected a duration such as \"250ms\", got an integer"));
    EXPECT_THAT(errors[1].message, HasSubstr("require_header: expected true or false, got an integer"));
    EXPECT_THAT(errors[2].to_string(), HasSubstr("scenario.toml:4:21: check \"deadline\": process_tolerance: bad duration"));
}

// --- command clients that declared their own deadline -------------------------------------------

record::process_record process(std::uint64_t op, std::int64_t pid, double started_ms, double finished_ms, int exit_status) {
    record::process_record p;
    p.op = op;
    p.pid = pid;
    p.started_ns = test::ms(started_ms);
    p.finished_ns = test::ms(finished_ms);
    p.exit_status = exit_status;
    return p;
}

record::run_record with_processes(record::run_record run, std::optional<double> declared_ms, std::vector<record::process_record> processes) {
    if (declared_ms) run.declared.deadline = std::chrono::nanoseconds{test::ms(*declared_ms)};
    run.command = record::command_result{};
    run.command->processes = std::move(processes);
    return run;
}

TEST(deadline, a_process_that_returns_long_after_its_declared_deadline_is_named) {
    test::journal_builder j;
    // Two tries reach the server within the 1 s deadline; the client's later "retries" fail
    // locally, so the wire looks fine, but the process returns 3 s after it started.
    j.op("k").at(10).attempt(503).at(200).attempt(503);
    const record::run_record run = with_processes(j.run(), 1000, {process(0, 4242, 0, 3000, 1)});
    const record::verdict v = test::run_check(R"(check = "deadline")", run);
    EXPECT_FALSE(v.passed);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_EQ(v.evidence[0].operation, "");
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(1u, 2u));
    EXPECT_EQ(v.evidence[0].detail,
              "process 0 (pid 4242) started at 0.0ms, exited at 3000.0ms with status 1: 1990.0ms past its declared "
              "deadline 1000.0ms counted from its first request at 10.0ms (start-up 10.0ms excluded; 3000.0ms from "
              "its start)\n"
              "attempts that reached the server during its life:\n"
              "#1 POST /charge on conn 1 at 10.0ms→11.0ms: 503\n"
              "#2 POST /charge on conn 2 at 200.0ms→201.0ms: 503");
    EXPECT_EQ(v.summary,
              "0 of 1 operations had a deadline; 0 broke it: 0 attempts started late, 0 clients finished late, 0 bad "
              "deadline headers (tolerance 10.0ms); 1 of 1 processes exited after the declared deadline 1000.0ms "
              "(tolerance 250.0ms) counted from their first request reaching the server (1 of them; the others from "
              "their start); from process start (stated, not judged): the longest life 3000.0ms, the longest start-up "
              "before a first request 10.0ms");
}

TEST(deadline, late_attempts_and_other_running_processes_are_marked) {
    test::journal_builder j;
    j.op("k").at(50).attempt(503).at(1500).attempt(503);
    const record::run_record run = with_processes(j.run(), 1000, {process(0, 10, 0, 2000, 0), process(1, 11, 100, 300, 0)});
    const record::verdict v = test::run_check(R"(check = "deadline")", run);
    EXPECT_FALSE(v.passed);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("process 0 (pid 10)"));
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("counted from its start (other processes ran at the same time"));
    EXPECT_THAT(v.evidence[0].detail,
                HasSubstr("during its life (other processes were running too):\n#1 POST /charge on conn 1 at 50.0ms→51.0ms: 503\n"
                          "after its deadline: #2 POST /charge on conn 2 at 1500.0ms→1501.0ms: 503"));
    EXPECT_THAT(v.summary, HasSubstr("1 of 2 processes exited after"));
}

TEST(deadline, a_process_killed_at_the_time_limit_past_its_deadline_says_so) {
    record::process_record p = process(0, 7, 0, 5000, 143);
    p.killed = true;
    p.signal = 15;
    const record::verdict v = test::run_check(R"(check = "deadline")", with_processes(record::run_record{}, 500, {p}));
    EXPECT_FALSE(v.passed);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_THAT(v.evidence[0].detail,
                HasSubstr("exited at 5000.0ms with status 143 (killed at the time limit): 4500.0ms past"));
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("no attempt reached the server during its life"));
    EXPECT_TRUE(v.evidence[0].seqs.empty());
}

TEST(deadline, processes_that_exit_within_their_declared_deadline_pass) {
    test::journal_builder j;
    j.op("k").at(10).attempt(503).at(200).attempt(200);
    // The second process starts late in the run; only its own life counts.
    const record::run_record run = with_processes(j.run(), 1000, {process(0, 1, 0, 900, 0), process(1, 2, 5000, 6100, 0)});
    const record::verdict v = test::run_check(R"(check = "deadline")", run);
    EXPECT_TRUE(v.passed) << v.summary;
    EXPECT_THAT(v.summary, HasSubstr("0 of 2 processes exited after the declared deadline 1000.0ms"));
    // Process 1 never reached the server: its 1100 ms from its start is inside the default 250 ms of
    // slack, not inside 50 ms.
    const record::verdict strict = test::run_check("check = \"deadline\"\nprocess_tolerance = \"50ms\"\n", run);
    EXPECT_FALSE(strict.passed);
    ASSERT_EQ(strict.evidence.size(), 1u);
    EXPECT_THAT(strict.evidence[0].detail, HasSubstr("process 1 (pid 2) started at 5000.0ms, exited at 6100.0ms"));
}

// A runtime that takes 2.5 s to start on a loaded machine has not started its deadline clock yet: a
// 1 s deadline kept from its first request passes, the start-up is stated beside it.
TEST(deadline, a_slow_start_is_excluded_and_stated) {
    test::journal_builder j;
    j.op("k").at(2500).attempt(503).at(2800).attempt(503);
    const record::run_record kept = with_processes(j.run(), 1000, {process(0, 1, 0, 3550, 1)});
    const record::verdict v = test::run_check(R"(check = "deadline")", kept);
    EXPECT_TRUE(v.passed) << v.summary;
    EXPECT_THAT(v.summary, HasSubstr("the longest life 3550.0ms, the longest start-up before a first request 2500.0ms"));
    const record::run_record broken = with_processes(j.run(), 1000, {process(0, 1, 0, 3900, 1)});
    const record::verdict late = test::run_check(R"(check = "deadline")", broken);
    EXPECT_FALSE(late.passed);
    ASSERT_EQ(late.evidence.size(), 1u);
    EXPECT_THAT(late.evidence[0].detail,
                HasSubstr("400.0ms past its declared deadline 1000.0ms counted from its first request at 2500.0ms "
                          "(start-up 2500.0ms excluded; 3900.0ms from its start)"));
}

TEST(deadline, without_a_declared_deadline_processes_are_not_judged) {
    test::journal_builder j;
    j.op("k").at(10).attempt(503).at(200).attempt(503);
    const record::verdict v = test::run_check(R"(check = "deadline")", with_processes(j.run(), std::nullopt, {process(0, 1, 0, 9000, 1)}));
    EXPECT_EQ(v.outcome(), record::verdict_outcome::insufficient_evidence);
    EXPECT_EQ(v.summary,
              "no operation had a deadline and no command declared one: nothing to judge (0 of 1 operations had a "
              "deadline; 0 broke it: 0 attempts started late, 0 clients finished late, 0 bad deadline headers "
              "(tolerance 10.0ms))");
}

}  // namespace
}  // namespace faultline::checks
