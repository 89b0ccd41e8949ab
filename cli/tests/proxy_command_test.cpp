// `faultline proxy` as a process: its exit codes for an unreachable upstream and bad rules, and a
// run in front of a real upstream (the built-in server in this process) whose journal, with a second
// proxy's, `faultline check` judges as one history; and `faultline run` with a scenario's [proxy].
#include "child_process.hpp"
#include "journal_wire.hpp"
#include "server_fixture.hpp"
#include "test_client.hpp"

#include "faultline/record/journal_json.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <gtest/gtest.h>

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace faultline::cli::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

std::uint16_t closed_port() {
    boost::asio::io_context io;
    boost::asio::ip::tcp::acceptor acceptor{io, {boost::asio::ip::make_address("127.0.0.1"), 0}};
    const auto port = acceptor.local_endpoint().port();
    acceptor.close();
    return port;
}

// "faultline proxy on http://127.0.0.1:PORT -> …": the port.
std::uint16_t proxy_port(child& proc) {
    const std::string line = proc.read_line(5s);
    const auto colon = line.find(':', line.find("127.0.0.1"));
    if (colon == std::string::npos) return 0;
    return static_cast<std::uint16_t>(std::stoi(line.substr(colon + 1)));
}

TEST(proxy_command, an_unreachable_upstream_is_exit_3) {
    const std::string upstream = "127.0.0.1:" + std::to_string(closed_port());
    child proc{{FAULTLINE_BINARY, "proxy", "--upstream", upstream}};
    const auto result = proc.finish();
    EXPECT_EQ(result.code, 3);
    EXPECT_NE(result.err.find("not reachable"), std::string::npos) << result.err;
}

TEST(proxy_command, bad_rules_and_bad_addresses_are_exit_2) {
    server::testing::test_server upstream{""};
    const fs::path rules = temp_file("proxy-bad-rules.toml");
    std::ofstream{rules} << "[[fault]]\nname = \"x\"\nkind = \"no-such-kind\"\n";
    const std::string up = "127.0.0.1:" + std::to_string(upstream.port());
    child bad_rules{{FAULTLINE_BINARY, "proxy", "--upstream", up, "--rules", rules.string()}};
    const auto r1 = bad_rules.finish();
    EXPECT_EQ(r1.code, 2);
    EXPECT_NE(r1.err.find("proxy-bad-rules.toml:"), std::string::npos) << r1.err;
    child bad_address{{FAULTLINE_BINARY, "proxy", "--upstream", "localhost"}};
    EXPECT_EQ(bad_address.finish().code, 2);
    fs::remove(rules);
}

TEST(proxy_command, two_tiers_journal_one_history_that_check_merges) {
    server::testing::test_server service{""};
    const fs::path rules_b = temp_file("tier-b.toml");
    const fs::path rules_a = temp_file("tier-a.toml");
    const fs::path journal_a = temp_file("tier-a.jsonl");
    const fs::path journal_b = temp_file("tier-b.jsonl");
    const fs::path expect = temp_file("proxy-expect.toml");
    // B (in front of the service) loses the first attempt's reply after commit; A declares no commits.
    std::ofstream{rules_b} << "[[fault]]\nname = \"lost\"\nkind = \"lost_response\"\n[fault.when]\nattempts = [1]\n";
    std::ofstream{rules_a} << "[server]\nservice = \"empty\"\n";
    std::ofstream{expect} << "[[expect]]\ncheck = \"no_double_effects\"\n";

    child tier_b{{FAULTLINE_BINARY, "proxy", "--upstream", "127.0.0.1:" + std::to_string(service.port()), "--rules",
                  rules_b.string(), "--journal", journal_b.string(), "--instance", "tier-b"}};
    const auto port_b = proxy_port(tier_b);
    ASSERT_NE(port_b, 0);
    child tier_a{{FAULTLINE_BINARY, "proxy", "--upstream", "127.0.0.1:" + std::to_string(port_b), "--rules",
                  rules_a.string(), "--journal", journal_a.string(), "--instance", "tier-a"}};
    const auto port_a = proxy_port(tier_a);
    ASSERT_NE(port_a, 0);

    const server::testing::header_pairs key{{"Idempotency-Key", "k1"}};
    const auto first = server::testing::exchange(port_a, server::testing::make_request("POST", "/payments", R"({"amount":5})", key));
    ASSERT_TRUE(first.parsed());
    EXPECT_EQ(first.parsed()->result_int(), 502);  // B reset A's upstream connection
    const auto second = server::testing::exchange(port_a, server::testing::make_request("POST", "/payments", R"({"amount":5})", key));
    ASSERT_TRUE(second.parsed());
    EXPECT_EQ(second.parsed()->result_int(), 201);
    EXPECT_EQ(service.context().model.charge_count(), 2U);  // the service has no idempotency keys

    tier_a.signal(SIGTERM);
    EXPECT_EQ(tier_a.wait(), 0);
    tier_b.signal(SIGTERM);
    EXPECT_EQ(tier_b.wait(), 0);

    const auto read_a = record::read_jsonl(journal_a.string());
    ASSERT_TRUE(read_a.ok());
    ASSERT_EQ(read_a.records.size(), 2U);
    EXPECT_EQ(testing::wire_details_of(journal_a.string()).at(0).upstream_error, "reset");
    EXPECT_EQ(read_a.records[0].instance, "tier-a");
    ASSERT_FALSE(read_a.server_events.empty());
    EXPECT_EQ(read_a.server_events[0].kind, record::server_event_kind::started);

    child check{{FAULTLINE_BINARY, "check", journal_a.string(), journal_b.string(), "--expect", expect.string()}};
    const auto judged = check.finish();
    EXPECT_EQ(judged.code, 1) << judged.out << judged.err;  // two commits of k1, both at tier B
    EXPECT_NE(judged.out.find("2 committed effects"), std::string::npos) << judged.out;
    for (const auto& p : {rules_a, rules_b, journal_a, journal_b, expect}) fs::remove(p);
}

// `[proxy]` in a scenario, through `faultline run`: the exit codes of a failed check (a double charge
// at the real upstream), an unreachable upstream and a conflicting [server] key.
TEST(proxy_command, run_with_a_proxy_table_exits_1_for_a_double_charge_3_unreachable_2_conflicting) {
    server::testing::test_server service{""};
    const fs::path scenario = temp_file("proxied-run.toml");
    const auto write_scenario = [&](std::uint16_t port, std::string_view server_table) {
        std::ofstream{scenario} << "name = \"proxied\"\ntime_limit = \"10s\"\n" << server_table
                                << "[proxy]\nupstream = \"127.0.0.1:" << port << "\"\n"
                                << "[[fault]]\nkind = \"lost_response\"\nthen = \"reset\"\n[fault.match]\n"
                                   "method = \"POST\"\n[fault.when]\nattempts = [1]\n"
                                   "[client]\npreset = \"no_keys\"\nclients = 1\noperations = 2\n"
                                   "[client.policy.backoff]\nbase = \"1ms\"\ncap = \"2ms\"\n"
                                   "[[expect]]\ncheck = \"no_double_effects\"\n";
    };
    write_scenario(service.port(), "");
    child failed{{FAULTLINE_BINARY, "run", scenario.string()}};
    const auto r1 = failed.finish();
    EXPECT_EQ(r1.code, 1) << r1.out << r1.err;
    EXPECT_NE(r1.out.find("2 operations with more than one"), std::string::npos) << r1.out;
    EXPECT_EQ(service.context().model.charge_count(), 4U);  // each operation charged twice upstream

    write_scenario(closed_port(), "");
    child unreachable{{FAULTLINE_BINARY, "run", scenario.string()}};
    const auto r2 = unreachable.finish();
    EXPECT_EQ(r2.code, 3) << r2.out << r2.err;
    EXPECT_NE((r2.out + r2.err).find("is not reachable"), std::string::npos) << r2.out << r2.err;

    write_scenario(service.port(), "[server]\nidempotency = \"keys\"\n");
    child conflicting{{FAULTLINE_BINARY, "run", scenario.string()}};
    const auto r3 = conflicting.finish();
    EXPECT_EQ(r3.code, 2) << r3.out << r3.err;
    EXPECT_NE(r3.err.find(scenario.string() + ":4:15: [server]: idempotency: the upstream behind [proxy]"),
              std::string::npos)
        << r3.err;
    fs::remove(scenario);
}

}  // namespace
}  // namespace faultline::cli::testing
