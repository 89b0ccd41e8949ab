// faultline score: the client template, the probe files, and the scorecard's verdicts from known runs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "faultline/score/attribution.hpp"
#include "faultline/score/client_template.hpp"
#include "faultline/score/control_client.hpp"
#include "faultline/score/probe.hpp"
#include "faultline/score/run_probes.hpp"
#include "faultline/score/scorecard.hpp"

namespace faultline::score {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

std::vector<std::string> words(std::initializer_list<const char*> list) { return {list.begin(), list.end()}; }

TEST(client_template, a_usable_template_has_no_problem) {
    EXPECT_EQ(template_problem(words({"curl", "-s", "-X", "{method}", "{url}{path}", "-d", "{body}"}), {}), "");
    EXPECT_EQ(template_problem(words({"sh", "-c", "curl \"$FAULTLINE_URL/x\""}), {}), "");
}

TEST(client_template, bad_templates_say_what_is_wrong) {
    EXPECT_EQ(template_problem({}, {}), "the client template after `--` needs a program");
    EXPECT_EQ(template_problem(words({"curl", "{url}{pth}"}), {}),
              "unknown placeholder {pth} in the client template; known: {attempt_timeout} {attempt_timeout_ms} "
              "{body} {client} {deadline} {deadline_ms} {key} {method} {n} {op} {path} {service_config} {timeout} "
              "{timeout_ms} {url}");
    EXPECT_EQ(template_problem(words({"client", "{url}", "{service_config}"}), {}),
              "the client template uses {service_config}, but no service config was given (--service-config)");
    EXPECT_THAT(template_problem(words({"curl", "http://example.test/x"}), {}),
                HasSubstr("the client template never names the server: put {url} where its URL goes"));
    EXPECT_EQ(template_problem(words({"curl", "-m", "{deadline}", "{url}"}), {}),
              "the client template uses {deadline}, but no deadline was declared (--deadline)");
    declared_settings with_deadline;
    with_deadline.deadline = 2s;
    EXPECT_EQ(template_problem(words({"curl", "-m", "{deadline}", "{url}"}), with_deadline), "");
}

TEST(client_template, probe_placeholders_are_filled_and_the_drivers_left) {
    declared_settings declared;
    declared.timeout = 1500ms;
    declared.deadline = 3s;
    const request_values request{"PUT", "/kv/a", R"({"v":1})"};
    EXPECT_EQ(instantiate(words({"curl", "-X", "{method}", "{url}{path}", "-d", "{body}", "-m", "{timeout}",
                                 "--deadline={deadline}", "-H", "Idempotency-Key: {key}", "{\"literal\":1}"}),
                          request, declared),
              words({"curl", "-X", "PUT", "{url}/kv/a", "-d", R"({"v":1})", "-m", "1.5", "--deadline=3", "-H",
                     "Idempotency-Key: {key}", "{\"literal\":1}"}));
}

TEST(client_template, timeouts_fill_in_seconds_and_milliseconds) {
    declared_settings declared;
    declared.timeout = 2500ms;
    declared.deadline = 10s;
    const request_values request{"GET", "/", ""};
    EXPECT_EQ(instantiate(words({"t={timeout}", "{timeout_ms}", "{attempt_timeout}", "{deadline_ms}"}), request, declared),
              words({"t=2.5", "2500", "2.5", "10000"}));
    declared.attempt_timeout = 500ms;
    EXPECT_EQ(instantiate(words({"{attempt_timeout}", "{attempt_timeout_ms}"}), request, declared), words({"0.5", "500"}));
}

TEST(client_template, a_timeout_is_seconds_or_a_duration_with_a_unit) {
    EXPECT_EQ(seconds_or_duration("5"), std::optional<std::chrono::nanoseconds>{5s});
    EXPECT_EQ(seconds_or_duration("1.5"), std::optional<std::chrono::nanoseconds>{1500ms});
    EXPECT_EQ(seconds_or_duration("5s"), std::optional<std::chrono::nanoseconds>{5s});
    EXPECT_EQ(seconds_or_duration("500ms"), std::optional<std::chrono::nanoseconds>{500ms});
    EXPECT_EQ(seconds_or_duration("5 s"), std::nullopt);
    EXPECT_EQ(seconds_or_duration("."), std::nullopt);
    EXPECT_EQ(seconds_or_duration(""), std::nullopt);
}

TEST(declared_curve, backoff_and_jitter_say_what_clients_do) {
    const auto curve = [](std::string_view backoff, std::string_view jitter) {
        auto parsed = parse_curve(backoff, jitter, 2);
        if (const auto* problem = std::get_if<std::string>(&parsed)) throw std::invalid_argument(*problem);
        return std::get<declared_curve>(parsed);
    };
    EXPECT_EQ(curve("1s:600s", "none").describe(), "1s ×2 → 600s, none jitter");
    EXPECT_EQ(curve("linear:1:10", "none").describe(), "1s linear → 10s, none jitter");
    EXPECT_EQ(curve("constant:500ms", "full").describe(), "0.5s constant, no cap, full jitter");
    EXPECT_EQ(curve("exponential:1s:none", "proportional:50%").describe(), "1s ×2, no cap, ±50 %");
    EXPECT_EQ(curve("exponential:1s", "above:0.2").describe(), "1s ×2, no cap, +0–20 %");
    EXPECT_EQ(curve("1s:30s", "additive:100ms").describe(), "1s ×2 → 30s, +U(0, 0.1s)");
    EXPECT_EQ(backoff_expectation(curve("linear:1s:10s", "proportional:50%"), 200ms),
              "check = \"backoff\"\nbase = \"1s\"\ncap = \"10s\"\ngrowth = \"linear\"\njitter = \"proportional\"\n"
              "jitter_fraction = 0.500000\njitter_sides = \"both\"\ntolerance = \"200ms\"\n");
}

TEST(declared_curve, a_curve_that_cannot_be_read_says_why) {
    const auto problem = [](std::string_view backoff, std::string_view jitter) {
        auto parsed = parse_curve(backoff, jitter, 2);
        const auto* text = std::get_if<std::string>(&parsed);
        return text == nullptr ? std::string{} : *text;
    };
    EXPECT_THAT(problem("1s", "none"), HasSubstr("--backoff: expected BASE:CAP, exponential:BASE[:CAP]"));
    EXPECT_THAT(problem("constant:1s:2s", "none"), HasSubstr("--backoff: expected"));
    EXPECT_THAT(problem("1s:500ms", "none"), HasSubstr("--backoff: bad CAP \"500ms\""));
    EXPECT_THAT(problem("x:1s", "none"), HasSubstr("--backoff: bad BASE \"x\""));
    EXPECT_THAT(problem("1s:2s", "proportional:150%"), HasSubstr("--jitter for --backoff"));
    EXPECT_THAT(problem("1s:2s", "additive"), HasSubstr("--jitter for --backoff"));
}

TEST(client_template, seconds_are_written_as_clients_read_them) {
    EXPECT_EQ(seconds_text(1s), "1");
    EXPECT_EQ(seconds_text(250ms), "0.25");
    EXPECT_EQ(seconds_text(1001ms), "1.001");
}

constexpr std::string_view probe_text = R"(name = "p"
[probe]
situation = "a lost reply"
operations = 3
[probe.properties]
no_double_effects = "single_execution"

[client]
[[client.request]]
method = "PUT"
path = "/kv/{op}"
body = "v"

[[expect]]
check = "no_double_effects"
)";

std::string replaced(std::string_view text, std::string_view from, std::string_view to) {
    std::string out(text);
    out.replace(out.find(from), from.size(), to);
    return out;
}

TEST(probe_file, a_probe_is_a_scenario_with_a_probe_table) {
    const catalogue c = parse_probe(probe_text, "p.toml");
    ASSERT_TRUE(c.ok()) << c.errors.front().to_string();
    ASSERT_EQ(c.probes.size(), 1u);
    const probe& p = c.probes.front();
    EXPECT_EQ(p.situation, "a lost reply");
    EXPECT_EQ(p.operations, 3u);
    EXPECT_EQ(p.concurrency, 3u);
    EXPECT_EQ(p.request.method, "PUT");
    EXPECT_EQ(p.request.path, "/kv/{op}");
    EXPECT_EQ(p.property_of("no_double_effects"), "single_execution");
    EXPECT_EQ(p.property_of("max_attempts"), "");
    EXPECT_FALSE(p.timeout.has_value());

    const catalogue longer = parse_probe(replaced(probe_text, "operations = 3\n", "operations = 3\ntimeout = \"3s\"\n"), "p.toml");
    ASSERT_TRUE(longer.ok()) << longer.errors.front().to_string();
    EXPECT_EQ(longer.probes.front().timeout, std::chrono::seconds{3});
    const catalogue too_long = parse_probe(replaced(probe_text, "operations = 3\n", "operations = 3\ntimeout = \"2m\"\n"), "p.toml");
    ASSERT_EQ(too_long.errors.size(), 1u);
    EXPECT_THAT(too_long.errors[0].to_string(), HasSubstr("timeout"));
}


TEST(probe_file, mistakes_in_the_probe_table_are_errors) {
    const catalogue unknown = parse_probe(replaced(probe_text, "\"single_execution\"", "\"singel\""), "p.toml");
    ASSERT_EQ(unknown.errors.size(), 1u);
    EXPECT_THAT(unknown.errors[0].to_string(),
                HasSubstr("p.toml:5:1: [probe]: properties: unknown property \"singel\" for check "
                          "\"no_double_effects\"; allowed: single_execution, retryable_statuses"));

    const catalogue unmapped =
        parse_probe(std::string(probe_text) + "\n[[expect]]\ncheck = \"max_attempts\"\nmax = 2\n", "p.toml");
    ASSERT_EQ(unmapped.errors.size(), 1u);
    EXPECT_EQ(unmapped.errors[0].to_string(),
              "p.toml:17:1: [probe] properties: check \"max_attempts\" proves no property; map it, e.g. "
              "max_attempts = \"single_execution\"");

    const catalogue run_verdict =
        parse_probe(replaced(probe_text, "\"single_execution\"", "\"evidence_intact\""), "p.toml");
    ASSERT_EQ(run_verdict.errors.size(), 1u);
    EXPECT_THAT(run_verdict.errors[0].to_string(),
                HasSubstr("property \"evidence_intact\" is judged in every probe from the run's own "
                          "\"evidence_intact\" verdict; no check maps to it"));

    const catalogue missing = parse_probe(replaced(probe_text, "situation = \"a lost reply\"\n", ""), "p.toml");
    ASSERT_EQ(missing.errors.size(), 1u);
    EXPECT_EQ(missing.errors[0].to_string(), "p.toml:2:1: [probe]: missing required key \"situation\"");
}

// A command client's processes ran one after another, so run_probes re-attributes the attempts and
// judges the checks again: the run's own verdicts (evidence_intact, fired:<rule>) must survive that.
TEST(run_probes, re_judging_a_command_client_keeps_the_runs_own_verdicts) {
    const std::string text = replaced(probe_text, "operations = 3", "operations = 2\nconcurrency = 1") +
                             "\n[[fault]]\nkind = \"status\"\nstatus = 503\nmin_fired = 1\n";
    const catalogue c = parse_probe(text, "p.toml");
    ASSERT_TRUE(c.ok()) << c.errors.front().to_string();
    const std::vector<std::string> client{"/bin/true", "{url}"};
    const std::vector<record::run_record> runs = run_probes(c.probes, client, {}, {}, 1);
    ASSERT_EQ(runs.size(), 1u);
    ASSERT_EQ(runs[0].harness_error, "");
    std::vector<std::string> checks;
    for (const record::verdict& v : runs[0].verdicts) checks.push_back(v.check);
    EXPECT_EQ(checks, words({"no_double_effects", "evidence_intact", "fired:status-1"}));
}

TEST(probe_file, the_shipped_catalogue_loads) {
    const catalogue c = load_catalogue(FAULTLINE_CONFORMANCE_DIR);
    ASSERT_TRUE(c.ok()) << c.errors.front().to_string();
    EXPECT_GE(c.probes.size(), 20u);
    for (const probe& p : c.probes) EXPECT_FALSE(p.situation.empty()) << p.scenario.name;
}

// --- the scorecard from known runs --------------------------------------------------------------

record::journal_record attempt(std::uint64_t seq, std::string op, std::string key = "") {
    record::journal_record r;
    r.seq = seq;
    r.operation = std::move(op);
    r.idempotency_key = std::move(key);
    r.request_ns = static_cast<std::int64_t>(seq) * 1000;
    r.finished_ns = r.request_ns + 10;
    r.status = 200;
    return r;
}

record::verdict verdict_of(std::string check, record::verdict_outcome outcome) {
    record::verdict v;
    v.check = std::move(check);
    v.passed = outcome == record::verdict_outcome::pass;
    v.insufficient_evidence = outcome == record::verdict_outcome::insufficient_evidence;
    v.summary = "summary of " + v.check;
    if (outcome == record::verdict_outcome::fail) v.evidence = {record::evidence_item{"op", {1, 2}, "the proof"}};
    v.evidence_total = v.evidence.size();
    return v;
}

probe probe_of(std::string name, std::vector<std::pair<std::string, std::string>> properties) {
    probe p;
    p.scenario.name = std::move(name);
    p.situation = "situation " + p.scenario.name;
    p.properties = std::move(properties);
    return p;
}

// A copy: the card is often a temporary (`row(make_scorecard(…), …)`), which a reference would outlive.
property_row row(const scorecard& card, std::string_view id) {
    for (const property_row& r : card.rows) {
        if (r.property->id == id) return r;
    }
    throw std::logic_error("no row");
}

TEST(scorecard, a_client_that_never_retries_gets_not_applicable_for_retry_properties) {
    const std::vector<probe> probes{probe_of("lost", {{"no_double_effects", "single_execution"}}),
                                    probe_of("refused", {{"success_rate", "unsent_retried"}}),
                                    probe_of("ra", {{"retry_after", "retry_after"}})};
    std::vector<record::run_record> runs(3);
    for (std::size_t i = 0; i < 3; ++i) {
        runs[i].scenario = probes[i].scenario.name;
        runs[i].journal = {attempt(1, "a")};
    }
    runs[0].verdicts = {verdict_of("no_double_effects", record::verdict_outcome::pass)};
    runs[1].verdicts = {verdict_of("success_rate", record::verdict_outcome::fail)};
    runs[2].verdicts = {verdict_of("retry_after", record::verdict_outcome::pass)};
    const scorecard card = make_scorecard(probes, runs, {}, false);
    EXPECT_EQ(row(card, "single_execution").outcome, property_outcome::pass);
    EXPECT_EQ(row(card, "unsent_retried").outcome, property_outcome::not_applicable);
    EXPECT_EQ(row(card, "unsent_retried").reason, "the client never retried in any probe");
    EXPECT_EQ(row(card, "retry_after").outcome, property_outcome::not_applicable);
    EXPECT_EQ(row(card, "deadline").outcome, property_outcome::not_applicable);
    EXPECT_EQ(exit_code_of(card), runner::exit_code::passed);
}

// curl --retry exits at once after a reset on accept: nothing reached the server, no rule was
// broken, so the row is n/a with the reason, not a failure.
TEST(scorecard, giving_up_before_anything_reached_the_server_is_not_a_failure) {
    const std::vector<probe> probes{probe_of("persistent", {{"max_attempts", "attempt_limit"}}),
                                    probe_of("refused", {{"success_rate", "unsent_retried"}})};
    std::vector<record::run_record> runs(2);
    runs[0].scenario = "persistent";
    runs[0].journal = {attempt(1, "a"), attempt(2, "a")};
    runs[0].verdicts = {verdict_of("max_attempts", record::verdict_outcome::pass)};
    runs[1].scenario = "refused";
    runs[1].verdicts = {verdict_of("success_rate", record::verdict_outcome::fail)};
    const scorecard card = make_scorecard(probes, runs, {}, false);
    EXPECT_EQ(row(card, "unsent_retried").outcome, property_outcome::not_applicable);
    EXPECT_EQ(row(card, "unsent_retried").reason, "the client gave up before anything reached the server (allowed)");

    runs[1].journal = {attempt(3, "b")};  // it did retry, and the retry failed
    EXPECT_EQ(row(make_scorecard(probes, runs, {}, false), "unsent_retried").outcome, property_outcome::fail);
}

TEST(scorecard, one_failed_situation_fails_the_property_with_its_evidence) {
    const std::vector<probe> probes{probe_of("lost", {{"no_double_effects", "single_execution"}}),
                                    probe_of("reset", {{"no_double_effects", "single_execution"}})};
    std::vector<record::run_record> runs(2);
    runs[0].scenario = "lost";
    runs[0].journal = {attempt(1, "a"), attempt(2, "a")};
    runs[0].verdicts = {verdict_of("no_double_effects", record::verdict_outcome::pass)};
    runs[1].scenario = "reset";
    runs[1].journal = {attempt(1, "b"), attempt(2, "b")};
    runs[1].verdicts = {verdict_of("no_double_effects", record::verdict_outcome::fail)};
    const scorecard card = make_scorecard(probes, runs, {}, false);
    const property_row& r = row(card, "single_execution");
    EXPECT_EQ(r.outcome, property_outcome::fail);
    EXPECT_EQ(r.judged, 2u);
    EXPECT_EQ(r.passed, 1u);
    ASSERT_EQ(r.findings.size(), 1u);
    EXPECT_EQ(r.findings[0].probe, "reset");
    EXPECT_EQ(exit_code_of(card), runner::exit_code::check_failed);
    const std::string text = render_scorecard(card, {}, {"curl {url}", false, false});
    EXPECT_THAT(text, HasSubstr("  FAIL         no second execution of a committed non-idempotent request"));
    EXPECT_THAT(text, HasSubstr("1 of 2 situations passed"));
    EXPECT_THAT(text, HasSubstr("✘ no second execution of a committed non-idempotent request — situation reset "
                                "(reset, no_double_effects): summary of no_double_effects\n"));
    EXPECT_THAT(text, HasSubstr("the proof"));

    const boost::json::value doc = boost::json::parse(scorecard_json(card, "curl {url}"));
    EXPECT_EQ(doc.at("client").as_string(), "curl {url}");
    EXPECT_EQ(doc.at("outcome").as_string(), "check failed");
    const boost::json::object& first = doc.at("properties").as_array().at(1).as_object();
    EXPECT_EQ(first.at("id").as_string(), "single_execution");
    EXPECT_EQ(first.at("outcome").as_string(), "fail");
    EXPECT_EQ(first.at("judged").as_int64(), 2);
    const boost::json::object& found = first.at("findings").as_array().at(0).as_object();
    EXPECT_EQ(found.at("probe").as_string(), "reset");
    EXPECT_EQ(found.at("evidence").as_array().at(0).at("detail").as_string(), "the proof");
}

// A probe whose every property needs a declaration that was not made is not run at all.
TEST(scorecard, a_probe_that_judges_only_what_was_not_declared_has_nothing_to_judge) {
    const probe slow = probe_of("slow-responses", {{"deadline", "deadline"}});
    const probe hang = probe_of("hang", {{"max_attempts", "attempt_limit"}, {"attempt_timeout", "attempt_timeout"}});
    EXPECT_EQ(nothing_to_judge(slow, {}, false), "no deadline declared (--deadline)");
    EXPECT_EQ(nothing_to_judge(hang, {}, false),
              "no attempt limit declared (--max-attempts); no per-attempt timeout declared (--attempt-timeout)");
    declared_settings declared;
    declared.deadline = 2s;
    declared.max_attempts = 4;
    EXPECT_EQ(nothing_to_judge(slow, declared, false), "");
    EXPECT_EQ(nothing_to_judge(hang, declared, false), "");  // the attempt limit is judged
    // The builtin client's policy declares everything; a probe judging anything else always runs.
    EXPECT_EQ(nothing_to_judge(slow, {}, true), "");
    EXPECT_EQ(nothing_to_judge(probe_of("lost", {{"no_double_effects", "single_execution"}}), {}, false), "");
}

TEST(scorecard, declared_settings_and_keys_decide_applicability) {
    const std::vector<probe> probes{probe_of("slow", {{"deadline", "deadline"}, {"idempotency_keys", "stable_key"}})};
    std::vector<record::run_record> runs(1);
    runs[0].scenario = "slow";
    runs[0].journal = {attempt(1, "a"), attempt(2, "a")};
    runs[0].verdicts = {verdict_of("deadline", record::verdict_outcome::pass),
                        verdict_of("idempotency_keys", record::verdict_outcome::pass)};
    const scorecard undeclared = make_scorecard(probes, runs, {}, false);
    EXPECT_EQ(row(undeclared, "deadline").outcome, property_outcome::not_applicable);
    EXPECT_EQ(row(undeclared, "deadline").reason, "no deadline declared (--deadline)");
    EXPECT_EQ(row(undeclared, "stable_key").reason, "the client sent no Idempotency-Key");

    declared_settings declared;
    declared.deadline = 2s;
    runs[0].journal = {attempt(1, "k", "key-1"), attempt(2, "k", "key-1")};
    const scorecard judged = make_scorecard(probes, runs, declared, false);
    EXPECT_EQ(row(judged, "deadline").outcome, property_outcome::pass);
    EXPECT_EQ(row(judged, "stable_key").outcome, property_outcome::pass);
}

TEST(scorecard, a_property_no_probe_could_judge_is_insufficient_evidence) {
    const std::vector<probe> probes{probe_of("herd", {{"jittered", "jittered"}})};
    std::vector<record::run_record> runs(1);
    runs[0].scenario = "herd";
    runs[0].journal = {attempt(1, "a"), attempt(2, "a")};
    runs[0].verdicts = {verdict_of("jittered", record::verdict_outcome::insufficient_evidence)};
    const scorecard card = make_scorecard(probes, runs, {}, false);
    EXPECT_EQ(row(card, "jittered").outcome, property_outcome::insufficient_evidence);
    EXPECT_EQ(row(card, "jittered").reason, "summary of jittered");
    EXPECT_EQ(row(card, "jittered").not_judged, 1u);
    EXPECT_EQ(exit_code_of(card), runner::exit_code::insufficient_evidence);

    // --jitter none refines the curve judged; it never switches the row off (issue 26).
    declared_settings no_jitter;
    no_jitter.jitters = false;
    EXPECT_EQ(row(make_scorecard(probes, runs, no_jitter, false), "jittered").outcome,
              property_outcome::insufficient_evidence);
}

// An expectation that can only show a property broken (one operation alone shows a client that never
// waits, not its jitter): its failure stands, its pass and its insufficient evidence are left off the row.
TEST(scorecard, a_failures_only_check_reports_only_its_failures) {
    const std::vector<probe> probes{probe_of("persistent-5xx", {{"jittered", "jittered"}})};
    std::vector<record::run_record> runs(1);
    runs[0].scenario = "persistent-5xx";
    runs[0].journal = {attempt(1, "a"), attempt(2, "a")};
    for (const auto outcome : {record::verdict_outcome::pass, record::verdict_outcome::insufficient_evidence}) {
        runs[0].verdicts = {verdict_of("jittered", outcome)};
        runs[0].verdicts[0].failures_only = true;
        const property_row left_off = row(make_scorecard(probes, runs, {}, false), "jittered");
        EXPECT_EQ(left_off.outcome, property_outcome::not_applicable);
        EXPECT_TRUE(left_off.findings.empty());
    }
    runs[0].verdicts = {verdict_of("jittered", record::verdict_outcome::fail)};
    runs[0].verdicts[0].failures_only = true;
    const scorecard card = make_scorecard(probes, runs, {}, false);
    EXPECT_EQ(row(card, "jittered").outcome, property_outcome::fail);
    ASSERT_EQ(row(card, "jittered").findings.size(), 1u);
    EXPECT_EQ(row(card, "jittered").findings[0].probe, "persistent-5xx");
}

// A herd whose jitter verdict could not tell the client from the control's noise: the desynchronized
// pass of the same probe (a slow runtime spreads its own arrivals) does not make the row pass.
TEST(scorecard, a_timing_probe_that_could_not_tell_keeps_its_row_from_passing) {
    probe herd = probe_of("herd", {{"jittered", "jittered"}, {"desynchronized", "jittered"}});
    herd.control = 24;
    const std::vector<probe> probes{herd};
    std::vector<record::run_record> runs(1);
    runs[0].scenario = "herd";
    runs[0].journal = {attempt(1, "a"), attempt(2, "a")};
    runs[0].verdicts = {verdict_of("jittered", record::verdict_outcome::insufficient_evidence),
                        verdict_of("desynchronized", record::verdict_outcome::pass)};
    const scorecard card = make_scorecard(probes, runs, {}, false);
    EXPECT_EQ(row(card, "jittered").outcome, property_outcome::insufficient_evidence);
    EXPECT_THAT(row(card, "jittered").reason, HasSubstr("a timing probe could not tell the client from the noise"));
    // Without a control (the builtin client's files judged alone) the pass stands, as before.
    std::vector<probe> plain{probe_of("herd", {{"jittered", "jittered"}, {"desynchronized", "jittered"}})};
    EXPECT_EQ(row(make_scorecard(plain, runs, {}, false), "jittered").outcome, property_outcome::pass);
}

// A client that double-charges and then resets the server through the control API (issue 10, item 1):
// the probe's journal no longer shows the double charge, so its pass proves nothing. The evidence
// row fails with the reset as evidence, and the scorecard fails.
TEST(scorecard, a_control_api_reset_in_any_probe_fails_the_scorecard_and_its_passes_are_not_judged) {
    const std::vector<probe> probes{probe_of("lost", {{"no_double_effects", "single_execution"}}),
                                    probe_of("reset", {{"no_double_effects", "single_execution"}})};
    std::vector<record::run_record> runs(2);
    for (std::size_t i = 0; i < 2; ++i) {
        runs[i].scenario = probes[i].scenario.name;
        runs[i].journal = {attempt(1, "a")};
        runs[i].verdicts = {verdict_of("no_double_effects", record::verdict_outcome::pass),
                            verdict_of("evidence_intact", record::verdict_outcome::pass)};
    }
    record::verdict& tampered = runs[0].verdicts[1];
    tampered.passed = false;
    tampered.summary = "the control API changed the server during the run (1 reset)";
    tampered.evidence = {record::evidence_item{"", {3}, "reset at 12.0ms by 127.0.0.1:5000"}};
    tampered.evidence_total = 1;

    const scorecard card = make_scorecard(probes, runs, {}, false);
    const property_row& intact = row(card, "evidence_intact");
    EXPECT_EQ(intact.outcome, property_outcome::fail);
    EXPECT_EQ(intact.judged, 2u);
    EXPECT_EQ(intact.passed, 1u);
    ASSERT_EQ(intact.findings.size(), 1u);
    EXPECT_EQ(intact.findings[0].probe, "lost");
    const property_row& single = row(card, "single_execution");
    EXPECT_EQ(single.outcome, property_outcome::pass);
    EXPECT_EQ(single.judged, 1u);
    EXPECT_EQ(single.not_judged, 1u);
    EXPECT_EQ(exit_code_of(card), runner::exit_code::check_failed);

    const std::string text = render_scorecard(card, {}, {"curl {url}", false, false});
    EXPECT_THAT(text, HasSubstr("  FAIL         evidence intact: no control-API tampering"));
    EXPECT_THAT(text, HasSubstr("✘ evidence intact: no control-API tampering — situation lost (lost, evidence_intact): "
                                "the control API changed the server during the run (1 reset)\n"));
    EXPECT_THAT(text, HasSubstr("reset at 12.0ms by 127.0.0.1:5000"));
    EXPECT_THAT(text, HasSubstr("1 of 1 situation passed, 1 not judged"));
    EXPECT_THAT(text, HasSubstr("? no second execution of a committed non-idempotent request — situation lost (lost, "
                                "no_double_effects): not judged: the control API changed the server during the run\n"));

    // Every other probe's evidence intact, the tampered one alone: nothing left to pass on.
    runs.pop_back();
    const scorecard alone = make_scorecard(std::span(probes).first(1), runs, {}, false);
    EXPECT_EQ(row(alone, "single_execution").outcome, property_outcome::insufficient_evidence);
    EXPECT_EQ(row(alone, "single_execution").reason, "not judged: the control API changed the server during the run");
    EXPECT_EQ(exit_code_of(alone), runner::exit_code::check_failed);
}

// Issue 10, item 7 in the scorecard: a client that sends a GET where the probe loses the reply to a
// POST never meets the fault, so its no_double_effects pass proves nothing.
TEST(scorecard, a_probe_whose_fault_rule_did_not_fire_proves_nothing) {
    const std::vector<probe> probes{probe_of("lost", {{"no_double_effects", "single_execution"}}),
                                    probe_of("reset", {{"no_double_effects", "single_execution"}})};
    std::vector<record::run_record> runs(2);
    for (std::size_t i = 0; i < 2; ++i) {
        runs[i].scenario = probes[i].scenario.name;
        runs[i].journal = {attempt(1, "a")};
        runs[i].verdicts = {verdict_of("no_double_effects", record::verdict_outcome::pass),
                            verdict_of("evidence_intact", record::verdict_outcome::pass),
                            verdict_of("fired:lost_response-1", record::verdict_outcome::pass)};
        runs[i].rule_firings = {record::rule_firing{"lost_response-1", "lost_response", 1, 1}};
    }
    runs[0].rule_firings[0].fired = 0;
    runs[0].verdicts[2] = verdict_of("fired:lost_response-1", record::verdict_outcome::fail);

    const scorecard alone = make_scorecard(std::span(probes).first(1), std::span(runs).first(1), {}, false);
    const property_row& unjudged = row(alone, "single_execution");
    EXPECT_EQ(unjudged.outcome, property_outcome::insufficient_evidence);
    EXPECT_EQ(unjudged.reason, "not judged: fault rule `lost_response-1` never fired (min_fired = 1); the client "
                               "reached the server (1 attempt)");
    EXPECT_EQ(row(alone, "evidence_intact").outcome, property_outcome::pass);
    EXPECT_EQ(exit_code_of(alone), runner::exit_code::insufficient_evidence);
    const std::string text = render_scorecard(alone, {}, {"curl {url}", false, false});
    EXPECT_THAT(text, HasSubstr("  INSUFFICIENT no second execution of a committed non-idempotent request"));
    EXPECT_THAT(text, HasSubstr("? no second execution of a committed non-idempotent request — situation lost (lost, "
                                "no_double_effects): not judged: fault rule `lost_response-1` never fired "
                                "(min_fired = 1); the client reached the server (1 attempt)\n"));
    EXPECT_THAT(text, HasSubstr("the proof"));  // the fired:<rule> verdict's evidence

    const scorecard both = make_scorecard(probes, runs, {}, false);
    EXPECT_EQ(row(both, "single_execution").outcome, property_outcome::pass);
    EXPECT_EQ(row(both, "single_execution").not_judged, 1u);
    EXPECT_THAT(render_scorecard(both, {}, {"curl {url}", false, false}), HasSubstr("1 of 1 situation passed, 1 not judged"));
    EXPECT_EQ(exit_code_of(both), runner::exit_code::passed);

    runs[0].rule_firings[0] = record::rule_firing{"lost_response-1", "lost_response", 1, 3};
    EXPECT_EQ(row(make_scorecard(std::span(probes).first(1), std::span(runs).first(1), {}, false), "single_execution").reason,
              "not judged: fault rule `lost_response-1` fired 1 of the 3 times required (min_fired = 3); the client reached "
              "the server (1 attempt)");
}

TEST(scorecard, a_probe_that_could_not_run_is_a_harness_error) {
    const std::vector<probe> probes{probe_of("lost", {{"no_double_effects", "single_execution"}})};
    std::vector<record::run_record> runs(1);
    runs[0].scenario = "lost";
    runs[0].harness_error = "cannot start \"curl\"";
    const scorecard card = make_scorecard(probes, runs, {}, false);
    EXPECT_EQ(exit_code_of(card), runner::exit_code::harness_error);
    EXPECT_THAT(render_scorecard(card, {}, {"curl", false, false}), HasSubstr("harness error: lost: cannot start \"curl\""));
}

// A client that sends a new Idempotency-Key on every attempt: four "operations" on the server, one
// process, so one operation with four attempts (and four keys) for the checks.
// The client's program names its runtime; the control of that runtime is its script under the
// client's own interpreter, with the same URL, delay and attempts as faultline's builtin control.
TEST(control, a_clients_program_picks_the_control_of_its_runtime) {
    EXPECT_EQ(runtime_of("node"), control_runtime::node);
    EXPECT_EQ(runtime_of("/usr/local/bin/nodejs"), control_runtime::node);
    EXPECT_EQ(runtime_of("python3"), control_runtime::python);
    EXPECT_EQ(runtime_of("/opt/venv/bin/python3.11"), control_runtime::python);
    EXPECT_EQ(runtime_of("python"), control_runtime::python);
    EXPECT_EQ(runtime_of("curl"), control_runtime::builtin);
    EXPECT_EQ(runtime_of("nodemon"), control_runtime::builtin);
    EXPECT_EQ(runtime_label(control_runtime::node), "Node.js");
    EXPECT_EQ(runtime_label(control_runtime::builtin), "");

    control_options options;
    options.delay = 1500ms;
    options.attempts = 3;
    EXPECT_EQ(control_command({control_runtime::node, "/usr/bin/node", "/share/controls/control.mjs"}, options),
              (std::vector<std::string>{"/usr/bin/node", "/share/controls/control.mjs", "{url}/faultline-control/c{op}",
                                        "1500", "3"}));
    EXPECT_EQ(control_command({control_runtime::builtin, "/usr/bin/faultline", ""}, options),
              (std::vector<std::string>{"/usr/bin/faultline", "score", "--control-client", "{url}/faultline-control/c{op}",
                                        "--control-delay", "1500ms", "--control-attempts", "3"}));
}

// The control's attempts and processes leave the run; its gaps are measured as its noise.
TEST(control, the_controls_attempts_and_processes_are_taken_out_and_measured) {
    probe p = probe_of("herd", {});
    p.operations = 2;
    p.control = 2;
    p.control_delay = 1s;
    record::run_record run;
    run.command.emplace();
    for (std::uint64_t op = 0; op < 4; ++op) {
        record::process_record proc;
        proc.op = op;
        proc.exit_status = op >= 2 ? 1 : 0;  // a control that failed is no failure of the client
        run.command->processes.push_back(proc);
    }
    run.command->exit_status = 1;
    std::uint64_t seq = 1;
    for (const std::string target : {"/kv/k0", "/kv/k1", "/faultline-control/c2", "/faultline-control/c3"}) {
        for (std::int64_t k = 0; k < 3; ++k) {
            record::journal_record r = attempt(seq++, target);
            r.target = target;
            // The control waits 1 s (+ 1 ms or 3 ms of noise), the client 10 ms.
            const bool is_control = target.starts_with("/faultline-control/");
            r.request_ns = k * (is_control ? 1'000'000'000 + (seq % 2 == 0 ? 1'000'000 : 3'000'000) : 10'000'000);
            r.finished_ns = r.request_ns;
            run.journal.push_back(r);
        }
    }
    const checks::timing_control control = take_control(run, p);
    EXPECT_EQ(run.journal.size(), 6u);
    for (const auto& r : run.journal) EXPECT_TRUE(r.target.view().starts_with("/kv/"));
    ASSERT_EQ(run.command->processes.size(), 2u);
    EXPECT_EQ(run.command->exit_status, 0);
    EXPECT_EQ(control.processes, 2u);
    EXPECT_EQ(control.delay, 1s);
    EXPECT_EQ(control.gaps_ns.size(), 4u);
    EXPECT_FALSE(control.measured());  // 4 gaps: fewer than the 8 a noise figure needs
}

// The client's pace alone: its gaps by retry index, added to what other lone probes gave, but not those
// after a Retry-After (the server chose them), nor a retry sent before its attempt ended (a timeout).
TEST(control, the_clients_pace_alone_is_its_own_gaps) {
    std::vector<record::journal_record> journal;
    for (std::uint64_t seq = 1; seq <= 4; ++seq) journal.push_back(attempt(seq, "op"));
    journal[1].retry_after_ms = 1000;  // the gap to seq 3 is the server's
    journal[3].request_ns = journal[2].finished_ns - 1;  // sent before seq 3 ended
    std::map<std::size_t, std::vector<std::int64_t>> gaps{{1, {5}}};
    checks::add_gaps_alone(journal, gaps);
    EXPECT_EQ(gaps, (std::map<std::size_t, std::vector<std::int64_t>>{{1, {5, 990}}}));
}

TEST(probe_file, the_probes_that_run_the_client_alone_give_its_pace) {
    const catalogue c = load_catalogue(FAULTLINE_CONFORMANCE_DIR);
    ASSERT_TRUE(c.ok()) << c.errors.front().to_string();
    std::vector<std::string> alone;
    for (const probe& p : c.probes) {
        if (p.alone()) alone.push_back(p.scenario.name);
    }
    EXPECT_EQ(alone, words({"persistent-5xx", "persistent-5xx-delete", "persistent-5xx-get", "persistent-5xx-head",
                            "persistent-reset", "persistent-reset-delete", "persistent-reset-get", "persistent-reset-head"}));
}

TEST(attribution, attempts_during_one_process_are_its_operation) {
    record::run_record run;
    for (std::uint64_t i = 1; i <= 4; ++i) run.journal.push_back(attempt(i, "key-" + std::to_string(i), "key-" + std::to_string(i)));
    run.command = record::command_result{};
    record::process_record p;
    p.op = 0;
    p.started_ns = 0;
    p.finished_ns = 10'000;
    run.command->processes.push_back(p);
    ASSERT_TRUE(attribute_to_processes(run));
    const auto operations = record::group_operations(run.journal);
    ASSERT_EQ(operations.size(), 1u);
    EXPECT_EQ(operations[0].operation, "process 0");
    EXPECT_EQ(operations[0].attempts.size(), 4u);
    EXPECT_EQ(run.journal[3].idempotency_key, "key-4");
}

TEST(attribution, overlapping_processes_keep_the_servers_names) {
    record::run_record run;
    run.journal = {attempt(1, "a"), attempt(2, "b")};
    run.command = record::command_result{};
    record::process_record first;
    first.started_ns = 0;
    first.finished_ns = 5'000;
    record::process_record second = first;
    second.op = 1;
    second.started_ns = 100;
    run.command->processes = {first, second};
    EXPECT_FALSE(attribute_to_processes(run));
    EXPECT_EQ(run.journal[0].operation, "a");
    record::run_record builtin;
    EXPECT_FALSE(attribute_to_processes(builtin));
}

}  // namespace
}  // namespace faultline::score
