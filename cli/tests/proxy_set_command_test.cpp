// `faultline proxy` as one process running many named proxies: started with no proxy at all (its
// control API only), proxies of both modes created through that API in front of a real upstream (the
// built-in server in this process), a rule added to one mid-test, seen acting and removed, and the
// round's journal read back; --config's [[proxy]] tables; and the exit codes of a bad config, a
// listen address beyond loopback and a flag of the flags' proxy without --upstream. Every wait is on a
// ready file, a reply or a bounded condition.
#include "child_process.hpp"
#include "server_fixture.hpp"
#include "test_client.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace faultline::cli::testing {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

// The port of "127.0.0.1:P".
std::uint16_t port_of(const json::value& listen) {
    const std::string text{listen.as_string()};
    return static_cast<std::uint16_t>(std::stoi(text.substr(text.rfind(':') + 1)));
}

TEST(proxy_set_command, proxies_created_at_runtime_take_rules_and_toxics_and_journal_their_round) {
    server::testing::test_server upstream{""};
    const std::string up = "127.0.0.1:" + std::to_string(upstream.port());
    const fs::path ready_path = temp_file("proxy_set_ready.json");
    fs::remove(ready_path);
    child proxy{{FAULTLINE_BINARY, "proxy", "--seed", "4", "--ready-file", ready_path.string()}};
    const std::string text = wait_for_file(ready_path);
    ASSERT_FALSE(text.empty());
    const json::object ready = json::parse(text).as_object();
    EXPECT_EQ(json::serialize(ready.at("proxies")), "[]");
    EXPECT_EQ(ready.at("url").as_string(), "");
    const auto control = ready.at("control_port").to_number<std::uint16_t>();
    const std::string token{ready.at("token").as_string()};
    EXPECT_EQ(server::testing::control_call(control, "GET", "proxies").status, 401);  // serve's access rules

    const server::testing::control_reply api = server::testing::control_call(control, "POST", "proxies", token, R"({"name":"api","upstream":")" + up + R"("})");
    ASSERT_EQ(api.status, 201) << api.body;
    const server::testing::control_reply raw =
        server::testing::control_call(control, "POST", "proxies", token, R"({"name":"raw","mode":"tcp","upstream":")" + up + R"("})");
    ASSERT_EQ(raw.status, 201) << raw.body;
    const std::uint16_t api_port = port_of(json::parse(api.body).at("listen"));
    const std::uint16_t raw_port = port_of(json::parse(raw.body).at("listen"));
    EXPECT_EQ(json::parse(raw.body).at("url").as_string(), "tcp://127.0.0.1:" + std::to_string(raw_port));
    const int healthy = server::testing::status_of(upstream.port(), "GET", "/kv/x");
    ASSERT_NE(healthy, 0);
    ASSERT_NE(healthy, 503);

    EXPECT_EQ(server::testing::status_of(api_port, "GET", "/kv/1"), healthy);
    EXPECT_EQ(server::testing::control_call(control, "POST", "proxies/api/rules", token, R"({"name":"down","kind":"status","status":503})")
                  .status,
              201);
    EXPECT_EQ(server::testing::status_of(api_port, "GET", "/kv/2"), 503);
    EXPECT_EQ(server::testing::status_of(raw_port, "GET", "/kv/3"), healthy);  // the other proxy has no rule
    EXPECT_EQ(server::testing::control_call(control, "DELETE", "proxies/api/rules/down", token).status, 200);
    EXPECT_EQ(server::testing::status_of(api_port, "GET", "/kv/4"), healthy);

    // The tcp proxy takes a toxic at runtime: the next connection is reset on accept.
    EXPECT_EQ(server::testing::control_call(control, "POST", "proxies/raw/toxics", token, R"({"name":"cut","kind":"refused"})").status, 201);
    EXPECT_TRUE(server::testing::exchange(raw_port, server::testing::make_request("GET", "/kv/5")).was_reset());
    EXPECT_EQ(server::testing::control_call(control, "DELETE", "proxies/raw/toxics/cut", token).status, 200);
    EXPECT_EQ(server::testing::status_of(raw_port, "GET", "/kv/6"), healthy);

    const server::testing::control_reply journal = server::testing::control_until(control, "proxies/api/journal", token, [](const server::testing::control_reply& r) {
        return r.status == 200 && server::testing::parse_journal_lines(r.body).attempts.size() >= 3;
    });
    const server::testing::journal_lines lines = server::testing::parse_journal_lines(journal.body);
    std::vector<std::string> fired;
    for (const json::object& attempt : lines.attempts) {
        fired.push_back(std::string{attempt.at("target").as_string()} + ":" + std::string{attempt.at("rule").as_string()});
    }
    EXPECT_EQ(fired, (std::vector<std::string>{"/kv/1:", "/kv/2:down", "/kv/4:"}));
    EXPECT_EQ(lines.events, (std::vector<std::string>{"started", "rule_added", "rule_removed"}));

    EXPECT_EQ(server::testing::control_call(control, "DELETE", "proxies/raw", token).status, 200);
    const json::value listed = json::parse(server::testing::control_call(control, "GET", "proxies", token).body);
    ASSERT_EQ(listed.at("proxies").as_array().size(), 1U);
    EXPECT_EQ(listed.at("proxies").at(0).at("name").as_string(), "api");
    EXPECT_EQ(server::testing::control_call(control, "POST", "proxies", token, R"({"name":"far","upstream":")" + up +
                                                                   R"(","listen":"0.0.0.0:0"})")
                  .status,
              400);

    proxy.signal(SIGTERM);
    const auto result = proxy.finish();
    EXPECT_EQ(result.code, 0) << result.err;
}

// A proxy created at runtime watches its own lateness as `--upstream`'s does: the whole process
// stopped for 300 ms (SIGSTOP, then SIGCONT) is a server_late spell in that proxy's journal, so the
// timing checks do not take the stall for the client's doing.
TEST(proxy_set_command, a_proxy_created_at_runtime_journals_the_spell_its_process_could_not_run) {
    server::testing::test_server upstream{""};
    const fs::path ready_path = temp_file("proxy_set_late_ready.json");
    fs::remove(ready_path);
    child proxy{{FAULTLINE_BINARY, "proxy", "--ready-file", ready_path.string()}};
    const std::string text = wait_for_file(ready_path);
    ASSERT_FALSE(text.empty());
    const json::object ready = json::parse(text).as_object();
    const auto control = ready.at("control_port").to_number<std::uint16_t>();
    const std::string token{ready.at("token").as_string()};
    const std::string body = R"({"name":"api","upstream":"127.0.0.1:)" + std::to_string(upstream.port()) + R"("})";
    ASSERT_EQ(server::testing::control_call(control, "POST", "proxies", token, body).status, 201);

    proxy.signal(SIGSTOP);
    std::this_thread::sleep_for(300ms);  // the stall under test, not a wait for something
    proxy.signal(SIGCONT);
    // The spell is journaled when the watch's timer fires on time again.
    const server::testing::control_reply journal =
        server::testing::control_until(control, "proxies/api/journal", token, [](const server::testing::control_reply& r) {
            return r.status == 200 && r.body.find(R"("event":"server_late")") != std::string::npos;
        });
    bool spell_covers_the_stop = false;
    std::istringstream lines{journal.body};
    for (std::string line; std::getline(lines, line);) {
        if (line.empty()) continue;
        const json::object o = json::parse(line).as_object();
        if (o.contains("event") && o.at("event").as_string() == "server_late") {
            spell_covers_the_stop = spell_covers_the_stop || o.at("late_ns").to_number<std::int64_t>() >= 250'000'000;
        }
    }
    EXPECT_TRUE(spell_covers_the_stop) << journal.body;

    proxy.signal(SIGTERM);
    const auto result = proxy.finish();
    EXPECT_EQ(result.code, 0) << result.err;
}

TEST(proxy_set_command, a_config_files_proxies_are_listed_in_the_ready_file_and_keep_their_rules) {
    server::testing::test_server upstream{""};
    const std::string up = "127.0.0.1:" + std::to_string(upstream.port());
    const fs::path config = temp_file("proxy_set_config.toml");
    const fs::path ready_path = temp_file("proxy_set_config_ready.json");
    const fs::path journal = temp_file("proxy_set_teapot.jsonl");
    fs::remove(ready_path);
    std::ofstream{config} << "[[proxy]]\nname = \"teapot\"\nupstream = \"" << up << "\"\njournal = \""
                          << journal.string() << "\"\n[[proxy.fault]]\nname = \"brew\"\nkind = \"status\"\nstatus = 418\n"
                             "[[proxy]]\nname = \"bytes\"\nmode = \"tcp\"\nupstream = \""
                          << up << "\"\n";
    child proxy{{FAULTLINE_BINARY, "proxy", "--config", config.string(), "--no-control-token", "--ready-file",
                 ready_path.string()}};
    const std::string text = wait_for_file(ready_path);
    ASSERT_FALSE(text.empty());
    const json::array proxies = json::parse(text).at("proxies").as_array();
    ASSERT_EQ(proxies.size(), 2U);
    EXPECT_EQ(proxies.at(0).at("name").as_string(), "teapot");
    EXPECT_EQ(proxies.at(1).at("mode").as_string(), "tcp");
    EXPECT_EQ(json::parse(text).at("url"), proxies.at(0).at("url"));
    EXPECT_EQ(server::testing::status_of(port_of(proxies.at(0).at("listen")), "GET", "/kv/a"), 418);
    EXPECT_NE(server::testing::status_of(port_of(proxies.at(1).at("listen")), "GET", "/kv/a"), 418);
    proxy.signal(SIGTERM);
    EXPECT_EQ(proxy.finish().code, 0);
    // The teapot's own journal file, flushed at the stop: its one attempt, fired by its rule.
    std::ifstream in{journal};
    const std::string written{std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
    const server::testing::journal_lines lines = server::testing::parse_journal_lines(written);
    ASSERT_EQ(lines.attempts.size(), 1U) << written;
    EXPECT_EQ(lines.attempts.front().at("rule").as_string(), "brew");
    EXPECT_EQ(lines.attempts.front().at("instance").as_string(), "teapot");
    fs::remove(config);
    fs::remove(journal);
}

TEST(proxy_set_command, a_bad_config_a_listen_beyond_loopback_and_a_proxy_flag_without_upstream_are_exit_2) {
    server::testing::test_server upstream{""};
    const std::string up = "127.0.0.1:" + std::to_string(upstream.port());
    const fs::path config = temp_file("proxy_set_bad.toml");
    std::ofstream{config} << "[[proxy]]\nname = \"x\"\nupstream = \"" << up << "\"\ncolour = \"red\"\n";
    child bad_config{{FAULTLINE_BINARY, "proxy", "--config", config.string()}};
    const auto r1 = bad_config.finish();
    EXPECT_EQ(r1.code, 2);
    EXPECT_NE(r1.err.find(config.string() + ":4:1:"), std::string::npos) << r1.err;
    EXPECT_NE(r1.err.find("colour"), std::string::npos) << r1.err;

    std::ofstream{config} << "[[proxy]]\nname = \"x\"\nupstream = \"" << up << "\"\nlisten = \"0.0.0.0:0\"\n";
    child far_config{{FAULTLINE_BINARY, "proxy", "--config", config.string()}};
    const auto r2 = far_config.finish();
    EXPECT_EQ(r2.code, 2);
    EXPECT_NE(r2.err.find("--allow-non-loopback"), std::string::npos) << r2.err;

    child far_flag{{FAULTLINE_BINARY, "proxy", "--upstream", up, "--listen", "0.0.0.0:0"}};
    const auto r3 = far_flag.finish();
    EXPECT_EQ(r3.code, 2);
    EXPECT_NE(r3.err.find("--allow-non-loopback"), std::string::npos) << r3.err;

    child no_upstream{{FAULTLINE_BINARY, "proxy", "--listen", "127.0.0.1:0"}};
    const auto r4 = no_upstream.finish();
    EXPECT_EQ(r4.code, 2);
    EXPECT_NE(r4.err.find("--listen describes the proxy the flags make: it needs --upstream"), std::string::npos)
        << r4.err;
    fs::remove(config);
}

}  // namespace
}  // namespace faultline::cli::testing
