#include "faultline/reports/writer.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "faultline/record/journal_json.hpp"
#include "faultline/reports/console.hpp"
#include "faultline/reports/json.hpp"
#include "faultline/reports/junit.hpp"

namespace faultline::reports {
namespace {

record::run_record sample_run(std::string name) {
    record::run_record run;
    run.scenario = std::move(name);
    record::journal_record r;
    r.seq = 1;
    r.method = "POST";
    r.target = "/payments";
    run.journal.push_back(r);
    return run;
}

TEST(report_registry, holds_every_format_the_cli_offers) {
    EXPECT_EQ(report_registry::instance().names(),
              (std::vector<std::string>{"console", "html", "journal", "json", "junit", "markdown"}));
}

TEST(report_registry, writers_render_what_their_functions_render) {
    const std::vector runs{sample_run("a"), sample_run("b")};
    const auto& registry = report_registry::instance();
    EXPECT_EQ(registry.find("json")->render(runs), json_report(runs));
    EXPECT_EQ(registry.find("junit")->render(runs), junit_report(runs));
    EXPECT_EQ(registry.find("console")->render(runs), console_report(runs[0]) + console_report(runs[1]));
    EXPECT_EQ(registry.find("journal")->render(std::span{runs}.first(1)),
              record::to_jsonl(runs[0].journal, runs[0].wire, runs[0].server_events));
}

TEST(report_registry, report_dir_files_are_the_documented_layout) {
    const auto& registry = report_registry::instance();
    EXPECT_EQ(registry.find("json")->report_dir_file, "{scenario}.json");
    EXPECT_EQ(registry.find("journal")->report_dir_file, "{scenario}.journal.jsonl");
    EXPECT_TRUE(registry.find("journal")->one_run_per_file);
    EXPECT_EQ(registry.find("junit")->report_dir_file, "junit.xml");
    EXPECT_EQ(registry.find("console")->report_dir_file, "");
    EXPECT_EQ(registry.find("html")->report_dir_file, "report.html");
}

TEST(expand_path, replaces_every_placeholder_with_a_file_safe_name) {
    EXPECT_EQ(file_stem("lost response/keys:1"), "lost_response_keys_1");
    EXPECT_EQ(expand_path("out/{scenario}.json", "a b"), "out/a_b.json");
    EXPECT_EQ(expand_path("{scenario}/{scenario}.txt", "x"), "x/x.txt");
    EXPECT_EQ(expand_path("report.xml", "x"), "report.xml");
}

}  // namespace
}  // namespace faultline::reports
