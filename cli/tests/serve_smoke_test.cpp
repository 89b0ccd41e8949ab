// `faultline serve` as a real process: it prints its URL, serves, answers the control API, stops on
// SIGTERM with exit 0 and leaves the journal file behind; a bad rules file exits 2 with positions.
#include "child_process.hpp"
#include "test_client.hpp"

#include "faultline/record/journal_json.hpp"

#include <gtest/gtest.h>

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace faultline::harness::testing {
namespace {

TEST(serve_command, serves_until_sigterm_and_writes_the_journal) {
    const fs::path rules = temp_file("rules.toml");
    const fs::path journal = temp_file("journal.jsonl");
    std::ofstream{rules} << "[server]\nthreads = 2\n\n[[fault]]\nname = \"teapot\"\nkind = \"status\"\nstatus = 418\n"
                            "[fault.match]\npath = \"/tea\"\n";
    child proc{{FAULTLINE_BINARY, "serve", "--rules", rules.string(), "--seed", "99", "--journal", journal.string()}};
    ASSERT_TRUE(proc.started());

    const std::string line = proc.read_line(std::chrono::seconds{10});
    const std::string prefix = "faultline serving on http://127.0.0.1:";
    ASSERT_EQ(line.rfind(prefix, 0), 0U) << line;
    EXPECT_NE(line.find("(seed 99)"), std::string::npos) << line;
    const auto port = static_cast<std::uint16_t>(std::stoi(line.substr(prefix.size())));
    EXPECT_NE(proc.read_line(std::chrono::seconds{10}).find("/__faultline/"), std::string::npos);

    const auto health = exchange(port, make_request("GET", "/__faultline/health"));
    ASSERT_TRUE(health.parsed()) << health.bytes;
    EXPECT_EQ(health.parsed()->result_int(), 200);
    const auto tea = exchange(port, make_request("GET", "/tea"));
    ASSERT_TRUE(tea.parsed());
    EXPECT_EQ(tea.parsed()->result_int(), 418);

    proc.signal(SIGTERM);
    EXPECT_EQ(proc.wait(), 0) << proc.drain_stderr();

    const auto records = read_jsonl(journal.string());
    ASSERT_TRUE(records.ok());
    ASSERT_EQ(records.records.size(), 1U);  // control requests are not journaled
    EXPECT_EQ(records.records[0].status, 418);
    EXPECT_EQ(records.records[0].rule, "teapot");
    fs::remove(rules);
    fs::remove(journal);
}

TEST(serve_command, bad_rules_file_exits_2_with_every_error_positioned) {
    const fs::path rules = temp_file("bad.toml");
    std::ofstream{rules} << "[[fault]]\nkind = \"status\"\nstatus = 99\n\n[[fault]]\nkind = \"warp\"\n";
    child proc{{FAULTLINE_BINARY, "serve", "--rules", rules.string()}};
    ASSERT_TRUE(proc.started());
    EXPECT_EQ(proc.wait(), 2);
    const std::string err = proc.drain_stderr();
    EXPECT_NE(err.find(rules.string() + ":3:"), std::string::npos) << err;
    EXPECT_NE(err.find(rules.string() + ":6:"), std::string::npos) << err;
    fs::remove(rules);
}

TEST(serve_command, missing_rules_option_is_a_usage_error) {
    child proc{{FAULTLINE_BINARY, "serve"}};
    ASSERT_TRUE(proc.started());
    EXPECT_EQ(proc.wait(), 2);
}

}  // namespace
}  // namespace faultline::harness::testing
