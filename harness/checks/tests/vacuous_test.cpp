// No check passes a run in which nothing happened: a client killed before its first request, a
// command that never ran. Table-driven over every registered check, so a new check is covered (or
// this test fails until it is added to the table).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "check_test_support.hpp"

namespace faultline::checks {
namespace {

using ::testing::HasSubstr;

// The smallest valid [[expect]] table of each check.
const std::map<std::string, std::string, std::less<>>& minimal_tables() {
    static const std::map<std::string, std::string, std::less<>> tables{
        {"amplification", ""},      {"attempt_timeout", ""}, {"backoff", ""},  {"deadline", ""},
        {"desynchronized", ""},     {"grpc_backoff", ""},     {"grpc_hedging", ""},
        {"grpc_max_attempts", ""},  {"grpc_pushback", ""},    {"grpc_retryable_codes", ""},
        {"grpc_throttling", ""},    {"idempotency_keys", ""}, {"jittered", ""},
        {"latency", "p99 = \"1s\""}, {"max_attempts", ""},  {"no_double_effects", ""},
        {"no_retry_on_status", ""}, {"rejects_bad_certificates", ""}, {"rejects_truncated_replies", ""}, {"retry_after", ""},   {"retry_budget", ""},
        {"spacing", ""},            {"success_rate", "min = 0.0"},
    };
    return tables;
}

expectation expect(std::string_view name, bool expect_failure = false) {
    const auto table = minimal_tables().find(name);
    std::string text = "check = \"" + std::string(name) + "\"\n";
    if (table != minimal_tables().end()) text += table->second + "\n";
    if (expect_failure) text += "expect_failure = true\n";
    return test::parse_ok(text);
}

record::run_record killed_command_client() {
    record::run_record run;
    record::command_result command;
    command.exit_status = 137;
    command.killed = true;
    command.processes.push_back(record::process_record{0, 4242, 0, 5'000'000, 137, 9, true});
    run.command = command;
    return run;
}

TEST(vacuous_passes, the_table_names_every_registered_check) {
    for (const std::string_view name : check_names()) {
        EXPECT_TRUE(minimal_tables().contains(name)) << name << ": add its smallest [[expect]] table here";
    }
}

TEST(vacuous_passes, no_check_passes_an_empty_run) {
    for (const record::run_record& run : {record::run_record{}, killed_command_client()}) {
        for (const std::string_view name : check_names()) {
            for (const bool expect_failure : {false, true}) {
                const record::verdict v = evaluate(expect(name, expect_failure), run);
                EXPECT_NE(v.outcome(), record::verdict_outcome::pass)
                    << name << (expect_failure ? " (expect_failure)" : "") << ": " << v.summary;
            }
        }
    }
}

// A run that happened but holds nothing most checks judge: three GETs, each answered 200 at its first
// attempt, no fault, no deadline, no retry, no committed effect.
record::run_record three_plain_gets() {
    test::journal_builder j;
    j.op("a", "GET", "/item").attempt(200);
    j.op("b", "GET", "/item").at(10).attempt(200);
    j.op("c", "GET", "/item").at(20).attempt(200);
    return j.run();
}

// What each check makes of three_plain_gets, why, and (when it cannot judge) what its summary names as missing.
struct plain_gets_outcome {
    record::verdict_outcome outcome;
    std::string_view missing;  // a substring of the summary; empty for a pass
};

const std::map<std::string, plain_gets_outcome, std::less<>>& plain_gets_outcomes() {
    using enum record::verdict_outcome;
    static const std::map<std::string, plain_gets_outcome, std::less<>> outcomes{
        // 3 first attempts: no window holds min_first_attempts (10) of them.
        {"amplification", {insufficient_evidence, "no window judged"}},
        // No timeout in the table and none declared (with one: no attempt was hung).
        {"attempt_timeout", {insufficient_evidence, "no attempt timeout to judge against"}},
        // No curve in the table and none declared (with one: no gap before a retry).
        {"backoff", {insufficient_evidence, "no backoff curve to judge against"}},
        {"deadline", {insufficient_evidence, "no operation had a deadline"}},
        {"desynchronized", {insufficient_evidence, "no retry index had"}},
        // No service config given and none declared: the grpc_* checks have nothing to judge against.
        {"grpc_backoff", {insufficient_evidence, "no gRPC service config to judge against"}},
        {"grpc_hedging", {insufficient_evidence, "no gRPC service config to judge against"}},
        {"grpc_max_attempts", {insufficient_evidence, "no gRPC service config to judge against"}},
        {"grpc_pushback", {insufficient_evidence, "no gRPC service config to judge against"}},
        {"grpc_retryable_codes", {insufficient_evidence, "no gRPC service config to judge against"}},
        {"grpc_throttling", {insufficient_evidence, "no gRPC service config to judge against"}},
        {"idempotency_keys", {insufficient_evidence, "no operation with POST, PATCH: nothing to judge"}},
        {"jittered", {insufficient_evidence, "too few retries"}},
        // Judges every operation's duration: these are real ones.
        {"latency", {pass, ""}},
        // Judges every operation's attempt count: 1 each is within any limit, and it was counted.
        {"max_attempts", {pass, ""}},
        {"no_double_effects", {insufficient_evidence, "no committed effect: nothing to judge"}},
        // 200 is not in the retry library's status table: nothing retried or not retried that it judges.
        {"no_retry_on_status", {insufficient_evidence, "no response with a status in the judged set"}},
        {"rejects_bad_certificates", {insufficient_evidence, "no connection was offered a bad certificate"}},
        {"rejects_truncated_replies", {insufficient_evidence, "no truncate, tls_truncate or mid-response reset fired"}},
        {"retry_after", {insufficient_evidence, "0 responses carried Retry-After"}},
        {"retry_budget", {insufficient_evidence, "no retry: nothing to judge"}},
        {"spacing", {insufficient_evidence, "no gap before a retry to judge"}},
        // Judges every operation's success: 3 of 3.
        {"success_rate", {pass, ""}},
    };
    return outcomes;
}

TEST(vacuous_passes, a_run_with_nothing_a_check_judges_passes_only_the_checks_that_judge_it) {
    const record::run_record run = three_plain_gets();
    for (const std::string_view name : check_names()) {
        const auto expected = plain_gets_outcomes().find(name);
        ASSERT_NE(expected, plain_gets_outcomes().end()) << name << ": add what a run of plain GETs gives it";
        const record::verdict v = evaluate(expect(name), run);
        EXPECT_EQ(v.outcome(), expected->second.outcome) << name << ": " << v.summary;
        EXPECT_THAT(v.summary, HasSubstr(std::string(expected->second.missing))) << name;
    }
}

TEST(vacuous_passes, a_pass_over_nothing_says_why_it_is_not_judged) {
    // max_attempts alone would pass it: no operation went over any limit.
    const record::verdict v = evaluate(expect("max_attempts"), record::run_record{});
    EXPECT_EQ(v.outcome(), record::verdict_outcome::insufficient_evidence);
    EXPECT_THAT(v.summary, HasSubstr("nothing to judge: the run had 0 operations"));
}

TEST(vacuous_passes, a_failure_over_nothing_stays_a_failure) {
    // success_rate fails a run in which nothing reached the server; that is evidence, not its absence.
    const record::verdict v = evaluate(test::parse_ok("check = \"success_rate\"\n"), killed_command_client());
    EXPECT_EQ(v.outcome(), record::verdict_outcome::fail);
}

TEST(vacuous_passes, one_operation_is_judged_as_before) {
    test::journal_builder j;
    j.op("a").attempt(200).committed();
    const record::verdict v = evaluate(expect("no_double_effects"), j.run());
    EXPECT_EQ(v.outcome(), record::verdict_outcome::pass);
}

}  // namespace
}  // namespace faultline::checks
