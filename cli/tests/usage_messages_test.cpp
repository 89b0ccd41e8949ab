// What `faultline` says to someone finding their way: a bare `faultline` prints the help, a mistyped
// command is named with the one meant, `help [command]` works as `--help`, `list` alone shows every
// list, and the help points at suites and docs that exist. Each exits 0 or 2 (bad usage), never
// with CLI11's bare "A subcommand is required".
#include "child_process.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace faultline::cli::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(usage_messages, a_bare_faultline_prints_the_help_and_exits_2) {
    const auto r = run_faultline({});
    EXPECT_EQ(r.code, 2);
    EXPECT_THAT(r.out, HasSubstr("Subcommands:"));
    EXPECT_THAT(r.out, HasSubstr("serve"));
    EXPECT_THAT(r.out, HasSubstr("Exit codes"));
}

TEST(usage_messages, a_mistyped_command_names_the_one_meant) {
    const auto r = run_faultline({"runn", "suites"});
    EXPECT_EQ(r.code, 2);
    EXPECT_THAT(r.err, HasSubstr("'runn' is not a command. Did you mean `faultline run`?"));
    EXPECT_THAT(r.err, HasSubstr("Commands: serve, proxy, run,"));
    EXPECT_THAT(r.err, Not(HasSubstr("A subcommand is required")));
    EXPECT_THAT(run_faultline({"chek", "journal.jsonl"}).err, HasSubstr("Did you mean `faultline check`?"));
}

TEST(usage_messages, a_word_like_no_command_gets_no_guess) {
    const auto r = run_faultline({"deploy"});
    EXPECT_EQ(r.code, 2);
    EXPECT_THAT(r.err, HasSubstr("'deploy' is not a command."));
    EXPECT_THAT(r.err, Not(HasSubstr("Did you mean")));
}

TEST(usage_messages, help_with_a_command_is_that_commands_help) {
    const auto r = run_faultline({"help", "serve"});
    EXPECT_EQ(r.code, 0);
    EXPECT_THAT(r.out, HasSubstr("--rules"));
    EXPECT_THAT(r.out, HasSubstr("faultline serve --rules rules.toml"));
    EXPECT_EQ(run_faultline({"help", "nope"}).code, 2);
    EXPECT_THAT(run_faultline({"help"}).out, HasSubstr("Subcommands:"));
}

TEST(usage_messages, list_alone_shows_every_list_under_its_name) {
    const auto r = run_faultline({"list"});
    EXPECT_EQ(r.code, 0) << r.err;
    for (const char* heading : {"faults (faultline list faults):", "checks (faultline list checks):",
                                "drivers (faultline list drivers):", "reports (faultline list reports):",
                                "toxics (faultline list toxics):"}) {
        EXPECT_THAT(r.out, HasSubstr(heading));
    }
    EXPECT_THAT(r.out, HasSubstr("  lost_response   commit the effect"));
    EXPECT_THAT(run_faultline({"list", "faults"}).out, Not(HasSubstr("checks (")));
    EXPECT_EQ(run_faultline({"list", "flauts"}).code, 2);
}

// An uninstalled binary points at the source tree's suites and docs; both exist.
TEST(usage_messages, the_help_points_at_suites_and_docs_that_exist) {
    const auto r = run_faultline({"--help"});
    EXPECT_EQ(r.code, 0);
    const std::string suites{FAULTLINE_SUITES_DIR};
    EXPECT_THAT(r.out, HasSubstr("Start with `faultline run " + suites + "`"));
    const std::string docs = (std::filesystem::path{suites}.parent_path() / "docs").string();
    EXPECT_THAT(r.out, HasSubstr("Docs in " + docs + ": scenarios.md"));
    EXPECT_TRUE(std::filesystem::exists(docs + "/scenarios.md"));
}

}  // namespace
}  // namespace faultline::cli::testing
