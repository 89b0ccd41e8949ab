// The report writers against golden files. Set FAULTLINE_UPDATE_GOLDEN=1 to rewrite the files after
// an intended change, then review the diff.
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <boost/json/parse.hpp>
#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "faultline/reports/console.hpp"
#include "faultline/reports/json.hpp"
#include "faultline/reports/junit.hpp"
#include "faultline/reports/writer.hpp"

namespace faultline::reports {
namespace {

using ::testing::HasSubstr;
using record::journal_record;

journal_record attempt(std::uint64_t seq, std::string op, std::int64_t at_ms, int status,
                       record::effect_kind effect = record::effect_kind::none) {
    journal_record r;
    r.seq = seq;
    r.connection = static_cast<std::uint32_t>(seq);
    r.request_ns = at_ms * 1'000'000;
    r.finished_ns = r.request_ns + 1'000'000;
    r.method = "POST";
    r.target = "/charge";
    r.operation = std::move(op);
    r.status = static_cast<std::uint16_t>(status);
    r.effect = effect;
    return r;
}

// A passing scenario with a built-in client.
record::run_record passing_run() {
    record::run_record run;
    run.scenario = "lost_response_with_keys";
    run.scenario_file = "suites/lost_response_with_keys.toml";
    run.description = "a reply lost after commit; keys make the resend safe";
    run.seed = 42;
    run.started_at = std::chrono::system_clock::time_point{std::chrono::seconds{1'700'000'000}};
    run.duration = std::chrono::milliseconds{1234};
    run.journal = {attempt(1, "a", 0, 0, record::effect_kind::committed), attempt(2, "a", 50, 200, record::effect_kind::replayed)};
    run.journal[0].outcome = record::wire_outcome::reset;
    record::client_record c;
    c.operation = "a";
    c.client = "c1";
    c.success = true;
    c.attempts = 2;
    c.decision = "success";
    run.clients = {c};
    run.verdicts = {record::verdict{"no_double_effects", true, false,
                                     "1 operations, 1 committed effects, 0 operations with more than one; 0 indeterminate",
                                     {}, 0},
                    record::verdict{"max_attempts", true, true,
                                     "failed as expected: 1 of 1 operations made more than 1 attempts (most: 2)",
                                     {record::evidence_item{"a", {1, 2}, "2 attempts on the wire > max 1"}}, 1}};
    run.rule_firings = {record::rule_firing{"lose-first", "lost_response", 1, std::nullopt}};
    return run;
}

// A failing scenario with a third-party command whose output needs escaping and repair.
record::run_record failing_run() {
    record::run_record run;
    run.scenario = "curl <naive> & \"friends\"";
    run.scenario_file = "suites/my scenario's.toml";
    run.seed = 7;
    run.started_at = std::chrono::system_clock::time_point{std::chrono::seconds{1'700'000'100}};
    run.duration = std::chrono::milliseconds{2500};
    run.journal = {attempt(1, "h1", 0, 0, record::effect_kind::committed), attempt(2, "h1", 3, 200, record::effect_kind::committed),
                   attempt(3, "h2", 10, 404), attempt(4, "h2", 11, 404)};
    run.command = record::command_result{1, "line 1\nline 2 <ok> & \"done\"\n", std::string("bad byte \xff and bell \x07\n"), true,
                                          {record::process_record{0, 4242, 1'000'000, 2'400'000'000, 143, 15, true},
                                           record::process_record{1, 4243, 2'000'000, 300'000'000, 1, std::nullopt, false}},
                                          ""};
    run.declared.deadline = std::chrono::seconds{1};
    run.declared.max_attempts = 3;
    run.declared.backoff = record::declared_backoff{std::chrono::milliseconds{100}, std::chrono::seconds{2}, 2.0,
                                                     record::declared_jitter::equal, 0.2};
    record::verdict doubled{"no_double_effects", false, false,
                             "2 operations, 2 committed effects, 1 operations with more than one; 0 indeterminate", {}, 3};
    doubled.evidence = {record::evidence_item{"h1", {1, 2},
                                               "2 committed effects:\n#1 POST /charge at 0.0ms→1.0ms: reset, effect "
                                               "committed\n#2 POST /charge at 3.0ms→4.0ms: 200, effect committed"},
                        record::evidence_item{"", {}, "run-wide <note> & 'quote'"}};
    record::verdict unjudged{"jittered", false, false, "3 gaps at retry 1, 20 needed", {}, 0};
    unjudged.insufficient_evidence = true;
    record::verdict budget{"retry_budget", true, false,
                            "1 retries for 2 operations; token bucket (max 10, ratio 0.1): 0 retries issued at or below "
                            "half, lowest 9.5 tokens",
                            {}, 0};
    budget.parameters = {{"max_tokens", 10}, {"token_ratio", 0.1}};
    run.verdicts = {doubled, record::verdict{"no_retry_on_status", true, false, "nothing retried after 4xx", {}, 0},
                    unjudged, budget};
    run.harness_error = "server stopped: port <gone>";
    run.rule_firings = {record::rule_firing{"lose-response", "lost_response", 2, 3},
                        record::rule_firing{"slow <path>", "delay", 0, std::nullopt}};
    run.server_events = {
        record::server_event{record::server_event_kind::idle_timeout, 5, 5'000'000, "", "", "127.0.0.1:40110"},
        record::server_event{record::server_event_kind::reset, 6, 6'000'000, "", "", "127.0.0.1:40112"},
        record::server_event{record::server_event_kind::idle_timeout, 7, 7'000'000, "", "", "127.0.0.1:40114"}};
    run.interrupted = record::run_interruption{SIGINT, 3'240'000'000, 2};
    return run;
}

std::string golden_path(std::string_view name) { return std::string(FAULTLINE_REPORTS_GOLDEN_DIR) + "/" + std::string(name); }

void expect_golden(std::string_view name, const std::string& actual) {
    const std::string path = golden_path(name);
    if (std::getenv("FAULTLINE_UPDATE_GOLDEN") != nullptr) {
        std::ofstream(path, std::ios::binary) << actual;
        return;
    }
    std::ifstream in(path, std::ios::binary);
    ASSERT_TRUE(in) << "missing golden file " << path << " (run with FAULTLINE_UPDATE_GOLDEN=1)";
    std::stringstream expected;
    expected << in.rdbuf();
    EXPECT_EQ(actual, expected.str()) << "differs from " << path;
}

TEST(console_report, matches_golden) {
    expect_golden("console.txt", console_report(passing_run()) + console_report(failing_run()));
}

TEST(console_report, shows_the_interruption_the_rule_firings_warnings_and_server_events) {
    const std::string out = console_report(failing_run());
    EXPECT_EQ(out.rfind("FAIL (interrupted) ", 0), 0U) << out;
    EXPECT_THAT(out, HasSubstr("\n  interrupted by SIGINT after 3.2 s: stopped 2 client processes\n"));
    EXPECT_THAT(out, HasSubstr("\n  rule `lose-response` (lost_response) fired 2 times, min_fired 3\n"));
    EXPECT_THAT(out, HasSubstr("\n  warning: rule `slow <path>` (delay) never fired: its fault was not exercised "
                               "(--strict makes this fatal)\n"));
    EXPECT_THAT(out, HasSubstr("\n  server events: 1 reset, 2 idle_timeout\n"));
    EXPECT_THAT(console_report(passing_run()), HasSubstr("\n  rule `lose-first` (lost_response) fired 1 time\n"));
}

// A client that could not be started has no exit status to report: the console, JUnit and JSON say why.
TEST(console_report, a_command_that_could_not_start_says_so_instead_of_an_exit_status) {
    record::run_record run = passing_run();
    run.command = record::command_result{};
    run.command->start_error = R"(cannot start "/no/client": No such file or directory)";
    const std::string out = console_report(run);
    EXPECT_THAT(out, HasSubstr("\n  command: not started: cannot start \"/no/client\": No such file or directory\n"));
    EXPECT_THAT(out, ::testing::Not(HasSubstr("exit status")));
    const std::vector runs{run};
    EXPECT_THAT(junit_report(runs), HasSubstr("<system-out>not started: cannot start"));
    EXPECT_THAT(json_report(runs), HasSubstr(R"("start_error": "cannot start \"/no/client\": No such file or directory")"));
    // One that failed after others ran keeps their status and says what did not start.
    run.command->exit_status = 1;
    run.command->processes.push_back(record::process_record{0, 42, 0, 10, 1, std::nullopt, false});
    EXPECT_THAT(console_report(run), HasSubstr("\n  command: exit status 1; then not started: cannot start"));
}

TEST(console_report, colour_and_failed_only) {
    const std::string out = console_report(failing_run(), {.color = true, .show_passed = false});
    EXPECT_THAT(out, HasSubstr("\x1b[31mFAIL (interrupted)\x1b[0m curl"));
    EXPECT_THAT(out, HasSubstr("\x1b[31m✘\x1b[0m no_double_effects"));
    EXPECT_THAT(out, ::testing::Not(HasSubstr("no_retry_on_status")));
    // A client's control characters never reach the terminal.
    EXPECT_THAT(out, ::testing::Not(HasSubstr("\x07")));
    EXPECT_THAT(out, HasSubstr("bad byte \xEF\xBF\xBD and bell \xEF\xBF\xBD"));
}

TEST(console_report, replay_line_can_be_left_out) {
    EXPECT_THAT(console_report(passing_run()), HasSubstr("  replay: faultline run"));
    EXPECT_THAT(console_report(passing_run(), {.show_replay = false}), ::testing::Not(HasSubstr("replay:")));
}

TEST(console_report, replay_command_quotes_odd_paths) {
    EXPECT_EQ(replay_command(passing_run()), "faultline run suites/lost_response_with_keys.toml --seed 42");
    EXPECT_EQ(replay_command(failing_run()), "faultline run 'suites/my scenario'\\''s.toml' --seed 7");
}

// A run cut short by a signal passed nothing, whatever its checks said of the part that ran.
TEST(json_report, an_interrupted_run_whose_checks_passed_is_not_passed) {
    record::run_record cut_short = passing_run();
    cut_short.interrupted = record::run_interruption{SIGINT, 1'000'000'000, 0};
    const boost::json::value doc = boost::json::parse(json_report(std::vector{cut_short}));
    EXPECT_FALSE(doc.at("passed").as_bool());
    EXPECT_FALSE(doc.at("scenarios").at(0).at("passed").as_bool());
    EXPECT_EQ(doc.at("scenarios").at(0).at("outcome").as_string(), "insufficient_evidence");
}

TEST(json_report, matches_golden_and_parses) {
    const std::string out = json_report(std::vector{passing_run(), failing_run()});
    expect_golden("report.json", out);
    const boost::json::value doc = boost::json::parse(out);
    EXPECT_FALSE(doc.at("passed").as_bool());
    const auto& scenarios = doc.at("scenarios").as_array();
    ASSERT_EQ(scenarios.size(), 2u);
    EXPECT_EQ(scenarios[0].at("seed").to_number<std::uint64_t>(), 42u);
    EXPECT_TRUE(scenarios[0].at("passed").as_bool());
    EXPECT_EQ(scenarios[1].at("verdicts").at(0).at("evidence").at(0).at("seqs").as_array().size(), 2u);
    EXPECT_TRUE(scenarios[1].at("verdicts").at(0).at("parameters").as_object().empty());
    EXPECT_EQ(scenarios[1].at("verdicts").at(3).at("parameters").at("max_tokens").to_number<double>(), 10.0);
    EXPECT_EQ(scenarios[1].at("verdicts").at(3).at("parameters").at("token_ratio").to_number<double>(), 0.1);
    EXPECT_EQ(scenarios[1].at("command").at("stderr").as_string(), "bad byte \xEF\xBF\xBD and bell \x07\n");
    const auto& processes = scenarios[1].at("command").at("processes").as_array();
    ASSERT_EQ(processes.size(), 2u);
    EXPECT_EQ(processes[0].at("pid").to_number<std::int64_t>(), 4242);
    EXPECT_EQ(processes[0].at("finished_ns").to_number<std::int64_t>(), 2'400'000'000);
    EXPECT_EQ(processes[0].at("signal").to_number<int>(), 15);
    EXPECT_TRUE(processes[1].at("signal").is_null());
    EXPECT_EQ(scenarios[1].at("declared").at("deadline_ns").to_number<std::int64_t>(), 1'000'000'000);
    EXPECT_EQ(scenarios[1].at("declared").at("backoff").at("jitter").as_string(), "equal");
    EXPECT_TRUE(scenarios[0].at("declared").is_null());
    EXPECT_FALSE(scenarios[0].at("interrupted").as_bool());
    EXPECT_TRUE(scenarios[1].at("interrupted").as_bool());
    EXPECT_EQ(scenarios[1].at("interruption").at("signal").as_string(), "SIGINT");
    EXPECT_EQ(scenarios[1].at("interruption").at("processes_stopped").to_number<int>(), 2);
    EXPECT_EQ(scenarios[1].at("rule_firings").at(0).at("fired").to_number<int>(), 2);
    EXPECT_EQ(scenarios[1].at("rule_firings").at(0).at("min_fired").to_number<int>(), 3);
    EXPECT_TRUE(scenarios[1].at("rule_firings").at(1).at("min_fired").is_null());
    EXPECT_EQ(scenarios[1].at("warnings").as_array().size(), 1u);
    EXPECT_EQ(scenarios[1].at("server_events").at("counts").at("idle_timeout").to_number<int>(), 2);
    EXPECT_EQ(scenarios[1].at("server_events").at("events").as_array().size(), 3u);
}

TEST(junit_report, matches_golden_and_is_well_formed) {
    const std::string out = junit_report(std::vector{passing_run(), failing_run()});
    expect_golden("junit.xml", out);
    std::istringstream in(out);
    boost::property_tree::ptree tree;
    ASSERT_NO_THROW(boost::property_tree::read_xml(in, tree));
    // The interruption is an erroneous test case of its own, beside the harness error.
    EXPECT_EQ(tree.get<std::string>("testsuites.<xmlattr>.tests"), "8");
    EXPECT_EQ(tree.get<std::string>("testsuites.<xmlattr>.failures"), "1");
    EXPECT_EQ(tree.get<std::string>("testsuites.<xmlattr>.errors"), "2");
    EXPECT_THAT(out, HasSubstr("<error message=\"interrupted by SIGINT after 3.2 s: stopped 2 client processes\" "
                               "type=\"interrupted\"/>"));
    EXPECT_THAT(out, HasSubstr("<property name=\"fired:lose-response\" value=\"2\"/>"));
    EXPECT_THAT(out, HasSubstr("<property name=\"server_events\" value=\"1 reset, 2 idle_timeout\"/>"));
    // A check that could not judge is "skipped" with its reason, neither a pass nor a failure.
    EXPECT_EQ(tree.get<std::string>("testsuites.<xmlattr>.skipped"), "1");
    EXPECT_THAT(out, HasSubstr("<skipped message=\"insufficient evidence: 3 gaps at retry 1, 20 needed\"/>"));
    EXPECT_THAT(out, ::testing::Not(HasSubstr("\x07")));
    EXPECT_THAT(out, ::testing::Not(HasSubstr("\xff")));
}

TEST(markdown_report, matches_golden) {
    const auto* writer = report_registry::instance().find("markdown");
    ASSERT_NE(writer, nullptr);
    const std::string out = writer->render(std::vector{passing_run(), failing_run()});
    expect_golden("report.md", out);
    // Markup in a scenario name stays literal; the failed check's evidence is a code block.
    EXPECT_THAT(out, HasSubstr("| ⚠️ error | curl \\<naive\\> & \"friends\" |"));
    EXPECT_THAT(out, HasSubstr("- **no\\_double\\_effects**: 2 operations"));
    EXPECT_THAT(out, HasSubstr("```\n· op h1 [#1 #2]"));
    EXPECT_THAT(out, HasSubstr("| lose-first 1 |"));
    EXPECT_THAT(out, HasSubstr("interrupted by SIGINT after 3.2 s"));
    EXPECT_THAT(out, HasSubstr("Warning: rule \\`slow \\<path\\>\\` (delay) never fired"));
    EXPECT_THAT(out, HasSubstr("Server events: 1 reset, 2 idle\\_timeout"));
    EXPECT_THAT(out, ::testing::Not(HasSubstr("\x07")));
}

// `faultline check` reads a journal back: no wall-clock start is known, and none is made up.
TEST(junit_report, a_run_without_a_wall_clock_start_has_no_timestamp_and_json_says_null) {
    record::run_record run = passing_run();
    run.started_at = {};
    EXPECT_THAT(junit_report(std::vector{run}), ::testing::Not(HasSubstr("timestamp=")));
    const auto doc = boost::json::parse(json_report(std::vector{run}));
    EXPECT_TRUE(doc.at("scenarios").at(0).at("started_at").is_null());
}

TEST(junit_report, no_runs_is_an_empty_document) {
    EXPECT_EQ(junit_report({}),
              "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
              "<testsuites name=\"faultline\" tests=\"0\" failures=\"0\" errors=\"0\" skipped=\"0\" time=\"0.000\">\n"
              "</testsuites>\n");
}

}  // namespace
}  // namespace faultline::reports
