#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "check_test_support.hpp"

namespace faultline::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr const char* table = "check = \"rejects_truncated_replies\"\n";

record::process_record process(std::int64_t pid, double started_ms, double finished_ms, int exit_status) {
    record::process_record p;
    p.pid = pid;
    p.started_ns = test::ms(started_ms);
    p.finished_ns = test::ms(finished_ms);
    p.exit_status = exit_status;
    return p;
}

// The bad client: the cut body was its answer.
TEST(rejects_truncated_replies, a_builtin_client_that_recorded_success_after_a_cut_fails_with_the_cut) {
    test::journal_builder j;
    j.op("a", "GET", "/report").attempt(200).committed().fault("tls_truncate", "cut");
    j.last().outcome = record::wire_outcome::truncated;
    j.client(test::client_op("a", 0, 2, true));
    j.op("b", "GET", "/report").attempt(200);
    j.client(test::client_op("b", 0, 2, true));
    const record::verdict v = test::run_check(table, j.run());
    EXPECT_FALSE(v.passed);
    EXPECT_FALSE(v.insufficient_evidence);
    EXPECT_EQ(v.summary, "1 replies cut short; 0 retried, 1 ended an operation the client's result judges: 1 taken as a whole reply");
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_EQ(v.evidence[0].operation, "a");
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(1u));
    EXPECT_THAT(v.evidence[0].detail,
                HasSubstr("a reply cut short (fault `tls_truncate`, rule `cut`) ended the operation, and the builtin "
                          "client recorded success"));
}

TEST(rejects_truncated_replies, a_client_that_failed_or_retried_after_a_cut_passes) {
    test::journal_builder j;
    j.op("gave-up").attempt(200).fault("truncate");
    j.last().outcome = record::wire_outcome::truncated;
    j.client(test::client_op("gave-up", 0, 2, false));
    j.op("retried").attempt(200).fault("tls_truncate");
    j.last().outcome = record::wire_outcome::truncated;
    j.wait(100).attempt(200);
    j.client(test::client_op("retried", 0, 200, true, 2));
    const record::verdict v = test::run_check(table, j.run());
    EXPECT_TRUE(v.passed) << v.summary;
    EXPECT_EQ(v.summary, "2 replies cut short; 1 retried, 1 ended an operation the client's result judges: 0 taken as a whole reply");
}

// A command client is judged by the exit status of the process the cut reached: curl's 56 ("unexpected
// eof while reading") passes, an exit 0 fails.
TEST(rejects_truncated_replies, a_command_process_is_judged_by_its_exit_status) {
    for (const int exit_status : {0, 56}) {
        test::journal_builder j;
        j.op("a", "GET", "/report").at(10).attempt(200).fault("tls_truncate");
        j.last().outcome = record::wire_outcome::truncated;
        record::run_record run = j.run();
        run.command.emplace();
        run.command->processes.push_back(process(4242, 0, 50, exit_status));
        const record::verdict v = test::run_check(table, run);
        EXPECT_EQ(v.passed, exit_status != 0) << v.summary;
        if (exit_status == 0) {
            ASSERT_EQ(v.evidence.size(), 1u);
            EXPECT_THAT(v.evidence[0].detail, HasSubstr("its process (pid 4242) exited with status 0"));
        }
    }
}

TEST(rejects_truncated_replies, overlapping_processes_or_no_cut_are_insufficient_evidence) {
    test::journal_builder j;
    j.op("a", "GET", "/report").at(10).attempt(200).fault("tls_truncate");
    j.last().outcome = record::wire_outcome::truncated;
    record::run_record run = j.run();
    run.command.emplace();
    run.command->processes.push_back(process(1, 0, 50, 0));
    run.command->processes.push_back(process(2, 5, 60, 0));
    const record::verdict overlapped = test::run_check(table, run);
    EXPECT_TRUE(overlapped.insufficient_evidence);
    EXPECT_FALSE(overlapped.passed);
    EXPECT_THAT(overlapped.summary, HasSubstr("command processes overlapped"));

    test::journal_builder none;
    none.op("a").attempt(200);
    none.op("b").lost(record::wire_outcome::truncated);  // the client went away mid-reply: no fault cut it
    const record::verdict nothing = test::run_check(table, none.run());
    EXPECT_TRUE(nothing.insufficient_evidence);
    EXPECT_THAT(nothing.summary, HasSubstr("no truncate, tls_truncate or mid-response reset fired"));
}

}  // namespace
}  // namespace faultline::checks
