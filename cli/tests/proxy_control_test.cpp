// `faultline proxy`'s runtime control API (the same /__faultline/ API and access rules as serve's, on
// a control port of its own) and its ready file, end to end: a real upstream (`faultline serve`),
// the proxy in front of it, a rule added mid-test, requests through it, the rule removed, and the
// round read back from the proxy's journal. Every wait is on a ready file or a reply.
#include "child_process.hpp"
#include "test_client.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <signal.h>

#include <string>
#include <vector>

namespace faultline::cli::testing {
namespace {

namespace json = boost::json;

TEST(proxy_control, a_rule_added_and_removed_at_runtime_changes_the_round_the_journal_shows) {
    const fs::path upstream_ready = temp_file("control_upstream_ready.json");
    const fs::path proxy_ready = temp_file("control_proxy_ready.json");
    fs::remove(upstream_ready);
    fs::remove(proxy_ready);
    child upstream{{FAULTLINE_BINARY, "serve", "--rules", "", "--no-control-token", "--ready-file",
                    upstream_ready.string()}};
    const std::string upstream_text = wait_for_file(upstream_ready);
    ASSERT_FALSE(upstream_text.empty());
    const auto upstream_port = json::parse(upstream_text).at("port").to_number<std::uint16_t>();

    child proxy{{FAULTLINE_BINARY, "proxy", "--upstream", "127.0.0.1:" + std::to_string(upstream_port), "--seed",
                 "3", "--instance", "edge", "--ready-file", proxy_ready.string()}};
    const std::string text = wait_for_file(proxy_ready);
    ASSERT_FALSE(text.empty());
    const json::object ready = json::parse(text).as_object();
    EXPECT_EQ(ready.at("pid").to_number<long>(), proxy.pid());
    EXPECT_EQ(ready.at("seed").to_number<std::uint64_t>(), 3U);
    const auto port = ready.at("port").to_number<std::uint16_t>();
    const auto control_port = ready.at("control_port").to_number<std::uint16_t>();
    const std::string token{ready.at("token").as_string()};
    EXPECT_EQ(ready.at("control_url").as_string(),
              "http://127.0.0.1:" + std::to_string(control_port) + "/__faultline/");
    EXPECT_EQ(json::serialize(ready.at("proxies")),
              R"([{"name":"edge","mode":"http","listen":"127.0.0.1:)" + std::to_string(port) +
                  R"(","url":"http://127.0.0.1:)" + std::to_string(port) + R"(","upstream":"127.0.0.1:)" +
                  std::to_string(upstream_port) + R"("}])");

    // Serve's access rules: no token, 401.
    EXPECT_EQ(server::testing::control_call(control_port, "GET", "health", "").status, 401);
    const int upstream_status = server::testing::status_of(port, "GET", "/kv/a");
    ASSERT_NE(upstream_status, 0);
    ASSERT_NE(upstream_status, 503);

    const auto added = server::testing::control_call(control_port, "POST", "rules", token,
                               R"({"name":"down","kind":"status","status":503,"match":{"path":"/kv/*"}})");
    EXPECT_EQ(added.status, 201) << added.body;
    EXPECT_EQ(server::testing::status_of(port, "GET", "/kv/b"), 503);
    EXPECT_EQ(server::testing::status_of(port, "GET", "/kv/c"), 503);
    EXPECT_EQ(server::testing::control_call(control_port, "DELETE", "rules/down", token).status, 200);
    EXPECT_EQ(server::testing::status_of(port, "GET", "/kv/d"), upstream_status);
    EXPECT_EQ(server::testing::control_call(control_port, "DELETE", "rules/down", token).status, 404);

    // The round: four attempts, the rule fired on the two between its add and removal, whose
    // requests the upstream never saw (phase before); the two control actions journaled.
    // The last attempt is journaled when its reply's write ends: wait for it, bounded.
    const auto journal = server::testing::control_until(control_port, "journal", token, [](const server::testing::control_reply& r) {
        return r.status == 200 && server::testing::parse_journal_lines(r.body).attempts.size() >= 4;
    });
    ASSERT_EQ(journal.status, 200);
    const server::testing::journal_lines lines = server::testing::parse_journal_lines(journal.body);
    std::vector<std::string> targets_fired;
    for (const json::object& line : lines.attempts) {
        EXPECT_EQ(line.at("instance").as_string(), "edge");
        if (line.at("rule").as_string() == "down") targets_fired.emplace_back(line.at("target").as_string());
        EXPECT_EQ(line.contains("upstream_status"), line.at("rule").as_string().empty());
    }
    const std::vector<std::string>& events = lines.events;
    const std::size_t attempts = lines.attempts.size();
    EXPECT_EQ(attempts, 4U);
    EXPECT_EQ(targets_fired, (std::vector<std::string>{"/kv/b", "/kv/c"}));
    EXPECT_EQ(events, (std::vector<std::string>{"started", "rule_added", "rule_removed"}));
    const auto stats = json::parse(server::testing::control_call(control_port, "GET", "stats", token).body).as_object();
    EXPECT_EQ(stats.at("server").at("attempts").to_number<int>(), 4);

    proxy.signal(SIGTERM);
    EXPECT_EQ(proxy.finish().code, 0);
    EXPECT_FALSE(fs::exists(proxy_ready));
    upstream.signal(SIGTERM);
    EXPECT_EQ(upstream.finish().code, 0);
}

}  // namespace
}  // namespace faultline::cli::testing
