// The HTML report's structure for a small known run: each chart holds the series and points the run
// implies (read back through the marks' data-* attributes), the page needs nothing from the network,
// and a 10,000-operation run is down-sampled as the page says and stays under 2 MB.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "faultline/reports/writer.hpp"

namespace faultline::reports {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using record::journal_record;

journal_record attempt(std::uint64_t seq, std::string op, std::uint32_t n, std::int64_t at_ms, int status,
                       record::effect_kind effect = record::effect_kind::none) {
    journal_record r;
    r.seq = seq;
    r.connection = static_cast<std::uint32_t>(seq);
    r.request_ns = at_ms * 1'000'000;
    r.finished_ns = r.request_ns + 1'000'000;
    r.method = "POST";
    r.target = "/charge";
    r.operation = std::move(op);
    r.attempt = n;
    r.status = static_cast<std::uint16_t>(status);
    r.effect = effect;
    return r;
}

// Two operations over 200 ms: "a" fails with an injected 503 and succeeds on its retry 99 ms later;
// "b" is charged twice (seqs 3 and 4, a retry 49 ms after the first), which no_double_effects names.
record::run_record known_run() {
    record::run_record run;
    run.scenario = "double <charge>";
    run.scenario_file = "suites/double.toml";
    run.seed = 5;
    run.duration = std::chrono::milliseconds{200};
    run.journal = {attempt(1, "a", 1, 0, 503), attempt(2, "a", 2, 100, 200, record::effect_kind::committed),
                   attempt(3, "b", 1, 0, 200, record::effect_kind::committed),
                   attempt(4, "b", 2, 50, 200, record::effect_kind::committed)};
    run.journal[0].rule = "fail-first";
    run.journal[0].fault = "status";
    run.verdicts = {
        record::verdict{"no_double_effects", false, false, "1 operations with more than one effect",
                         {record::evidence_item{"b", {3, 4}, "2 effects committed"}}, 1},
        record::verdict{"retry_budget", true, false,
                         "2 retries for 2 operations; token bucket (max 2, ratio 0.5): 0 retries issued at or below "
                         "half, lowest 1 tokens",
                         {}, 0}};
    run.verdicts.back().parameters = {{"max_tokens", 2}, {"token_ratio", 0.5}};
    return run;
}

std::string render(const std::vector<record::run_record>& runs) {
    return report_registry::instance().find("html")->render(runs);
}

// The markup of the first chart of `kind` after `from`, or "".
std::string chart(const std::string& page, std::string_view kind, std::size_t from = 0) {
    const std::size_t at = page.find("<svg class=\"chart\" data-chart=\"" + std::string(kind) + "\"", from);
    if (at == std::string::npos) return "";
    return page.substr(at, page.find("</svg>", at) + 6 - at);
}

std::size_t occurrences(const std::string& text, std::string_view what) {
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

TEST(html_report, load_chart_stacks_first_attempts_and_retries_per_bucket_and_shades_faults) {
    const std::string load = chart(render({known_run()}), "load");
    ASSERT_FALSE(load.empty());
    // 100 buckets of 2 ms: both first attempts at 0 ms, the retries at 50 ms and 100 ms.
    EXPECT_EQ(occurrences(load, "data-series=\"first\""), 1u);
    EXPECT_THAT(load, HasSubstr("data-series=\"first\" data-bucket=\"0\" data-count=\"2\""));
    EXPECT_EQ(occurrences(load, "data-series=\"retry\""), 2u);
    EXPECT_THAT(load, HasSubstr("data-series=\"retry\" data-bucket=\"25\" data-count=\"1\""));
    EXPECT_THAT(load, HasSubstr("data-series=\"retry\" data-bucket=\"50\" data-count=\"1\""));
    EXPECT_EQ(occurrences(load, "class=\"fault-window"), 1u);
    EXPECT_THAT(load, HasSubstr("class=\"fault-window fault-0\" data-rule=\"fail-first\" data-from=\"0\" data-to=\"0\" "
                                "data-fired=\"1\""));
    EXPECT_THAT(load, HasSubstr("<title>rule fail-first (status) fired 1 time in 0.0 ms–2.0 ms</title>"));
}

// A second rule, "slow", fires on seq 4 (50 ms, bucket 25), on a new attempt at 52 ms (bucket 26) and
// on seq 2 (100 ms, bucket 50): two windows of its own, in its own colour, beside fail-first's.
TEST(html_report, load_chart_shades_each_rules_windows_in_its_own_colour_with_a_legend) {
    record::run_record run = known_run();
    run.rule_firings = {{"fail-first", "status", 1, {}}, {"slow", "delay", 3, {}}, {"never", "reset", 0, {}}};
    run.journal.push_back(attempt(5, "c", 1, 52, 200));
    for (const std::size_t i : {1u, 3u, 4u}) {
        run.journal[i].rule = "slow";
        run.journal[i].fault = "delay";
    }
    const std::string page = render({run});
    const std::string load = chart(page, "load");
    EXPECT_EQ(occurrences(load, "class=\"fault-window"), 3u);
    EXPECT_THAT(load, HasSubstr("class=\"fault-window fault-0\" data-rule=\"fail-first\" data-from=\"0\" data-to=\"0\" "
                                "data-fired=\"1\""));
    EXPECT_THAT(load, HasSubstr("class=\"fault-window fault-1\" data-rule=\"slow\" data-from=\"25\" data-to=\"26\" "
                                "data-fired=\"2\""));
    EXPECT_THAT(load, HasSubstr("class=\"fault-window fault-1\" data-rule=\"slow\" data-from=\"50\" data-to=\"50\" "
                                "data-fired=\"1\""));
    EXPECT_THAT(load, HasSubstr("<title>rule slow (delay) fired 2 times in 50.0 ms–54.0 ms</title>"));
    // Each rule in its own band of the 166 px plot (top 24): fail-first above, slow below; a bucket is 8.4 px.
    EXPECT_THAT(load, HasSubstr("data-rule=\"fail-first\" data-from=\"0\" data-to=\"0\" data-fired=\"1\" x=\"50\" "
                                "y=\"24\" width=\"8.4\" height=\"83\""));
    EXPECT_THAT(load, HasSubstr("data-rule=\"slow\" data-from=\"25\" data-to=\"26\" data-fired=\"2\" x=\"260\" "
                                "y=\"107\" width=\"16.8\" height=\"83\""));
    EXPECT_THAT(load, Not(HasSubstr("data-rule=\"never\"")));
    // The legend names each rule that fired, with its colour, and no other.
    EXPECT_THAT(page, HasSubstr("<i class=\"fault-window fault-0\"></i>rule fail-first (status) fired in the bucket"));
    EXPECT_THAT(page, HasSubstr("<i class=\"fault-window fault-1\"></i>rule slow (delay) fired in the bucket"));
    EXPECT_THAT(page, Not(HasSubstr("rule never")));
    // The thumbnail shades the same windows.
    EXPECT_EQ(occurrences(chart(page, "load-thumbnail"), "class=\"fault-window"), 3u);
}

TEST(html_report, timeline_has_a_lane_per_operation_and_marks_commits_doubles_and_offenders) {
    const std::string timeline = chart(render({known_run()}), "timeline");
    EXPECT_EQ(occurrences(timeline, "class=\"lane\""), 2u);
    EXPECT_THAT(timeline, HasSubstr("data-operation=\"a\" data-attempts=\"2\""));
    EXPECT_THAT(timeline, HasSubstr("data-operation=\"b\" data-attempts=\"2\""));
    EXPECT_EQ(occurrences(timeline, "<rect class=\"attempt"), 4u);
    EXPECT_EQ(occurrences(timeline, "class=\"lane-double\""), 1u);
    EXPECT_THAT(timeline, HasSubstr("class=\"attempt server-error faulted\" data-seq=\"1\""));
    EXPECT_THAT(timeline, HasSubstr("class=\"attempt ok offending\" data-seq=\"3\""));
    EXPECT_THAT(timeline, HasSubstr("class=\"attempt ok offending\" data-seq=\"4\""));
    EXPECT_EQ(occurrences(timeline, "<circle class=\"commit\""), 1u);         // a's one effect
    EXPECT_EQ(occurrences(timeline, "<circle class=\"commit double\""), 2u);  // b's two
    // The hover text is the journal record.
    EXPECT_THAT(timeline, HasSubstr("<title>seq 1 · attempt 1 of a\nPOST /charge\nrequest at 0.0 ms, ended at 1.0 ms\n"
                                    "status 503\nfault status (rule fail-first)\neffect none, connection 1</title>"));
}

// A command client run once: its one process spans both attempts, which are ticked on its bar.
// Issue 31: a fleet's sidecar journals merged into one history. "b" was charged by host-1, its reply
// lost, and charged again by host-2; "a" stayed on host-1.
TEST(html_report, instances_chart_has_a_lane_per_instance_and_joins_commits_across_instances) {
    record::run_record run = known_run();
    for (journal_record& r : run.journal) r.instance = r.seq == 4 ? "host-2" : "host-1";
    const std::string page = render({run});
    EXPECT_THAT(page, HasSubstr("<h3>Instances</h3>"));
    const std::string lanes = chart(page, "instances");
    ASSERT_FALSE(lanes.empty());
    EXPECT_THAT(lanes, HasSubstr("data-instance=\"host-1\" data-attempts=\"3\""));
    EXPECT_THAT(lanes, HasSubstr("data-instance=\"host-2\" data-attempts=\"1\""));
    EXPECT_EQ(occurrences(lanes, "class=\"cross-instance\""), 1u);
    EXPECT_THAT(lanes, HasSubstr("class=\"cross-instance\" data-operation=\"b\""));
    EXPECT_THAT(lanes, HasSubstr("instance host-2"));  // the journal record on hover names it
}

TEST(html_report, no_instances_chart_for_one_instance) {
    record::run_record run = known_run();
    for (journal_record& r : run.journal) r.instance = "edge";
    EXPECT_THAT(render({run}), Not(HasSubstr("data-chart=\"instances\"")));
    EXPECT_THAT(render({known_run()}), Not(HasSubstr("data-chart=\"instances\"")));
}

TEST(html_report, processes_chart_draws_each_client_process_with_its_exit) {
    record::run_record run = known_run();
    run.command = record::command_result{};
    run.command->processes = {record::process_record{0, 4242, 0, 150'000'000, 0, std::nullopt, false}};
    const std::string processes = chart(render({run}), "processes");
    EXPECT_EQ(occurrences(processes, "<g class=\"process\""), 1u);
    EXPECT_THAT(processes, HasSubstr("data-pid=\"4242\" data-op=\"0\" data-exit=\"0\""));
    EXPECT_THAT(processes, HasSubstr("<rect class=\"proc ok\""));
    // Attempts read at 0, 0, 50 and 100 ms fall inside its life (0–150 ms); all four are ticked.
    EXPECT_EQ(occurrences(processes, "class=\"proc-attempt\""), 4u);
    EXPECT_THAT(processes, HasSubstr("<title>pid 4242 · operation 0\nstarted at 0.0 ms, exit seen at 150.0 ms (150.0 ms)\n"
                                     "exit status 0</title>"));
}

// Per-operation processes: killed and failed ones get their own class, and no attempt ticks.
TEST(html_report, processes_chart_marks_failed_and_killed_processes) {
    record::run_record run = known_run();
    run.command = record::command_result{};
    run.command->processes = {record::process_record{1, 10, 0, 20'000'000, 0, std::nullopt, false},
                              record::process_record{2, 11, 30'000'000, 60'000'000, 7, std::nullopt, false},
                              record::process_record{3, 12, 70'000'000, 200'000'000, 143, 15, true}};
    const std::string page = render({run});
    const std::string processes = chart(page, "processes");
    EXPECT_EQ(occurrences(processes, "<g class=\"process\""), 3u);
    EXPECT_THAT(processes, HasSubstr("data-pid=\"11\" data-op=\"2\" data-exit=\"7\""));
    EXPECT_THAT(processes, HasSubstr("<rect class=\"proc failed\""));
    EXPECT_THAT(processes, HasSubstr("<rect class=\"proc killed\""));
    EXPECT_THAT(processes, HasSubstr("ended by signal 15, killed by faultline (time limit or interrupt)</title>"));
    EXPECT_EQ(occurrences(processes, "proc-attempt"), 0u);
    EXPECT_THAT(page, HasSubstr("3 processes, 2 exited non-zero or were killed."));
}

TEST(html_report, processes_chart_shows_every_failed_process_and_a_sample_of_the_rest) {
    record::run_record run = known_run();
    run.command = record::command_result{};
    for (std::uint64_t op = 0; op < 300; ++op) {
        const int status = op % 60 == 7 ? 1 : 0;  // 5 of 300 fail
        run.command->processes.push_back(record::process_record{op, static_cast<std::int64_t>(1000 + op), 0,
                                                                 1'000'000, status, std::nullopt, false});
    }
    const std::string page = render({run});
    const std::string processes = chart(page, "processes");
    // The 5 that failed, then every 3rd of the 295 others (the stride that fits them in the 115 lanes left).
    EXPECT_EQ(occurrences(processes, "<g class=\"process\""), 104u);
    EXPECT_EQ(occurrences(processes, "<rect class=\"proc failed\""), 5u);
    EXPECT_THAT(page, HasSubstr("300 processes, 5 exited non-zero or were killed. Showing 104: all 5 that ended badly, "
                                "and one in 3 of the others."));
}

TEST(html_report, no_processes_chart_for_a_builtin_client) {
    EXPECT_EQ(chart(render({known_run()}), "processes"), "");
}

TEST(html_report, gap_histogram_bins_each_gap_before_retry_one) {
    const std::string gaps = chart(render({known_run()}), "gaps");
    // Gaps 49 ms and 99 ms on an axis to 99 × 1.05 ms in 30 bins: bins 14 and 28.
    EXPECT_EQ(occurrences(gaps, "data-series=\"gaps\""), 2u);
    EXPECT_THAT(gaps, HasSubstr("data-retry=\"1\" data-bin=\"14\" data-count=\"1\""));
    EXPECT_THAT(gaps, HasSubstr("data-retry=\"1\" data-bin=\"28\" data-count=\"1\""));
    EXPECT_THAT(gaps, Not(HasSubstr("class=\"envelope\"")));
}

TEST(html_report, gap_histogram_draws_the_declared_envelope) {
    record::run_record run = known_run();
    run.declared.backoff = record::declared_backoff{std::chrono::milliseconds{100}, std::chrono::seconds{1}, 2.0,
                                                     record::declared_jitter::equal, 0.2};
    const std::string gaps = chart(render({run}), "gaps");
    // Equal jitter before retry 1: [t/2, t] with t = 100 ms.
    EXPECT_THAT(gaps, HasSubstr("class=\"envelope\" data-from-ns=\"5e+07\" data-to-ns=\"1e+08\""));
}

TEST(html_report, budget_chart_replays_the_checks_token_bucket) {
    const std::string page = render({known_run()});
    const std::string budget = chart(page, "budget");
    ASSERT_FALSE(budget.empty());
    // From 2 tokens: seq 1's 503 takes one (1), seq 3's 200 adds 0.5, seq 4's 200 fills it again.
    // The y axis maps [0, 2] tokens onto [150, 22] px, so 1 token is y = 86 and 2 tokens y = 22.
    EXPECT_THAT(budget, HasSubstr("data-series=\"tokens\""));
    EXPECT_THAT(budget, HasSubstr(",86 "));
    EXPECT_THAT(budget, HasSubstr(",22"));
    EXPECT_THAT(page, HasSubstr("token bucket (max 2, ratio 0.5) replayed"));
}

TEST(html_report, no_budget_chart_without_a_token_bucket_check) {
    record::run_record run = known_run();
    run.verdicts.pop_back();
    EXPECT_EQ(chart(render({run}), "budget"), "");
}

// The chart draws from the check's parameters, not from its summary's wording.
TEST(html_report, budget_chart_reads_the_parameters_not_the_summary) {
    record::run_record run = known_run();
    run.verdicts.back().summary = "worded differently";
    EXPECT_THAT(render({run}), HasSubstr("token bucket (max 2, ratio 0.5) replayed"));
    run.verdicts.back().summary = "token bucket (max 2, ratio 0.5): but no parameters";
    run.verdicts.back().parameters.clear();
    EXPECT_EQ(chart(render({run}), "budget"), "");
}

TEST(html_report, index_links_every_scenario_with_its_verdict_and_a_thumbnail) {
    record::run_record passing = known_run();
    passing.scenario = "fine";
    passing.verdicts = {record::verdict{"no_double_effects", true, false, "ok", {}, 0}};
    const std::string page = render({known_run(), passing});
    EXPECT_THAT(page, HasSubstr("<h1>faultline: 1 of 2 scenarios passed</h1>"));
    EXPECT_THAT(page, HasSubstr("<a href=\"#double-charge\">double &lt;charge&gt;</a>"));
    EXPECT_THAT(page, HasSubstr("<a href=\"#fine\">fine</a>"));
    EXPECT_EQ(occurrences(page, "data-chart=\"load-thumbnail\""), 2u);
    EXPECT_EQ(occurrences(page, "<section class=\"scenario\""), 2u);
    // The failed check's evidence, as the console prints it.
    EXPECT_THAT(page, HasSubstr("<pre>· op b [#3 #4] 2 effects committed"));
}

// A run of known_run()'s journal named `name` whose one check came out as `outcome`.
record::run_record run_named(std::string name, record::verdict_outcome outcome) {
    record::run_record run = known_run();
    run.scenario = std::move(name);
    record::verdict v{"max_attempts", outcome == record::verdict_outcome::pass, false, "summary", {}, 0};
    v.insufficient_evidence = outcome == record::verdict_outcome::insufficient_evidence;
    run.verdicts = {v};
    return run;
}

// What follows each `prefix` in `text` up to `end`, in order: an attribute's values, an element's texts.
std::vector<std::string> values_after(const std::string& text, std::string_view prefix, char end = '"') {
    std::vector<std::string> values;
    for (std::size_t at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at + 1)) {
        const std::size_t from = at + prefix.size();
        values.push_back(text.substr(from, text.find(end, from) - from));
    }
    return values;
}

// The ids of the scenario sections, in page order.
std::vector<std::string> section_ids(const std::string& page) {
    return values_after(page, "<section class=\"scenario\" id=\"");
}

// The targets of the index's links, in page order.
std::vector<std::string> index_links(const std::string& page) {
    return values_after(page.substr(0, page.find("</table>")), "<a href=\"#");
}

TEST(html_report, scenarios_are_anchored_by_name_unique_when_names_repeat) {
    using enum record::verdict_outcome;
    const std::string page = render({run_named("herd-no-jitter", pass), run_named("Herd: no jitter!", pass),
                                     run_named("herd-no-jitter-2", pass), run_named("", pass),
                                     run_named("faultline-status", pass), run_named("Lost_Response.bad", pass)});
    const std::vector<std::string> ids{"herd-no-jitter", "herd-no-jitter-2", "herd-no-jitter-2-2", "scenario",
                                       "faultline-status-2", "lost_response.bad"};
    EXPECT_EQ(section_ids(page), ids);
    EXPECT_EQ(index_links(page), ids);
    EXPECT_EQ(occurrences(page, "id=\"faultline-status\""), 1u);  // the page's own element keeps its id
}

// An anchor follows the scenario, not its place on the page: failing moves a section up, not its id.
TEST(html_report, anchors_stay_put_when_outcomes_change) {
    using enum record::verdict_outcome;
    const std::string all_pass = render({run_named("a", pass), run_named("a", pass), run_named("b", pass)});
    const std::string second_fails = render({run_named("a", pass), run_named("a", fail), run_named("b", pass)});
    EXPECT_EQ(section_ids(all_pass), (std::vector<std::string>{"a", "a-2", "b"}));
    EXPECT_EQ(section_ids(second_fails), (std::vector<std::string>{"a-2", "a", "b"}));
    EXPECT_THAT(second_fails, HasSubstr("<section class=\"scenario\" id=\"a-2\" data-status=\"fail\">"));
}

TEST(html_report, failed_scenarios_come_first_then_unjudged_then_passes_each_in_suite_order) {
    using enum record::verdict_outcome;
    record::run_record broken = run_named("broken", pass);
    broken.harness_error = "cannot bind";
    const std::string page = render({run_named("p1", pass), run_named("f1", fail), run_named("p2", pass),
                                     run_named("i1", insufficient_evidence), broken, run_named("f2", fail)});
    const std::vector<std::string> order{"f1", "broken", "f2", "i1", "p1", "p2"};
    EXPECT_EQ(index_links(page), order);
    EXPECT_EQ(section_ids(page), order);
}

TEST(html_report, failed_checks_come_first_in_the_verdict_table) {
    record::run_record run = known_run();
    record::verdict unjudged{"jittered", false, false, "too few retries", {}, 0};
    unjudged.insufficient_evidence = true;
    run.verdicts = {record::verdict{"max_attempts", true, false, "ok", {}, 0}, run.verdicts[0], unjudged,
                    record::verdict{"deadline", false, false, "late", {}, 0}, run.verdicts[1]};
    const std::string page = render({run});
    EXPECT_EQ(values_after(page, "<tr data-check=\""), (std::vector<std::string>{"no_double_effects", "deadline", "jittered", "max_attempts", "retry_budget"}));
}

// The bad client of a `expect_failure` scenario: no_double_effects failed as declared, so it passed.
record::run_record failed_as_expected(std::string name) {
    record::run_record run = known_run();
    run.scenario = std::move(name);
    run.verdicts[0].passed = true;
    run.verdicts[0].expected_to_fail = true;
    run.verdicts[0].summary = "failed as expected: " + run.verdicts[0].summary;
    return run;
}

TEST(html_report, an_expected_failure_has_its_own_badge_apart_from_passes_and_failures) {
    using enum record::verdict_outcome;
    record::run_record passed_unexpectedly = run_named("passed unexpectedly", fail);
    passed_unexpectedly.verdicts[0].expected_to_fail = true;  // expected to fail, but passed: a failure
    const std::string page = render({run_named("good", pass), failed_as_expected("bad client"), run_named("broken", fail),
                                     passed_unexpectedly});
    EXPECT_THAT(page, HasSubstr("<section class=\"scenario\" id=\"bad-client\" data-status=\"expected\"><h2><span "
                                "class=\"badge expected\">failed as expected</span> bad client</h2>"));
    EXPECT_THAT(page, HasSubstr("<section class=\"scenario\" id=\"good\" data-status=\"pass\"><h2><span "
                                "class=\"badge pass\">pass</span>"));
    EXPECT_THAT(page, HasSubstr("<section class=\"scenario\" id=\"broken\" data-status=\"fail\"><h2><span "
                                "class=\"badge fail\">fail</span>"));
    EXPECT_THAT(page, HasSubstr("<section class=\"scenario\" id=\"passed-unexpectedly\" data-status=\"fail\">"));
    // The index row, and the check's own row with the evidence of the failure it expected.
    EXPECT_THAT(page, HasSubstr("<tr data-status=\"expected\"><td><span class=\"badge expected\">failed as expected</span>"));
    EXPECT_THAT(page, HasSubstr("<td>no_double_effects (as expected)</td>"));
    EXPECT_THAT(page, HasSubstr("<tr data-check=\"no_double_effects\"><td>no_double_effects</td><td><span class=\"badge "
                                "expected\">failed as expected</span></td><td>failed as expected: 1 operations with more "
                                "than one effect<pre>· op b [#3 #4] 2 effects committed"));
    // A scenario that passed with an expected failure is no failure: it is listed after the failures.
    EXPECT_EQ(index_links(page), (std::vector<std::string>{"broken", "passed-unexpectedly", "good", "bad-client"}));
    EXPECT_THAT(page, HasSubstr(".badge.expected{"));
}

// The lanes (operations) of a chart, in order.
std::vector<std::string> lanes_of(const std::string& chart_markup) {
    return values_after(chart_markup, "<g class=\"lane\" data-operation=\"");
}

TEST(html_report, a_failed_checks_evidence_offers_a_timeline_of_only_the_operations_it_names) {
    const std::string page = render({known_run()});
    // no_double_effects names operation b (seqs 3 and 4); the passing retry_budget offers nothing.
    EXPECT_EQ(occurrences(page, "<details class=\"evidence-timeline\""), 1u);
    EXPECT_THAT(page, HasSubstr("<tr class=\"evidence-timeline\"><td colspan=\"3\"><details class=\"evidence-timeline\" "
                                "data-check=\"no_double_effects\" data-operations=\"1\"><summary>show only these "
                                "operations (1)</summary>"));
    const std::string filtered = chart(page, "evidence-timeline");
    EXPECT_EQ(lanes_of(filtered), std::vector<std::string>{"b"});
    EXPECT_THAT(filtered, HasSubstr("class=\"attempt ok offending\" data-seq=\"3\""));
    EXPECT_EQ(lanes_of(chart(page, "timeline")), (std::vector<std::string>{"a", "b"}));  // the whole run's, unchanged
}

// Evidence names operations by identity or through the attempts of a run-wide item (a time window);
// an operation the journal does not hold has no lane, and evidence naming none offers no view.
TEST(html_report, the_evidence_timeline_follows_names_and_attempts_and_counts_each_operation_once) {
    record::run_record run = known_run();
    run.journal.push_back(attempt(5, "c", 1, 60, 200));
    // a only through its attempts (seqs 1 and 2, twice), c by name.
    run.verdicts[0].evidence = {record::evidence_item{"c", {}, "named"}, record::evidence_item{"", {1, 2}, "window"},
                                record::evidence_item{"", {2}, "again"}, record::evidence_item{"gone", {}, "not held"}};
    record::verdict window_only{"jittered", false, false, "lock-step", {record::evidence_item{"", {}, "0–10 ms"}}, 1};
    run.verdicts.push_back(window_only);
    const std::string page = render({run});
    EXPECT_THAT(page, HasSubstr("data-check=\"no_double_effects\" data-operations=\"2\"><summary>show only these "
                                "operations (2)</summary>"));
    EXPECT_EQ(lanes_of(chart(page, "evidence-timeline")), (std::vector<std::string>{"a", "c"}));
    EXPECT_THAT(page, Not(HasSubstr("data-check=\"jittered\" data-operations")));
}

// The text of each axis label of a chart, in order.
std::vector<std::string> axis_labels(const std::string& chart_markup) {
    return values_after(chart_markup, "class=\"axis\">", '<');
}

// The index's thumbnail of known_run (200 ms, at most 2 attempts in a bucket) has a count axis
// labelled 0 and 2 attempts and a time axis from 0 to 200 ms.
TEST(html_report, thumbnails_have_labelled_count_and_time_axes) {
    const std::string thumbnail = chart(render({known_run()}), "load-thumbnail");
    EXPECT_EQ(axis_labels(thumbnail), (std::vector<std::string>{"0", "2", "attempts", "0", "200 ms"}));
    EXPECT_EQ(occurrences(thumbnail, "<line class=\"frame\""), 2u);
    EXPECT_THAT(thumbnail, HasSubstr("viewBox=\"0 0 200 80\""));
    // The end of the time axis is the run's span, in s from 1 s on, two significant digits below 10 ms.
    record::run_record long_run = known_run();
    long_run.duration = std::chrono::milliseconds{3'240};
    EXPECT_EQ(axis_labels(chart(render({long_run}), "load-thumbnail")).back(), "3.2 s");
    record::run_record short_run = known_run();
    short_run.journal = {attempt(1, "a", 1, 0, 200)};  // ends at 1 ms
    short_run.duration = std::chrono::microseconds{4'700};
    EXPECT_EQ(axis_labels(chart(render({short_run}), "load-thumbnail")).back(), "4.7 ms");
}

TEST(html_report, is_self_contained) {
    const std::string page = render({known_run()});
    EXPECT_THAT(page, Not(HasSubstr("<link")));
    EXPECT_THAT(page, Not(HasSubstr(" src=")));
    EXPECT_THAT(page, Not(HasSubstr("https://")));
    EXPECT_EQ(occurrences(page, "http://"), occurrences(page, "xmlns=\"http://www.w3.org/2000/svg\""));
    EXPECT_THAT(page, Not(HasSubstr("<charge>")));
}

TEST(html_report, ten_thousand_operations_are_down_sampled_as_stated_and_stay_under_2_mb) {
    record::run_record run;
    run.scenario = "big";
    run.duration = std::chrono::seconds{10};
    std::uint64_t seq = 0;
    for (int op = 0; op < 10'000; ++op) {
        for (std::uint32_t n = 1; n <= 3; ++n) {
            run.journal.push_back(attempt(++seq, "op-" + std::to_string(op), n, op + 200 * static_cast<int>(n), n < 3 ? 503 : 200,
                                          n < 3 ? record::effect_kind::none : record::effect_kind::committed));
        }
    }
    record::evidence_item bad{"op-17", {52}, "bad"};
    run.verdicts = {record::verdict{"backoff", false, false, "1 gap outside", {bad}, 1}};
    const std::string page = render({run});
    EXPECT_LT(page.size(), 2'000'000u);
    const std::string timeline = chart(page, "timeline");
    // At most 120 lanes: op-17 (offending) and one in ceil(9,999 / 119) = 85 of the rest (118 of them).
    EXPECT_EQ(occurrences(timeline, "class=\"lane\""), 119u);
    EXPECT_NE(timeline.find("data-operation=\"op-17\""), std::string::npos);
    EXPECT_NE(page.find("Showing 119 of 10000 operations: all 1 with offending attempts or double effects, "
                        "and one in 85 of the others in arrival order."),
              std::string::npos);
    RecordProperty("bytes", static_cast<int>(page.size()));
}

TEST(html_report, an_empty_journal_says_so_instead_of_drawing) {
    record::run_record run;
    run.scenario = "nothing";
    const std::string page = render({run});
    EXPECT_THAT(page, HasSubstr("The journal is empty"));
    EXPECT_EQ(chart(page, "timeline"), "");
}

}  // namespace
}  // namespace faultline::reports
