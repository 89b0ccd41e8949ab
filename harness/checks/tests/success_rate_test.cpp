#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "check_test_support.hpp"

namespace faultline::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

record::run_record three_of_four() {
    test::journal_builder j;
    j.op("a").attempt(200);
    j.op("b").at(1).attempt(503).wait(5).attempt(503).fault("status");
    j.op("c").at(2).attempt(200);
    j.op("d").at(3).attempt(201);
    return j.run();
}

TEST(success_rate, from_the_journal_names_the_failed_operations) {
    const record::verdict v = test::run_check(R"(check = "success_rate")", three_of_four());
    EXPECT_FALSE(v.passed);
    EXPECT_EQ(v.summary, "3 of 4 operations succeeded (0.75, min 0.99, from the journal)");
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_EQ(v.evidence[0].operation, "b");
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(2u, 3u));
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("last of 2 attempts: #3 POST /charge on conn 3 at 7.0ms→8.0ms: 503 [fault status"));
}

TEST(success_rate, client_records_take_precedence) {
    test::journal_builder j;
    j.op("a").attempt(200);
    j.client(test::client_op("a", 0, 1, true));
    record::client_record failed = test::client_op("x", 0, 30, false, 3);
    failed.attempt_outcomes = "connection_refused, connection_refused, connection_refused";
    j.client(failed);
    const record::verdict v = test::run_check("check = \"success_rate\"\nmin = 0.9\n", j.run());
    EXPECT_FALSE(v.passed);
    EXPECT_THAT(v.summary, HasSubstr("1 of 2 operations succeeded (0.5, min 0.9, from client records)"));
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_EQ(v.evidence[0].operation, "x");
    EXPECT_TRUE(v.evidence[0].seqs.empty());
    EXPECT_THAT(v.evidence[0].detail,
                HasSubstr("attempts_exhausted after 3 attempts (connection_refused, connection_refused, connection_refused)"));
}

TEST(success_rate, enough_successes_pass) {
    const record::verdict v = test::run_check("check = \"success_rate\"\nmin = 0.75\n", three_of_four());
    EXPECT_TRUE(v.passed);
    EXPECT_TRUE(v.evidence.empty());
}

// Nothing reached the server — a client that gave up at once, or was killed — is no success.
TEST(success_rate, no_operation_at_all_fails_with_the_processes) {
    record::run_record run;
    run.command = record::command_result{};
    record::process_record p;
    p.op = 0;
    p.pid = 4242;
    p.exit_status = 2;
    run.command->processes.push_back(p);
    const record::verdict v = test::run_check("check = \"success_rate\"\nmin = 1\n", run);
    EXPECT_FALSE(v.passed);
    EXPECT_EQ(v.summary, "no operation reached the server, so none succeeded (min 1)");
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_EQ(v.evidence[0].detail, "the journal holds no attempt; process 0 (pid 4242) exited with status 2");
    // min = 0 asks for nothing, but a run with 0 operations is never a pass (check.hpp).
    EXPECT_EQ(test::run_check("check = \"success_rate\"\nmin = 0\n", run).outcome(),
              record::verdict_outcome::insufficient_evidence);
}

TEST(success_rate, bad_config) {
    const auto errors = test::parse_errors("check = \"success_rate\"\nmin = 1.5\n");
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].to_string(), "scenario.toml:2:7: check \"success_rate\": min: must be in [0, 1], got 1.5");
}

}  // namespace
}  // namespace faultline::checks
