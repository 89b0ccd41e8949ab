// The verdicts every run gets: evidence_intact (no reset or rule change through the control API)
// and fired:<rule> (min_fired, strict).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "check_test_support.hpp"
#include "faultline/checks/run_verdicts.hpp"

namespace faultline::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

record::server_event event(record::server_event_kind kind, std::uint64_t seq, double at_ms, std::string rule = "",
                   std::string detail = "") {
    return record::server_event{kind, seq, test::ms(at_ms), std::move(rule), std::move(detail), "127.0.0.1:40112"};
}

record::run_record charged_twice() {
    test::journal_builder j;
    j.op("a").attempt(201).committed().attempt(201).committed();
    return j.run();
}

TEST(evidence_intact, a_client_that_reset_the_server_and_removed_a_rule_fails_with_each_action) {
    record::run_record run = charged_twice();
    run.server_events = {event(record::server_event_kind::reset, 3, 12.5),
                         event(record::server_event_kind::idle_timeout, 4, 13),
                         event(record::server_event_kind::rule_removed, 5, 14, "lose-response"),
                         event(record::server_event_kind::rules_cleared, 6, 15, "", "lose-response, slow")};
    const record::verdict v = evidence_intact(run);
    EXPECT_EQ(v.check, "evidence_intact");
    EXPECT_EQ(v.outcome(), record::verdict_outcome::fail);
    EXPECT_EQ(v.summary,
              "the control API changed the server during the run (1 reset, 1 rule_removed, 1 rules_cleared): the "
              "journal no longer shows the whole run; limits enforced: 1 idle_timeout");
    ASSERT_EQ(v.evidence.size(), 3u);
    EXPECT_EQ(v.evidence[0].detail, "reset at 12.5ms by 127.0.0.1:40112");
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(3u));
    EXPECT_EQ(v.evidence[1].detail, "rule_removed of rule `lose-response` at 14.0ms by 127.0.0.1:40112");
    EXPECT_EQ(v.evidence[2].detail, "rules_cleared at 15.0ms by 127.0.0.1:40112 (lose-response, slow)");
}

TEST(evidence_intact, an_added_rule_is_a_control_action_too) {
    record::run_record run = charged_twice();
    run.server_events = {event(record::server_event_kind::rule_added, 2, 1, "always-200", "{\"kind\":\"status\"}")};
    const record::verdict v = evidence_intact(run);
    EXPECT_EQ(v.outcome(), record::verdict_outcome::fail);
    EXPECT_THAT(v.evidence.at(0).detail, HasSubstr("rule_added of rule `always-200`"));
}

// A spill file changed behind the server's back fails it too, in its own words: no client asked.
TEST(evidence_intact, an_altered_spill_file_fails_and_says_so) {
    record::run_record run = charged_twice();
    run.server_events = {event(record::server_event_kind::evidence_altered, 7, 20, "", "2 blocks of 512 records left out")};
    const record::verdict v = evidence_intact(run);
    EXPECT_EQ(v.outcome(), record::verdict_outcome::fail);
    EXPECT_EQ(v.summary, "the journal's spill file was altered during the run (1 evidence_altered): the journal no "
                         "longer shows the whole run");
    EXPECT_THAT(v.evidence.at(0).detail, HasSubstr("2 blocks of 512 records left out"));
    run.server_events.push_back(event(record::server_event_kind::reset, 8, 21));
    EXPECT_EQ(evidence_intact(run).summary.rfind("the control API changed the server during the run (1 reset); the "
                                                 "journal's spill file was altered",
                                                 0),
              0u);
}

TEST(evidence_intact, a_run_without_control_actions_passes_and_counts_the_limits) {
    record::run_record run = charged_twice();
    EXPECT_EQ(evidence_intact(run).outcome(), record::verdict_outcome::pass);
    EXPECT_EQ(evidence_intact(run).summary, "no reset or rule change during the run");
    run.server_events = {event(record::server_event_kind::connection_refused, 1, 1),
                         event(record::server_event_kind::connection_refused, 2, 2),
                         event(record::server_event_kind::header_timeout, 3, 3)};
    const record::verdict v = evidence_intact(run);
    EXPECT_EQ(v.outcome(), record::verdict_outcome::pass);
    EXPECT_EQ(v.summary,
              "no reset or rule change during the run; limits enforced: 2 connection_refused, 1 header_timeout");
    EXPECT_THAT(v.evidence, IsEmpty());
}

TEST(firing_verdicts, a_rule_below_its_min_fired_fails) {
    record::run_record run = charged_twice();
    run.rule_firings = {record::rule_firing{"lose-response", "lost_response", 1, 3}, record::rule_firing{"slow", "delay", 0, {}},
                        record::rule_firing{"busy", "status", 5, 5}};
    const std::vector<record::verdict> verdicts = firing_verdicts(run);
    ASSERT_EQ(verdicts.size(), 2u);
    EXPECT_EQ(verdicts[0].check, "fired:lose-response");
    EXPECT_EQ(verdicts[0].outcome(), record::verdict_outcome::fail);
    EXPECT_EQ(verdicts[0].summary, "rule `lose-response` (lost_response) fired 1 time (min_fired = 3)");
    ASSERT_EQ(verdicts[0].evidence.size(), 1u);
    EXPECT_EQ(verdicts[0].evidence[0].detail,
              "rule `lose-response` (lost_response) fired 1 of the 3 times required; the client reached the server "
              "with 2 attempts: the fault it stands for was exercised too little");
    EXPECT_EQ(verdicts[1].check, "fired:busy");
    EXPECT_EQ(verdicts[1].outcome(), record::verdict_outcome::pass);
}

TEST(firing_verdicts, strict_requires_every_rule_to_fire_once) {
    record::run_record run = charged_twice();
    run.rule_firings = {record::rule_firing{"slow", "delay", 0, {}}, record::rule_firing{"busy", "status", 2, {}}};
    EXPECT_THAT(firing_verdicts(run), IsEmpty());
    run.strict = true;
    const std::vector<record::verdict> verdicts = firing_verdicts(run);
    ASSERT_EQ(verdicts.size(), 2u);
    EXPECT_EQ(verdicts[0].outcome(), record::verdict_outcome::fail);
    EXPECT_EQ(verdicts[0].summary, "rule `slow` (delay) fired 0 times (strict)");
    EXPECT_THAT(verdicts[0].evidence.at(0).detail, HasSubstr("was never exercised"));
    EXPECT_EQ(verdicts[1].outcome(), record::verdict_outcome::pass);
}

TEST(firing_verdicts, min_fired_zero_asks_for_nothing_even_under_strict) {
    record::run_record run = charged_twice();
    run.strict = true;
    run.rule_firings = {record::rule_firing{"optional", "delay", 0, 0}};
    EXPECT_THAT(firing_verdicts(run), IsEmpty());
    EXPECT_THAT(never_fired(run), IsEmpty());
}

}  // namespace
}  // namespace faultline::checks
