// `faultline score` as a user runs it: real curl and wget through every conformance probe, the
// builtin client, and bad templates. The curl and wget verdicts are the ones docs/score.md explains
// from their own documentation; a change in any of them is a change in what faultline tells users.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <boost/json/parse.hpp>

#include "child_process.hpp"

namespace faultline::cli::testing {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::ContainsRegex;
using ::testing::MatchesRegex;

bool curl_installed() { return ::access("/usr/bin/curl", X_OK) == 0; }
bool wget_installed() { return ::access("/usr/bin/wget", X_OK) == 0; }

std::vector<std::string> score(std::vector<std::string> client) {
    std::vector<std::string> args{FAULTLINE_BINARY, "score"};
    args.insert(args.end(), client.begin(), client.end());
    return args;
}

// The scorecard row of a property: "  FAIL         no second execution … 7 of 8 situations passed".
std::string row(const std::string& out, std::string_view title) {
    const std::size_t at = out.find(std::string(title));
    if (at == std::string::npos) return "";
    const std::size_t start = out.rfind('\n', at) + 1;
    return out.substr(start, out.find('\n', at) - start);
}

TEST(score_command, curl_with_retry_resends_a_post_on_a_dead_kept_alive_connection_and_never_jitters) {
    if (!curl_installed()) GTEST_SKIP() << "curl is not installed";
    child proc{score({"--", "curl", "-s", "--retry", "3", "-X", "{method}", "{url}{path}", "-d", "{body}"})};
    const auto r = proc.finish();
    EXPECT_EQ(r.code, 1) << r.out << r.err;
    // libcurl re-sends a request whose reused connection died before any reply: the POST is charged
    // twice, right after the 503 it retried.
    EXPECT_THAT(row(r.out, "no second execution"), HasSubstr("FAIL"));
    EXPECT_THAT(r.out, HasSubstr("(lost-response-kept-alive, no_double_effects)"));
    EXPECT_THAT(r.out, HasSubstr("on conn 1 (request 2, kept alive)"));
    // --retry retries 408, 429, 500, 502, 503, 504 and timeouts only; it waits for Retry-After; and
    // its fixed 1 s first delay sends the herd back as one wave.
    EXPECT_THAT(row(r.out, "only retryable statuses"), HasSubstr("PASS"));
    EXPECT_THAT(row(r.out, "Retry-After honoured"), HasSubstr("PASS"));
    // Its fixed delay fails the jitter row on a quiet run; where the control measured more noise than
    // the floor (a sanitizer build's slower control, its tests running two at a time) the row may be
    // insufficient evidence instead — never a pass.
    const std::string jitter_row = row(r.out, "retries jittered");
    EXPECT_THAT(jitter_row, ContainsRegex("^  (FAIL|INSUFFICIENT) +retries jittered"));
    if (jitter_row.find("INSUFFICIENT") != std::string::npos) {
        EXPECT_THAT(jitter_row, HasSubstr("could not tell the client from the noise its control measured"));
    }
    // ~1 s each: the median gap is curl's fixed delay, give or take the scheduling noise of a loaded
    // 2-core CI machine or a sanitizer build (seen there: 1010.6 ms), judged in a window of 3 % of it.
    // A probe repeated because the noise hid the client names the round it was judged in first, and
    // one whose every round was within the control's noise (two scorecards at once) says so first.
    EXPECT_THAT(r.out, ContainsRegex("\\(herd, jittered\\): [^\n]*retry 1: 24 gaps, min/median/max [0-9.]+ms/(99[0-9]|1[01][0-9][0-9])\\.[0-9]ms/"));
    // The window is the probe's floor (3 % of the median) or the noise the control measured when wider.
    EXPECT_THAT(r.out, ContainsRegex("the densest [0-9]+\\.[0-9]ms holds"));
    EXPECT_THAT(r.out, HasSubstr("judged against the control (24 processes, fixed 1000.0ms delay)"));
    EXPECT_THAT(row(r.out, "idempotency key stable"), HasSubstr("the client sent no Idempotency-Key"));
    EXPECT_THAT(row(r.out, "deadline kept"), HasSubstr("no deadline declared (--deadline)"));
}

// A client run by python3 or node is judged against the control written for its runtime and started
// by the same interpreter (harness/score/controls): the 24 control processes reach the server, their
// gaps are measured, and the verdict names what ran them. `--control builtin` keeps faultline's own.
// The client: one PUT, then up to 2 retries after 0.5–1.5 s, whatever failed.
TEST(score_command, a_python_or_node_client_is_judged_against_a_control_on_its_own_runtime) {
    const std::string python_client =
        "import random, sys, time, urllib.request\n"
        "for n in range(3):\n"
        "    try:\n"
        "        urllib.request.urlopen(urllib.request.Request(sys.argv[1], data=sys.argv[2].encode(), method='PUT'),"
        " timeout=5)\n"
        "        break\n"
        "    except Exception:\n"
        "        time.sleep(0.5 + random.random())\n";
    const std::string node_client =
        "for (let n = 0; n < 3; ++n) {"
        "  try { const r = await fetch(process.argv[1], {method: 'PUT', body: process.argv[2]}); if (r.ok) break; }"
        "  catch {}"
        "  await new Promise((done) => setTimeout(done, 500 + 1000 * Math.random()));"
        "}";
    const struct {
        std::vector<std::string> client;
        std::string control;
        std::string judged_against;
    } cases[] = {
        {{"python3", "-c", python_client, "{url}{path}", "{body}"}, "auto", "the control (24 Python processes, fixed 1000.0ms delay): 72 gaps"},
        {{"node", "--input-type=module", "-e", node_client, "--", "{url}{path}", "{body}"}, "auto",
         "the control (24 Node.js processes, fixed 1000.0ms delay): 72 gaps"},
        {{"python3", "-c", python_client, "{url}{path}", "{body}"}, "builtin", "the control (24 processes, fixed 1000.0ms delay): 72 gaps"},
    };
    for (const auto& c : cases) {
        if (::access(("/usr/bin/" + c.client.front()).c_str(), X_OK) != 0) {
            ADD_FAILURE() << c.client.front() << " is not installed (scripts/install-deps.sh installs it)";
            continue;
        }
        std::vector<std::string> args{"--only", "herd", "--timing-rounds", "1", "--verbose", "--control", c.control, "--"};
        args.insert(args.end(), c.client.begin(), c.client.end());
        child proc{score(args)};
        const auto r = proc.finish();
        EXPECT_THAT(r.out, HasSubstr(c.judged_against)) << c.client.front() << " " << c.control << "\n" << r.out << r.err;
    }
}

// wget retries network errors whatever the method, and not 5xx or 429 (docs/score.md, "wget
// --tries=4"): each reply lost after commit, and the late one its 1 s timeout gave up on, is
// charged twice; the probes that commit only on a retry after a status have nothing to judge.
TEST(score_command, wget_resends_a_post_after_a_lost_reply_and_retries_no_status) {
    if (!wget_installed()) GTEST_SKIP() << "wget is not installed";
    child proc{score({"--max-attempts", "4", "--", "wget", "-q", "-O", "/dev/null", "--tries=4", "--timeout={timeout}",
                      "--method={method}", "--body-data={body}", "{url}{path}"})};
    const auto r = proc.finish();
    EXPECT_EQ(r.code, 1) << r.out << r.err;
    EXPECT_THAT(row(r.out, "no second execution"), HasSubstr("FAIL"));
    EXPECT_THAT(row(r.out, "no second execution"), HasSubstr("1 of 4 situations passed, 4 not judged"));
    EXPECT_THAT(r.out, HasSubstr("(lost-response-fresh-connection, no_double_effects)"));
    EXPECT_THAT(r.out, HasSubstr("(reset-after-commit, no_double_effects)"));
    EXPECT_THAT(r.out, HasSubstr("(committed-then-timeout, no_double_effects)"));
    EXPECT_THAT(row(r.out, "only retryable statuses"), HasSubstr("PASS"));
    EXPECT_THAT(row(r.out, "failures before anything was sent"), HasSubstr("PASS"));
    EXPECT_THAT(row(r.out, "Retry-After honoured"), HasSubstr("N/A"));
    EXPECT_THAT(row(r.out, "attempts within the declared limit"), HasSubstr("PASS"));
}

TEST(score_command, curl_without_retry_is_judged_only_where_not_retrying_counts) {
    if (!curl_installed()) GTEST_SKIP() << "curl is not installed";
    child proc{score({"--", "curl", "-s", "-X", "{method}", "{url}{path}", "-d", "{body}"})};
    const auto r = proc.finish();
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_THAT(row(r.out, "no second execution"), HasSubstr("PASS"));
    EXPECT_THAT(row(r.out, "only retryable statuses"), HasSubstr("PASS"));
    EXPECT_THAT(row(r.out, "Retry-After honoured"), HasSubstr("N/A"));
    EXPECT_THAT(row(r.out, "failures before anything was sent"), HasSubstr("the client never retried in any probe"));
}

// Issue 10, item 7: a template that ignores {method} sends a GET where the probe loses the reply to
// a POST. The fault never fires, so the probe proved nothing: not a pass, but too little evidence.
TEST(score_command, a_probe_whose_fault_never_fired_is_not_judged) {
    if (!curl_installed()) GTEST_SKIP() << "curl is not installed";
    child proc{score({"--only", "lost-response-fresh-connection", "--", "curl", "-s", "-o", "/dev/null", "{url}{path}"})};
    const auto r = proc.finish();
    EXPECT_EQ(r.code, 4) << r.out << r.err;
    EXPECT_THAT(row(r.out, "no second execution"), HasSubstr("INSUFFICIENT"));
    EXPECT_THAT(row(r.out, "no second execution"),
                HasSubstr("not judged: fault rule `lost_response-1` never fired (min_fired = 1)"));
    EXPECT_THAT(r.out, HasSubstr("the fault it stands for was never exercised"));
}

// curl without retries never sends the kept-alive probe's second attempt, so its lost response is
// never met: that probe is not judged, the others pass the row.
TEST(score_command, curl_without_retry_is_not_judged_where_it_never_met_the_fault) {
    if (!curl_installed()) GTEST_SKIP() << "curl is not installed";
    child proc{score({"--only", "lost-response-*", "--", "curl", "-s", "-X", "{method}", "{url}{path}", "-d", "{body}"})};
    const auto r = proc.finish();
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_THAT(row(r.out, "no second execution"), HasSubstr("PASS"));
    EXPECT_THAT(row(r.out, "no second execution"), HasSubstr("1 of 1 situation passed, 1 not judged"));
    EXPECT_THAT(r.out, HasSubstr("(lost-response-kept-alive, no_double_effects): not judged: fault rule "
                                 "`lost_response-2` never fired (min_fired = 1)"));
}

// curl's documented curve: 1 s, doubling, no jitter. Declared right it passes; declared as a 100 ms
// full-jitter curve, the 1 s and 2 s gaps lie outside it.
TEST(score_command, a_declared_backoff_curve_is_judged_on_persistent_5xx) {
    if (!curl_installed()) GTEST_SKIP() << "curl is not installed";
    const std::vector<std::string> curl{"curl", "-s", "--retry", "3", "-X", "{method}", "{url}{path}", "-d", "{body}"};
    std::vector<std::string> right{"--only", "persistent-5xx", "--backoff", "1s:600s", "--jitter", "none", "--"};
    right.insert(right.end(), curl.begin(), curl.end());
    child good{score(right)};
    const auto g = good.finish();
    EXPECT_EQ(g.code, 0) << g.out << g.err;
    EXPECT_THAT(row(g.out, "backoff spaced and growing"), HasSubstr("PASS"));

    std::vector<std::string> wrong{"--only", "persistent-5xx", "--backoff", "100ms:1s", "--jitter", "full", "--"};
    wrong.insert(wrong.end(), curl.begin(), curl.end());
    child bad{score(wrong)};
    const auto b = bad.finish();
    EXPECT_EQ(b.code, 1) << b.out << b.err;
    EXPECT_THAT(row(b.out, "backoff spaced and growing"), HasSubstr("FAIL"));
    EXPECT_THAT(b.out, HasSubstr("outside [0.0ms, 100.0ms]"));
}

TEST(score_command, the_builtin_client_passes_every_property) {
    child proc{score({})};
    const auto r = proc.finish();
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("declared: each probe's [client] policy"));
    EXPECT_THAT(r.out, ::testing::Not(HasSubstr("not judged"))) << "a probe's fault never met the builtin client";
    for (const char* title : {"evidence intact", "no second execution", "only retryable statuses", "Retry-After honoured",
                              "failures before anything was sent", "idempotency key stable", "retries jittered",
                              "backoff spaced and growing", "attempts within the declared limit", "deadline kept"}) {
        EXPECT_THAT(row(r.out, title), HasSubstr("PASS")) << title << "\n" << r.out;
    }
}

TEST(score_command, bad_templates_and_settings_are_usage_errors_and_nothing_runs) {
    const auto code_and_err = [](std::vector<std::string> args) {
        child proc{score(std::move(args))};
        const auto r = proc.finish();
        EXPECT_THAT(r.out, ::testing::Not(HasSubstr("faultline score:"))) << "a scorecard was printed";
        return std::pair{r.code, r.err};
    };
    EXPECT_EQ(code_and_err({"--", "curl", "{url}{pth}"}),
              std::pair(2, std::string("faultline score: unknown placeholder {pth} in the client template; known: "
                                       "{attempt_timeout} {attempt_timeout_ms} {body} {client} {deadline} {deadline_ms} "
                                       "{key} {method} {n} {op} {path} {service_config} {timeout} {timeout_ms} {url}\n")));
    EXPECT_THAT(code_and_err({"--", "curl", "http://127.0.0.1:1/x"}).second,
                HasSubstr("the client template never names the server"));
    EXPECT_EQ(code_and_err({"--deadline", "5x", "--", "curl", "{url}"}),
              std::pair(2, std::string("faultline score: --deadline: expected seconds (5, 1.5) or a duration with a "
                                       "unit (5s, 500ms), got 5x\n")));
    EXPECT_EQ(code_and_err({"--timeout", "abc", "--", "curl", "{url}"}).first, 2);
    EXPECT_EQ(code_and_err({"--deadline", "2h", "--", "curl", "{url}"}),
              std::pair(2, std::string("faultline score: --deadline: must be in [100ms, 1m], got 2h\n")));
    EXPECT_EQ(code_and_err({"--max-attempts", "0", "--", "curl", "{url}"}).first, 2);
    EXPECT_THAT(code_and_err({"--backoff", "1s", "--jitter", "none", "--", "curl", "{url}"}).second,
                HasSubstr("faultline score: --backoff: expected BASE:CAP, exponential:BASE[:CAP], linear:BASE[:CAP] "
                          "or constant:DELAY"));
    EXPECT_EQ(code_and_err({"--backoff", "1s:10s", "--", "curl", "{url}"}),
              std::pair(2, std::string("faultline score: --backoff needs the curve's jitter: --jitter none, full, "
                                       "equal, decorrelated, proportional[:F], above:F, below:F or additive:MAX\n")));
    EXPECT_EQ(code_and_err({"--jitter", "full", "--", "curl", "{url}"}),
              std::pair(2, std::string("faultline score: --jitter full describes a --backoff curve: give the curve "
                                       "too\n")));
    // Every output path is checked before the first probe runs.
    EXPECT_EQ(code_and_err({"--scorecard-json", "/nonexistent-folder/card.json", "--", "curl", "{url}"}),
              std::pair(2, std::string("faultline score: --scorecard-json /nonexistent-folder/card.json: its folder "
                                       "/nonexistent-folder does not exist\n")));
}

// A client that retries at once (urllib3 with backoff_factor 0) fails the spacing row at the herd: a
// median gap under 20 ms is no wait, and noise only lengthens a wait.
TEST(score_command, a_client_that_never_waits_fails_spacing_at_the_herd) {
    if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "python3 is not installed";
    child probe_python{{"/usr/bin/python3", "-c", "import urllib3"}};
    if (probe_python.finish().code != 0) GTEST_SKIP() << "urllib3 is not installed";
    child proc{score({"--only", "herd", "--", "/usr/bin/python3", "-c",
                      "import sys, urllib3\n"
                      "retry = urllib3.Retry(total=3, backoff_factor=0, status_forcelist=[503], allowed_methods=None,"
                      " raise_on_status=False)\n"
                      "urllib3.PoolManager(retries=retry).request(sys.argv[1], sys.argv[2], body=sys.argv[3])",
                      "{method}", "{url}{path}", "{body}"})};
    const auto r = proc.finish();
    // On a quiet machine its gaps are a few ms: a failure with the medians as evidence. When the
    // machine is busy enough (ctest -j2 beside a build) to push them past 20 ms, the row may be
    // insufficient evidence instead — never a pass.
    EXPECT_THAT(r.code, ::testing::AnyOf(1, 4)) << r.out << r.err;
    EXPECT_THAT(row(r.out, "backoff spaced and growing"), ::testing::Not(HasSubstr("PASS"))) << r.out;
    // The evidence: the retry indexes' medians, or — where the server's own lateness explains most
    // of an index's short gaps, so no median is judged — the operations whose every gap it could judge.
    if (row(r.out, "backoff spaced and growing").find("FAIL") != std::string::npos) {
        EXPECT_THAT(r.out, ContainsRegex("retry [0-9]: the median of [0-9]+ gaps is [0-9.]+ms, under min_gap 20.0ms|"
                                         "[0-9]+ of its [0-9]+ retries came under min_gap 20.0ms after the previous "
                                         "attempt ended: back to back"));
    }
    EXPECT_THAT(row(r.out, "retries jittered"), ::testing::Not(HasSubstr("PASS")));
}

// curl's constant --retry-delay 1: never a pass of the jitter row (a failure on a quiet run, or
// insufficient evidence when the control saw more noise than the floor), and no growth.
TEST(score_command, a_constant_delay_never_passes_the_jitter_row) {
    if (!curl_installed()) GTEST_SKIP() << "curl is not installed";
    child proc{score({"--only", "herd", "--", "curl", "-s", "--retry", "3", "--retry-delay", "1", "-X", "{method}",
                      "{url}{path}", "-d", "{body}"})};
    const auto r = proc.finish();
    EXPECT_THAT(row(r.out, "retries jittered"), ::testing::Not(HasSubstr("PASS"))) << r.out;
    EXPECT_THAT(row(r.out, "backoff spaced and growing"), ::testing::Not(HasSubstr("PASS"))) << r.out;
}

// Ctrl-C on `score` while a probe's client runs: the stderr line promises "judging and reporting
// what ran", so the --report files hold that probe, marked interrupted.
TEST(score_command, an_interrupted_score_writes_the_reports_of_what_ran) {
    const fs::path started = temp_file("score-interrupt.started");
    const fs::path report = temp_file("score-interrupt.json");
    fs::remove(started);
    fs::remove(report);
    const std::string client = "echo $$ > " + started.string() + "; exec sleep 60";
    child proc{score({"--only", "slow-responses", "--deadline", "5s", "--report", "json:" + report.string(), "--", "sh",
                      "-c", client, "{url}"})};
    ASSERT_TRUE(proc.started());
    // Bounds a hung test; not a timing assertion.
    for (int i = 0; i < 2000 && !fs::exists(started); ++i) std::this_thread::sleep_for(10ms);
    ASSERT_TRUE(fs::exists(started)) << "the client never started";
    proc.signal(SIGINT);
    const auto r = proc.finish();
    EXPECT_EQ(r.code, 130) << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr("judging and reporting what ran"));
    EXPECT_THAT(r.out, HasSubstr("faultline score: interrupted by SIGINT: stopped the clients; 1 of 1 probes ran, "
                                 "their reports written; no scorecard"));
    ASSERT_TRUE(fs::exists(report)) << r.out;
    const boost::json::value doc = boost::json::parse(read_file(report));
    const auto& run = doc.at("scenarios").at(0);
    EXPECT_EQ(run.at("scenario").as_string(), "slow-responses");
    EXPECT_TRUE(run.at("interrupted").as_bool());
    EXPECT_EQ(run.at("interruption").at("signal").as_string(), "SIGINT");
    fs::remove(started);
    fs::remove(report);
}

// slow-responses judges only a declared deadline: without --deadline it is not run, and says why.
TEST(score_command, a_probe_that_judges_only_what_was_not_declared_is_not_run) {
    child alone{score({"--only", "slow-responses", "--", "sh", "-c", "exit 0", "{url}"})};
    const auto r = alone.finish();
    EXPECT_EQ(r.code, 2) << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr("every probe selected judges only what was not declared: slow-responses (no deadline "
                                 "declared (--deadline))"));
    child beside{score({"--only", "slow-responses", "--only", "status-404", "--", "sh", "-c", "exit 0", "{url}"})};
    EXPECT_THAT(beside.finish().out, HasSubstr("in 1 situations, 4 at a time; not run, judging only what was not "
                                               "declared: slow-responses (no deadline declared (--deadline))"));
}

TEST(score_command, a_program_that_cannot_start_is_a_harness_error) {
    child proc{score({"--only", "status-404", "--", "/nonexistent/client", "{url}"})};
    const auto r = proc.finish();
    EXPECT_EQ(r.code, 3) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("harness error: status-404:"));
}

TEST(score_command, a_client_that_never_reaches_the_server_is_bad_input) {
    child proc{score({"--only", "status-404", "--", "sh", "-c", "exit 0", "{url}"})};
    const auto r = proc.finish();
    EXPECT_EQ(r.code, 2) << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr("the client never reached the server in any probe"));
}

}  // namespace
}  // namespace faultline::cli::testing
