// `faultline run|check --report FORMAT:PATH` and `--report-dir` as a user types them: every registered
// format can be written, "{scenario}" makes one file per scenario, bad specs are usage errors (exit 2)
// caught before anything runs, and `check` reads the expectations before the journal.
#include "child_process.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace faultline::cli::testing {
namespace {

const std::string suite = std::string{FAULTLINE_SUITES_DIR} + "/lost-response-keys.good.toml";

TEST(report_option, writes_the_same_files_as_report_dir) {
    const fs::path dir = temp_file("reports");
    fs::remove_all(dir);
    child proc{{FAULTLINE_BINARY, "run", suite, "--seed", "5", "--report-dir", (dir / "all").string(), "--report",
                "json:" + (dir / "one.json").string(), "--report", "junit:" + (dir / "deep/junit.xml").string(),
                "--report", "journal:" + (dir / "{scenario}.jsonl").string()}};
    const auto r = proc.finish();
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(read_file(dir / "one.json"), read_file(dir / "all/lost-response-keys.good.json"));
    EXPECT_EQ(read_file(dir / "lost-response-keys.good.jsonl"), read_file(dir / "all/lost-response-keys.good.journal.jsonl"));
    EXPECT_NE(read_file(dir / "deep/junit.xml").find("<testsuite name=\"lost-response-keys.good\""), std::string::npos);
    EXPECT_FALSE(read_file(dir / "one.json").empty());
    fs::remove_all(dir);
}

TEST(report_option, an_unknown_format_is_a_usage_error_naming_the_formats) {
    child proc{{FAULTLINE_BINARY, "run", suite, "--report", "yaml:out.yaml"}};
    const auto r = proc.finish();
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("unknown report format \"yaml\"; allowed: console, html, journal, json, junit, markdown"), std::string::npos)
        << r.err;
}

TEST(report_option, a_journal_for_several_scenarios_needs_the_placeholder_and_nothing_runs) {
    child proc{{FAULTLINE_BINARY, "run", suite, std::string{FAULTLINE_SUITES_DIR} + "/status-4xx.good.toml",
                "--report", "journal:" + temp_file("j.jsonl").string()}};
    const auto r = proc.finish();
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("put {scenario} in the path"), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("running"), std::string::npos) << r.out;
}

// Three scenarios, one passing, one failing its check, one whose client cannot start: --summary prints a
// line each, --failures-only the two that did not pass; both close with those two and their replays.
struct mixed_suite {
    fs::path dir = temp_file("mixed-suite");
    fs::path failing = dir / "failing.toml";
    fs::path no_client = dir / "no-client.toml";

    mixed_suite() {
        fs::remove_all(dir);
        fs::create_directories(dir);
        // The bad preset without its expect_failure: it charges twice and fails.
        std::string bad = read_file(std::string{FAULTLINE_SUITES_DIR} + "/lost-response-keys.bad.toml");
        const std::string name = "name = \"lost-response-keys.bad\"";
        bad.replace(bad.find(name), name.size(), "name = \"failing\"");
        bad.erase(bad.find("expect_failure = true"));
        std::ofstream{failing} << bad;
        std::ofstream{no_client} << "name = \"no-client\"\nseed = 3\n[client]\ndriver = \"command\"\n"
                                    "command = [\"/nonexistent/faultline-client\", \"{url}\"]\n"
                                    "[[expect]]\ncheck = \"no_double_effects\"\n";
    }
    ~mixed_suite() { fs::remove_all(dir); }

    child::result run(const std::string& option) const {
        child proc{{FAULTLINE_BINARY, "run", suite, failing.string(), no_client.string(), option, "--quiet"}};
        return proc.finish();
    }

    std::string closing() const {
        return "not passed:\n  FAIL failing  faultline run " + failing.string() + " --seed 101\n  FAIL no-client  faultline run " +
               no_client.string() + " --seed 3\n";
    }
};

TEST(run_output, summary_prints_a_line_a_scenario_and_closes_with_what_did_not_pass) {
    const mixed_suite s;
    const auto r = s.run("--summary");
    EXPECT_EQ(r.code, 3) << r.err;  // the harness error of the client that could not start
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1 + 3 + 1 + 3) << r.out;  // running, 3 scenarios, totals, list
    EXPECT_NE(r.out.find("\nPASS lost-response-keys.good  seed "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\nFAIL failing  seed 101"), std::string::npos) << r.out;
    EXPECT_TRUE(r.out.ends_with("1 of 3 scenario(s) passed\n" + s.closing())) << r.out;
}

TEST(run_output, failures_only_leaves_out_what_passed_and_names_a_client_that_could_not_start) {
    const mixed_suite s;
    const auto r = s.run("--failures-only");
    EXPECT_EQ(r.out.find("PASS"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("✔"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("✘ no_double_effects"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("  command: not started: cannot start \"/nonexistent/faultline-client\""), std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("exit status"), std::string::npos) << r.out;
    EXPECT_TRUE(r.out.ends_with(s.closing())) << r.out;
    // The two options are one choice.
    child both{{FAULTLINE_BINARY, "run", suite, "--summary", "--failures-only"}};
    EXPECT_EQ(both.finish().code, 2);
}

TEST(list_command, names_every_report_format_with_its_summary) {
    child proc{{FAULTLINE_BINARY, "list", "reports"}};
    const auto r = proc.finish();
    ASSERT_EQ(r.code, 0) << r.err;
    for (const char* format : {"html ", "journal ", "json ", "junit ", "markdown "}) {
        EXPECT_NE(r.out.find(std::string{"\n"} + format), std::string::npos) << format << " in\n" << r.out;
    }
    EXPECT_EQ(r.out.rfind("console ", 0), 0u) << r.out;
}

TEST(list_command, names_the_client_drivers) {
    child proc{{FAULTLINE_BINARY, "list", "drivers"}};
    const auto r = proc.finish();
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out.rfind("builtin ", 0), 0u) << r.out;
    EXPECT_NE(r.out.find("\ncommand "), std::string::npos) << r.out;
}

TEST(check_command, reports_bad_expectations_before_reading_the_journal) {
    const fs::path expect = temp_file("expect.toml");
    std::ofstream{expect} << "[[expect]]\ncheck = \"no_double_effects\"\nwiat = 1\n";
    child proc{{FAULTLINE_BINARY, "check", "/nonexistent/journal.jsonl", "--expect", expect.string()}};
    const auto r = proc.finish();
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find(expect.string() + ":3:"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("journal"), std::string::npos) << r.err;  // the journal was never opened
    fs::remove(expect);
}

TEST(check_command, writes_reports_like_run) {
    const fs::path dir = temp_file("check-reports");
    fs::remove_all(dir);
    child run{{FAULTLINE_BINARY, "run", suite, "--report-dir", dir.string()}};
    ASSERT_EQ(run.finish().code, 0);
    child check{{FAULTLINE_BINARY, "check", (dir / "lost-response-keys.good.journal.jsonl").string(), "--expect",
                 suite, "--report", "junit:" + (dir / "check.xml").string()}};
    const auto r = check.finish();
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(read_file(dir / "check.xml").find("failures=\"0\""), std::string::npos);
    fs::remove_all(dir);
}

// A writer killed mid-line leaves a torn last line: reported, the rest judged. A bad line with more
// after it is corruption: nothing is judged (exit 2).
TEST(check_command, judges_a_journal_with_a_torn_last_line_and_rejects_one_corrupt_in_the_middle) {
    const fs::path dir = temp_file("check-torn");
    fs::remove_all(dir);
    child run{{FAULTLINE_BINARY, "run", suite, "--report-dir", dir.string()}};
    ASSERT_EQ(run.finish().code, 0);
    const std::string journal = read_file(dir / "lost-response-keys.good.journal.jsonl");
    const std::string first_line = journal.substr(0, journal.find('\n') + 1);
    const std::string torn = first_line.substr(0, 40);
    std::ofstream{dir / "torn.jsonl", std::ios::binary} << journal << torn;
    std::ofstream{dir / "corrupt.jsonl", std::ios::binary} << torn << '\n' << journal;

    child torn_check{{FAULTLINE_BINARY, "check", (dir / "torn.jsonl").string(), "--expect", suite}};
    const auto judged = torn_check.finish();
    EXPECT_EQ(judged.code, 0) << judged.err;
    const auto lines = static_cast<std::size_t>(std::count(journal.begin(), journal.end(), '\n'));
    EXPECT_NE(judged.err.find(":" + std::to_string(lines + 1) +
                              ": journal ends in a torn line (40 bytes) — ignored; the rest is judged"),
              std::string::npos)
        << judged.err;

    child corrupt_check{{FAULTLINE_BINARY, "check", (dir / "corrupt.jsonl").string(), "--expect", suite}};
    const auto rejected = corrupt_check.finish();
    EXPECT_EQ(rejected.code, 2);
    EXPECT_NE(rejected.err.find("corrupt.jsonl:1: bad journal record: invalid JSON"), std::string::npos) << rejected.err;
    fs::remove_all(dir);
}

// A copied line would be judged as a second attempt (here: a second committed charge, a double
// effect the client never caused); the same journal named twice would double every attempt. Both are
// bad input, and nothing is judged.
TEST(check_command, refuses_a_journal_with_a_copied_line_and_a_journal_named_twice) {
    const fs::path dir = temp_file("check-copied");
    fs::remove_all(dir);
    child run{{FAULTLINE_BINARY, "run", suite, "--report-dir", dir.string()}};
    ASSERT_EQ(run.finish().code, 0);
    const fs::path good = dir / "lost-response-keys.good.journal.jsonl";
    const std::string journal = read_file(good);
    const std::string last_line = journal.substr(journal.rfind('\n', journal.size() - 2) + 1);
    std::ofstream{dir / "copied.jsonl", std::ios::binary} << journal << last_line;

    child copied_check{{FAULTLINE_BINARY, "check", (dir / "copied.jsonl").string(), "--expect", suite}};
    const auto copied = copied_check.finish();
    EXPECT_EQ(copied.code, 2);
    EXPECT_NE(copied.err.find("copied.jsonl: bad journal: seq "), std::string::npos) << copied.err;
    EXPECT_NE(copied.err.find(" appears 2 times"), std::string::npos) << copied.err;

    const fs::path same = dir / "." / good.filename();
    child twice_check{{FAULTLINE_BINARY, "check", good.string(), same.string(), "--expect", suite}};
    const auto twice = twice_check.finish();
    EXPECT_EQ(twice.code, 2);
    EXPECT_NE(twice.err.find("is named twice"), std::string::npos) << twice.err;
    fs::remove_all(dir);
}

}  // namespace
}  // namespace faultline::cli::testing
