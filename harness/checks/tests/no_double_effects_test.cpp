#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "check_test_support.hpp"

namespace faultline::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(no_double_effects, a_resend_without_a_key_after_a_lost_reply_commits_twice) {
    test::journal_builder j;
    j.op("a").lost(record::wire_outcome::reset).committed().fault("lost_response").wait(5).attempt(200).committed();
    j.op("b").at(1).attempt(200).committed();
    const record::verdict v = test::run_check(R"(check = "no_double_effects")", j.run());
    EXPECT_FALSE(v.passed);
    EXPECT_THAT(v.summary, HasSubstr("3 committed effects, 1 operations with more than one"));
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_EQ(v.evidence[0].operation, "a");
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(1u, 2u));
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("#1 POST /charge on conn 1 at 0.0ms→1.0ms: reset, effect committed [fault lost_response"));
}

TEST(no_double_effects, evidence_shows_a_silent_resend_on_the_kept_alive_connection) {
    test::journal_builder j;
    j.op("a").lost(record::wire_outcome::client_gone).committed().wait(5).attempt(200).committed();
    record::run_record run = j.run();
    run.journal[0].connection_request = 1;
    run.journal[1].connection = run.journal[0].connection;
    run.journal[1].connection_request = 2;
    const record::verdict v = test::run_check(R"(check = "no_double_effects")", run);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("\n#1 POST /charge on conn 1 at 0.0ms→1.0ms: client_gone"));
    EXPECT_THAT(v.evidence[0].detail,
                HasSubstr("\n#2 POST /charge on conn 1 (request 2, kept alive) at 6.0ms→7.0ms: 200, effect committed"));
}

TEST(no_double_effects, replays_pass_and_lost_replies_are_indeterminate) {
    test::journal_builder j;
    j.op("a").lost(record::wire_outcome::reset).committed().wait(5).attempt(200).effect(record::effect_kind::replayed);
    j.op("c").at(2).lost(record::wire_outcome::closed).committed();
    const record::verdict v = test::run_check(R"(check = "no_double_effects")", j.run());
    EXPECT_TRUE(v.passed);
    EXPECT_THAT(v.summary, HasSubstr("2 committed effects, 0 operations with more than one; 1 indeterminate"));
    EXPECT_TRUE(v.evidence.empty());
}

// Issue 31: a fleet's sidecars merged into one history. The operation is one identity across the
// instances; its second charge, made by another instance, is named with both instances.
TEST(no_double_effects, a_resend_to_another_instance_is_a_double_effect_naming_both_instances) {
    test::journal_builder j;
    j.op("a").lost(record::wire_outcome::reset).committed().fault("lost_response").wait(5).attempt(201).committed();
    j.op("b").at(1).lost(record::wire_outcome::reset).committed().wait(5).attempt(201).committed();
    record::run_record run = j.run();
    run.journal[0].instance = "host-1";  // a: lost on host-1, resent to host-2
    run.journal[1].instance = "host-2";
    run.journal[2].instance = "host-2";  // b: both on host-2
    run.journal[3].instance = "host-2";
    const record::verdict v = test::run_check(R"(check = "no_double_effects")", run);
    EXPECT_FALSE(v.passed);
    EXPECT_THAT(v.summary, HasSubstr("2 operations with more than one (1 of them committed by several instances)"));
    ASSERT_EQ(v.evidence.size(), 2u);
    const auto& across = v.evidence[0].operation == "a" ? v.evidence[0] : v.evidence[1];
    const auto& within = v.evidence[0].operation == "a" ? v.evidence[1] : v.evidence[0];
    EXPECT_THAT(across.detail, HasSubstr("2 committed effects by 2 instances (host-1, host-2):"));
    EXPECT_THAT(across.detail, HasSubstr(" POST /charge to host-1 on conn "));
    EXPECT_THAT(across.detail, HasSubstr(" POST /charge to host-2 on conn "));
    EXPECT_THAT(within.detail, HasSubstr("2 committed effects:"));
}

TEST(no_double_effects, takes_no_parameters) {
    const auto errors = test::parse_errors("check = \"no_double_effects\"\nmax = 1\n");
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].to_string(),
              "scenario.toml:2:1: check \"no_double_effects\": unknown key \"max\"; allowed: check, expect_failure, failures_only");
}

// A client that posts to a route the service does not declare gets 404s and commits nothing: the
// verdict says so, and which endpoint was nearest, instead of only "nothing to judge".
TEST(no_double_effects, nothing_to_judge_names_the_unmatched_requests_and_the_nearest_endpoint) {
    test::journal_builder j;
    j.op("a").attempt(404).effect(record::effect_kind::unmatched).wait(5).attempt(404).effect(record::effect_kind::unmatched);
    j.op("b", "GET", "/health").attempt(200);
    record::run_record run = j.run();
    run.server_events.push_back(record::server_event{record::server_event_kind::unmatched_route, 1, 0, "",
                                             "POST /charge; nearest POST /payments", "127.0.0.1:5000"});
    const record::verdict v = test::run_check(R"(check = "no_double_effects")", run);
    EXPECT_EQ(v.outcome(), record::verdict_outcome::insufficient_evidence);
    EXPECT_THAT(v.summary, HasSubstr("nothing to judge"));
    EXPECT_THAT(v.summary,
                HasSubstr("2 of 3 attempts matched no endpoint of the service (POST /charge; nearest POST /payments)"));
}

TEST(no_double_effects, a_verdict_on_matched_requests_says_nothing_of_unmatched_ones) {
    test::journal_builder j;
    j.op("a").attempt(201).committed();
    const record::verdict v = test::run_check(R"(check = "no_double_effects")", j.run());
    EXPECT_TRUE(v.passed);
    EXPECT_THAT(v.summary, ::testing::Not(HasSubstr("matched no endpoint")));
}

}  // namespace
}  // namespace faultline::checks
