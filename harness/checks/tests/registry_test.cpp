#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "check_test_support.hpp"

namespace faultline::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(check_registry, lists_exactly_the_registered_checks) {
    EXPECT_THAT(check_names(),
                ElementsAre("amplification", "attempt_timeout", "backoff", "deadline", "desynchronized",
                            "grpc_backoff", "grpc_hedging", "grpc_max_attempts", "grpc_pushback",
                            "grpc_retryable_codes", "grpc_throttling", "idempotency_keys", "jittered", "latency", "max_attempts", "no_double_effects", "no_retry_on_status",
                            "rejects_bad_certificates", "rejects_truncated_replies", "retry_after",
                            "retry_budget", "spacing", "success_rate"));
}

TEST(check_registry, every_check_has_a_summary) {
    for (const auto name : check_names()) EXPECT_FALSE(check_summary(name).empty()) << name;
    EXPECT_EQ(check_summary("no_double_effects"), "at most one committed effect per operation identity");
    EXPECT_EQ(check_summary("no_such_check"), "");
}

TEST(check_registry, unknown_check_lists_the_names) {
    const auto errors = test::parse_errors(R"(check = "max_atempts")");
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].where.line, 1u);
    EXPECT_EQ(errors[0].where.column, 9u);
    EXPECT_THAT(errors[0].message, HasSubstr("[[expect]]: check: unknown value \"max_atempts\"; allowed: "));
    EXPECT_THAT(errors[0].message, HasSubstr("amplification, attempt_timeout, backoff,"));
}

TEST(check_registry, missing_check_key_is_an_error) {
    const auto errors = test::parse_errors("max = 3");
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].to_string(), "scenario.toml:1:1: [[expect]]: missing required key \"check\"");
}

TEST(check_registry, unknown_key_names_file_position_and_allowed_keys) {
    const auto errors = test::parse_errors("check = \"max_attempts\"\nmax = 3\nmaxx = 4\n");
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].to_string(),
              "scenario.toml:3:1: check \"max_attempts\": unknown key \"maxx\"; allowed: check, expect_failure, failures_only, max");
}

TEST(check_registry, expect_failure_must_be_a_boolean) {
    const auto errors = test::parse_errors("check = \"max_attempts\"\nexpect_failure = \"yes\"\n");
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].to_string(),
              "scenario.toml:2:18: check \"max_attempts\": expect_failure: expected true or false, got a string");
}

TEST(check_registry, expect_failure_inverts_the_verdict) {
    test::journal_builder j;
    j.op("a").attempt(503).attempt(503).attempt(503).attempt(200);
    const record::run_record run = j.run();

    const expectation plain = test::parse_ok("check = \"max_attempts\"\nmax = 3\n");
    const record::verdict failed = evaluate(plain, run);
    EXPECT_FALSE(failed.passed);
    EXPECT_FALSE(failed.expected_to_fail);
    EXPECT_EQ(failed.check, "max_attempts");

    const expectation inverted = test::parse_ok("check = \"max_attempts\"\nmax = 3\nexpect_failure = true\n");
    const record::verdict as_expected = evaluate(inverted, run);
    EXPECT_TRUE(as_expected.passed);
    EXPECT_TRUE(as_expected.expected_to_fail);
    EXPECT_THAT(as_expected.summary, HasSubstr("failed as expected: "));
    EXPECT_EQ(as_expected.evidence.size(), 1u);

    const expectation lenient = test::parse_ok("check = \"max_attempts\"\nmax = 4\nexpect_failure = true\n");
    const record::verdict surprise = evaluate(lenient, run);
    EXPECT_FALSE(surprise.passed);
    EXPECT_THAT(surprise.summary, HasSubstr("expected to fail, but passed: "));
}

// One operation alone can show a client that never waits, never its jitter: only the failure of a
// `failures_only` check decides the run; its insufficient evidence is reported and leaves it alone.
TEST(check_registry, a_failures_only_check_decides_the_run_only_by_failing) {
    test::journal_builder j;
    j.op("a").attempt(503).attempt(503).attempt(503).attempt(200);
    record::run_record run = j.run();

    const expectation lone = test::parse_ok("check = \"max_attempts\"\nmax = 4\nfailures_only = true\n");
    EXPECT_TRUE(lone.failures_only);
    const expectation cannot_tell = test::parse_ok("check = \"jittered\"\nfailures_only = true\n");
    run.verdicts = {evaluate(lone, run), evaluate(cannot_tell, run)};
    EXPECT_TRUE(run.verdicts[0].passed);
    EXPECT_TRUE(run.verdicts[1].failures_only);
    EXPECT_EQ(run.verdicts[1].outcome(), record::verdict_outcome::insufficient_evidence);
    EXPECT_THAT(run.verdicts[1].summary, HasSubstr("not judged here, only a failure counts (failures_only): "));
    EXPECT_EQ(record::outcome_of(run), record::verdict_outcome::pass);

    const expectation strict = test::parse_ok("check = \"max_attempts\"\nmax = 3\nfailures_only = true\n");
    run.verdicts.push_back(evaluate(strict, run));
    EXPECT_EQ(run.verdicts[2].outcome(), record::verdict_outcome::fail);
    EXPECT_EQ(record::outcome_of(run), record::verdict_outcome::fail);

    const auto both = test::parse_errors("check = \"max_attempts\"\nexpect_failure = true\nfailures_only = true\n");
    ASSERT_EQ(both.size(), 1u);
    EXPECT_THAT(both[0].to_string(), HasSubstr("failures_only: a check expected to fail is judged by its failure already"));
}

TEST(check_registry, evidence_is_capped_and_counted) {
    test::journal_builder j;
    for (int i = 0; i < 30; ++i) j.op("op" + std::to_string(i)).attempt(503).attempt(503);
    const record::verdict v = evaluate(test::parse_ok("check = \"max_attempts\"\nmax = 1\n"), j.run());
    EXPECT_EQ(v.evidence.size(), record::evidence_limit);
    EXPECT_EQ(v.evidence_total, 30u);
}

TEST(check_parameters, bad_duration_names_the_key_and_the_units) {
    const auto errors = test::parse_errors("check = \"deadline\"\ntolerance = \"10 parsecs\"\n");
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].where.line, 2u);
    EXPECT_THAT(errors[0].message, HasSubstr("tolerance: bad duration \"10 parsecs\""));
}

TEST(check_parameters, every_error_is_reported) {
    const auto errors = test::parse_errors(
        "check = \"backoff\"\nbase = \"1s\"\ncap = \"2s\"\nmultiplier = 0.5\njitter = \"random\"\nfoo = 1\n");
    ASSERT_EQ(errors.size(), 3u);  // multiplier range, jitter value, foo
}

}  // namespace
}  // namespace faultline::checks
