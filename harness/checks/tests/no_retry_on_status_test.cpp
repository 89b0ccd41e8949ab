#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "check_test_support.hpp"

namespace faultline::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr std::string_view default_check = R"(check = "no_retry_on_status")";
constexpr std::string_view strict_check = "check = \"no_retry_on_status\"\nstrict = true\n";

TEST(no_retry_on_status, a_retry_after_404_is_named_with_both_attempts) {
    test::journal_builder j;
    j.op("a").attempt(404).fault("status").wait(3).attempt(200).wait(3).attempt(200);
    j.op("b").at(1).attempt(503).wait(3).attempt(200);
    const record::verdict v = test::run_check(default_check, j.run());
    EXPECT_FALSE(v.passed);
    EXPECT_EQ(v.summary,
              "1 responses with a status never to retry (400, 401, 403, 404, 405, 409 unless key in use, 410, "
              "413 unless Retry-After, 414, 415, 422, 431, 451, 501, 505); 1 operations retried after one");
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_EQ(v.evidence[0].operation, "a");
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(1u, 2u));
    EXPECT_EQ(v.evidence[0].detail,
              "retried after a 404:\n#1 POST /charge on conn 1 at 0.0ms→1.0ms: 404 [fault status, rule r1]\n"
              "#2 POST /charge on conn 2 at 4.0ms→5.0ms: 200");
}

TEST(no_retry_on_status, a_retry_after_405_fails) {
    test::journal_builder j;
    j.op("a", "DELETE", "/items/1").attempt(405).wait(3).attempt(405);
    const record::verdict v = test::run_check(default_check, j.run());
    EXPECT_FALSE(v.passed);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_EQ(v.evidence[0].detail,
              "retried after a 405:\n#1 DELETE /items/1 on conn 1 at 0.0ms→1.0ms: 405\n#2 DELETE /items/1 on conn 2 at 4.0ms→5.0ms: 405");
}

TEST(no_retry_on_status, a_retry_after_413_without_retry_after_names_the_condition) {
    test::journal_builder j;
    j.op("a").attempt(413).wait(3).attempt(201);
    const record::verdict v = test::run_check(default_check, j.run());
    EXPECT_FALSE(v.passed);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(1u, 2u));
    EXPECT_EQ(v.evidence[0].detail,
              "retried after a 413 without Retry-After:\n#1 POST /charge on conn 1 at 0.0ms→1.0ms: 413\n"
              "#2 POST /charge on conn 2 at 4.0ms→5.0ms: 201");
}

// RFC 9110 §15.5.9 (408: the client MAY repeat) and §15.5.14 (413 with Retry-After: the client MAY
// try again after it): a client doing so is correct, and only `strict` refuses it.
TEST(no_retry_on_status, retrying_408_and_413_with_retry_after_passes_by_default_and_fails_under_strict) {
    test::journal_builder j;
    j.op("slow").attempt(408).wait(3).attempt(200);
    j.op("large").at(10).attempt(413).retry_after(2000).wait(2000).attempt(200);
    const record::run_record run = j.run();
    const record::verdict standard = test::run_check(default_check, run);
    EXPECT_TRUE(standard.passed) << standard.summary;
    EXPECT_EQ(standard.evidence_total, 0u);

    const record::verdict strict = test::run_check(strict_check, run);
    EXPECT_FALSE(strict.passed);
    EXPECT_THAT(strict.summary, HasSubstr("(400, 401, 403, 404, 405, 408, 409 unless key in use, 410, 413, 414,"));
    ASSERT_EQ(strict.evidence.size(), 2u);
    EXPECT_EQ(strict.evidence[0].operation, "slow");
    EXPECT_EQ(strict.evidence[0].detail,
              "retried after a 408 (never retried under strict):\n#1 POST /charge on conn 1 at 0.0ms→1.0ms: 408\n"
              "#2 POST /charge on conn 2 at 4.0ms→5.0ms: 200");
    EXPECT_EQ(strict.evidence[1].operation, "large");
    EXPECT_THAT(strict.evidence[1].detail, HasSubstr("retried after a 413 with Retry-After (never retried under strict):\n"
                                                     "#3 POST /charge on conn 3 at 10.0ms→11.0ms: 413\n"));
}

// A retried 408 is judged (and correct): "nothing to judge" means no status of the table at all.
TEST(no_retry_on_status, only_a_retried_408_passes_by_default) {
    test::journal_builder j;
    j.op("slow").attempt(408).wait(3).attempt(200);
    const record::verdict v = test::run_check(default_check, j.run());
    EXPECT_EQ(v.outcome(), record::verdict_outcome::pass) << v.summary;
    EXPECT_THAT(v.summary, HasSubstr("0 responses with a status never to retry"));
}

TEST(no_retry_on_status, a_run_without_a_status_of_the_table_is_insufficient_evidence) {
    test::journal_builder j;
    j.op("a").attempt(200);
    j.op("b").at(1).lost(record::wire_outcome::reset).wait(3).attempt(201);
    for (const std::string_view text : {default_check, strict_check}) {
        const record::verdict v = test::run_check(text, j.run());
        EXPECT_EQ(v.outcome(), record::verdict_outcome::insufficient_evidence) << text;
        EXPECT_EQ(v.summary, "no response with a status in the judged set (the retry library's status table): "
                             "nothing to judge");
    }
}

TEST(no_retry_on_status, a_listed_set_judges_only_its_statuses) {
    test::journal_builder j;
    j.op("a").attempt(503).wait(3).attempt(200);
    const record::verdict v = test::run_check("check = \"no_retry_on_status\"\nstatuses = [404]\n", j.run());
    EXPECT_EQ(v.outcome(), record::verdict_outcome::insufficient_evidence) << v.summary;
    EXPECT_EQ(v.summary, "no response with a status in the judged set (the listed statuses): nothing to judge");
}

TEST(no_retry_on_status, a_409_is_retryable_only_when_its_key_is_in_use) {
    test::journal_builder j;
    j.op("in-flight").attempt(409).effect(record::effect_kind::conflict).key("k1").wait(3).attempt(201).key("k1");
    j.op("conflict").at(10).attempt(409).wait(3).attempt(201);
    j.op("mismatch").at(20).attempt(422).effect(record::effect_kind::conflict).key("k3").wait(3).attempt(201).key("k3");
    const record::run_record run = j.run();
    for (const std::string_view text : {default_check, strict_check}) {
        const record::verdict v = test::run_check(text, run);
        EXPECT_FALSE(v.passed);
        ASSERT_EQ(v.evidence.size(), 2u) << text;
        EXPECT_EQ(v.evidence[0].operation, "conflict");
        EXPECT_THAT(v.evidence[0].detail, HasSubstr("retried after a 409 that is not an idempotency key in use:\n"));
        EXPECT_EQ(v.evidence[1].operation, "mismatch");
        EXPECT_THAT(v.evidence[1].detail, HasSubstr("retried after a 422:\n"));
        EXPECT_THAT(v.summary, HasSubstr("2 responses with a status never to retry"));  // the in-flight 409 is not one
    }
}

TEST(no_retry_on_status, stopping_at_a_final_status_passes) {
    test::journal_builder j;
    j.op("a").attempt(404);
    j.op("b").at(1).attempt(413);
    j.op("c").at(2).attempt(503).wait(3).attempt(200);
    const record::verdict v = test::run_check(default_check, j.run());
    EXPECT_TRUE(v.passed);
    EXPECT_THAT(v.summary, HasSubstr("2 responses with a status never to retry"));
}

TEST(no_retry_on_status, statuses_with_conditions_replace_the_default_list) {
    test::journal_builder j;
    j.op("listed").attempt(400).wait(3).attempt(200);
    j.op("unlisted").at(10).attempt(404).wait(3).attempt(200);
    j.op("waited").at(20).attempt(422).retry_after(5).wait(5).attempt(200);
    j.op("not-waited").at(30).attempt(422).wait(5).attempt(200);
    const record::verdict v = test::run_check(
        "check = \"no_retry_on_status\"\nstatuses = [400, { status = 422, unless = \"retry_after\" }]\n", j.run());
    EXPECT_FALSE(v.passed);
    EXPECT_EQ(v.summary,
              "2 responses with a status never to retry (400, 422 unless Retry-After); 2 operations retried after one");
    ASSERT_EQ(v.evidence.size(), 2u);
    EXPECT_EQ(v.evidence[0].operation, "listed");
    EXPECT_EQ(v.evidence[1].operation, "not-waited");
    EXPECT_THAT(v.evidence[1].detail, HasSubstr("retried after a 422 without Retry-After:\n"));
}

TEST(no_retry_on_status, a_listed_409_may_keep_its_key_in_use_condition) {
    test::journal_builder j;
    j.op("a").attempt(409).effect(record::effect_kind::conflict).wait(3).attempt(201);
    EXPECT_FALSE(test::run_check("check = \"no_retry_on_status\"\nstatuses = [409]\n", j.run()).passed);
    EXPECT_TRUE(test::run_check(
                    "check = \"no_retry_on_status\"\nstatuses = [{ status = 409, unless = \"key_in_use\" }]\n", j.run())
                    .passed);
}

TEST(no_retry_on_status, bad_statuses_are_reported_by_their_path) {
    const auto only_error = [](std::string_view statuses) {
        const auto errors = test::parse_errors("check = \"no_retry_on_status\"\nstatuses = " + std::string(statuses) + "\n");
        EXPECT_EQ(errors.size(), 1u) << statuses;
        return errors.empty() ? std::string{} : errors[0].to_string();
    };
    EXPECT_EQ(only_error("[404, 99]"),
              "scenario.toml:2:18: check \"no_retry_on_status\": statuses[1]: must be in [100, 599], got 99");
    EXPECT_EQ(only_error("\"404\""), "scenario.toml:2:12: check \"no_retry_on_status\": statuses: expected an array, got a string");
    EXPECT_EQ(only_error("[404, \"413\"]"),
              "scenario.toml:2:18: check \"no_retry_on_status\": statuses[1]: expected a status such as 404 or "
              "{ status = 413, unless = \"retry_after\" }, got a string");
    EXPECT_EQ(only_error("[{ status = 413, unless = \"later\" }]"),
              "scenario.toml:2:38: check \"no_retry_on_status\": statuses[0]: unless: unknown value \"later\"; "
              "allowed: retry_after, key_in_use");
    EXPECT_EQ(only_error("[400, { unless = \"retry_after\" }]"),
              "scenario.toml:2:18: check \"no_retry_on_status\": statuses[1]: missing required key \"status\"");
    EXPECT_EQ(only_error("[{ status = 413, when = \"retry_after\" }]"),
              "scenario.toml:2:29: check \"no_retry_on_status\": statuses[0]: unknown key \"when\"; allowed: status, "
              "unless");
    EXPECT_EQ(only_error("[{ status = 600 }]"),
              "scenario.toml:2:24: check \"no_retry_on_status\": statuses[0]: status: must be in [100, 599], got 600");
    EXPECT_EQ(only_error("[{ status = 404, unless = \"key_in_use\" }]"),
              "scenario.toml:2:38: check \"no_retry_on_status\": statuses[0]: unless: \"key_in_use\" applies only to "
              "status 409, got 404");
    EXPECT_EQ(only_error("[404, 413, { status = 404 }]"),
              "scenario.toml:2:23: check \"no_retry_on_status\": statuses[2]: 404 is listed twice");
    EXPECT_EQ(only_error("[]"), "scenario.toml:2:12: check \"no_retry_on_status\": statuses: needs at least one status");
}

TEST(no_retry_on_status, every_bad_item_is_reported) {
    const auto errors = test::parse_errors("check = \"no_retry_on_status\"\nstatuses = [99, 404, true]\n");
    ASSERT_EQ(errors.size(), 2u);
    EXPECT_THAT(errors[0].message, HasSubstr("statuses[0]: must be in [100, 599], got 99"));
    EXPECT_THAT(errors[1].message, HasSubstr("statuses[2]: expected a status such as 404"));
    EXPECT_THAT(errors[1].message, HasSubstr("got a boolean"));
}

TEST(no_retry_on_status, bad_strict) {
    auto errors = test::parse_errors("check = \"no_retry_on_status\"\nstrict = true\nstatuses = [404]\n");
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].to_string(),
              "scenario.toml:2:10: check \"no_retry_on_status\": strict: give either statuses or strict = true, not both");
    errors = test::parse_errors("check = \"no_retry_on_status\"\nstrict = \"yes\"\n");
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].to_string(),
              "scenario.toml:2:10: check \"no_retry_on_status\": strict: expected true or false, got a string");
    errors = test::parse_errors("check = \"no_retry_on_status\"\nstrict = false\nstatuses = [404]\nstrictly = 1\n");
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_THAT(errors[0].message, HasSubstr("unknown key \"strictly\"; allowed: check, expect_failure, failures_only"));
    EXPECT_THAT(errors[0].message, HasSubstr("statuses, strict"));
}

}  // namespace
}  // namespace faultline::checks
