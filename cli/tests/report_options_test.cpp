// `faultline run|check --report FORMAT:PATH` and `--report-dir` as a user types them: every registered
// format can be written, "{scenario}" makes one file per scenario, bad specs are usage errors (exit 2)
// caught before anything runs, and `check` reads the expectations before the journal.
#include "child_process.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace faultline::harness::testing {
namespace {

const std::string suite = std::string{FAULTLINE_SUITES_DIR} + "/lost-response-keys.good.toml";

std::string read(const fs::path& p) {
    std::ifstream in{p, std::ios::binary};
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

TEST(report_option, writes_the_same_files_as_report_dir) {
    const fs::path dir = temp_file("reports");
    fs::remove_all(dir);
    child proc{{FAULTLINE_BINARY, "run", suite, "--seed", "5", "--report-dir", (dir / "all").string(), "--report",
                "json:" + (dir / "one.json").string(), "--report", "junit:" + (dir / "deep/junit.xml").string(),
                "--report", "journal:" + (dir / "{scenario}.jsonl").string()}};
    const auto r = proc.finish();
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(read(dir / "one.json"), read(dir / "all/lost-response-keys.good.json"));
    EXPECT_EQ(read(dir / "lost-response-keys.good.jsonl"), read(dir / "all/lost-response-keys.good.journal.jsonl"));
    EXPECT_NE(read(dir / "deep/junit.xml").find("<testsuite name=\"lost-response-keys.good\""), std::string::npos);
    EXPECT_FALSE(read(dir / "one.json").empty());
    fs::remove_all(dir);
}

TEST(report_option, an_unknown_format_is_a_usage_error_naming_the_formats) {
    child proc{{FAULTLINE_BINARY, "run", suite, "--report", "yaml:out.yaml"}};
    const auto r = proc.finish();
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("unknown report format \"yaml\"; allowed: console, journal, json, junit, markdown"), std::string::npos)
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

TEST(list_command, names_every_report_format_with_its_summary) {
    child proc{{FAULTLINE_BINARY, "list", "reports"}};
    const auto r = proc.finish();
    ASSERT_EQ(r.code, 0) << r.err;
    for (const char* format : {"journal ", "json ", "junit ", "markdown "}) {
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
    EXPECT_NE(read(dir / "check.xml").find("failures=\"0\""), std::string::npos);
    fs::remove_all(dir);
}

}  // namespace
}  // namespace faultline::harness::testing
