#include "faultline/runner/scenario.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

namespace faultline::runner {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::SizeIs;

std::string error_text(const scenario_result& r) {
    std::string out;
    for (const auto& e : r.errors) out += e.to_string() + "\n";
    return out;
}

TEST(scenario_loader, reads_every_top_level_key) {
    const scenario_result r = parse_scenario(R"(name = "lost-response"
description = "a reply is lost after the commit"
seed = 42
time_limit = "5s"

[server]
idempotency = "keys"

[[fault]]
kind = "lost_response"
[fault.match]
method = "POST"

[[fault]]
name = "slow"
kind = "delay"
wait = "10ms"

[client]

[[expect]]
check = "no_double_effects"

[[expect]]
check = "max_attempts"
max = 4
expect_failure = true
)",
                                             "suites/lost.toml");
    ASSERT_TRUE(r.ok()) << error_text(r);
    const scenario& s = *r.value;
    EXPECT_EQ(s.name, "lost-response");
    EXPECT_EQ(s.description, "a reply is lost after the commit");
    EXPECT_EQ(s.file, "suites/lost.toml");
    EXPECT_EQ(s.seed, 42U);
    EXPECT_EQ(s.time_limit, 5s);
    EXPECT_EQ(s.server.idempotency.mode, server::idempotency_mode::keys);
    ASSERT_THAT(s.faults, SizeIs(2));
    EXPECT_EQ(s.faults[0].kind, "lost_response");
    EXPECT_EQ(s.faults[1].name, "slow");
    ASSERT_NE(s.client, nullptr);
    EXPECT_EQ(s.client->name(), "builtin");
    ASSERT_THAT(s.expectations, SizeIs(2));
    EXPECT_EQ(s.expectations[0].check_name, "no_double_effects");
    EXPECT_FALSE(s.expectations[0].expect_failure);
    EXPECT_EQ(s.expectations[1].check_name, "max_attempts");
    EXPECT_TRUE(s.expectations[1].expect_failure);
}

TEST(scenario_loader, defaults_name_seed_time_limit_and_client) {
    const scenario_result r = parse_scenario("[[expect]]\ncheck = \"success_rate\"\n", "suites/dir/retry-after.toml");
    ASSERT_TRUE(r.ok()) << error_text(r);
    EXPECT_EQ(r.value->name, "retry-after");
    EXPECT_EQ(r.value->seed, default_seed);
    EXPECT_EQ(r.value->time_limit, default_time_limit);
    EXPECT_TRUE(r.value->faults.empty());
    ASSERT_NE(r.value->client, nullptr);
    EXPECT_EQ(r.value->client->name(), "builtin");
}

TEST(scenario_loader, command_line_command_replaces_the_client) {
    scenario_options options;
    options.client.command = {"true"};
    const scenario_result r = parse_scenario("[[expect]]\ncheck = \"success_rate\"\n", "s.toml", options);
    ASSERT_TRUE(r.ok()) << error_text(r);
    EXPECT_EQ(r.value->client->name(), "command");
}

TEST(scenario_loader, unknown_top_level_key_lists_the_allowed_keys) {
    const scenario_result r = parse_scenario("name = \"x\"\nnmae = \"y\"\n[[expect]]\ncheck = \"success_rate\"\n", "s.toml");
    ASSERT_FALSE(r.ok());
    EXPECT_FALSE(r.value.has_value());
    ASSERT_THAT(r.errors, SizeIs(1));
    EXPECT_EQ(r.errors[0].to_string(),
              "s.toml:2:1: unknown key \"nmae\"; allowed: client, description, expect, fault, name, probe, proxy, relay, "
              "seed, server, strict, time_limit");
}

TEST(scenario_loader, wrong_types_are_positioned) {
    const scenario_result r = parse_scenario(
        "name = 3\nseed = \"seven\"\nserver = 1\n[[expect]]\ncheck = \"success_rate\"\n", "s.toml");
    ASSERT_THAT(r.errors, SizeIs(3));
    EXPECT_EQ(r.errors[0].to_string(), "s.toml:1:8: name: expected a string, got an integer");
    EXPECT_THAT(r.errors[1].to_string(), HasSubstr("s.toml:2:8: seed: expected an integer"));
    EXPECT_THAT(r.errors[1].to_string(), HasSubstr("got a string"));
    EXPECT_EQ(r.errors[2].to_string(), "s.toml:3:10: server: expected a table, got an integer");
}

TEST(scenario_loader, server_tls_is_a_boolean_beside_the_service_keys) {
    const std::string expect = "[[expect]]\ncheck = \"success_rate\"\n";
    const scenario_result on = parse_scenario("[server]\ntls = true\nidempotency = \"keys\"\n" + expect, "s.toml");
    ASSERT_TRUE(on.ok()) << error_text(on);
    EXPECT_TRUE(on.value->tls);
    EXPECT_FALSE(parse_scenario("[server]\nidempotency = \"keys\"\n" + expect, "s.toml").value->tls);
    const scenario_result bad = parse_scenario("[server]\ntls = \"yes\"\n" + expect, "s.toml");
    ASSERT_THAT(bad.errors, SizeIs(1));
    EXPECT_EQ(bad.errors[0].to_string(), "s.toml:2:7: [server]: tls: expected true or false, got a string");
}

TEST(scenario_loader, server_max_fault_wait_bounds_the_rules_at_their_keys) {
    const std::string rules = "[[fault]]\nkind = \"delay\"\nwait = \"90m\"\n[[expect]]\ncheck = \"success_rate\"\n";
    EXPECT_TRUE(parse_scenario("[server]\nmax_fault_wait = \"2h\"\n" + rules, "s.toml").ok());
    const scenario_result low = parse_scenario("[server]\nmax_fault_wait = \"1m\"\n" + rules, "s.toml");
    ASSERT_THAT(low.errors, SizeIs(1));
    EXPECT_EQ(low.errors[0].to_string(),
              "s.toml:5:8: fault kind \"delay\": wait: must be at most [server] max_fault_wait = 1m, got 90m");
}

TEST(scenario_loader, negative_seed_is_an_error) {
    const scenario_result r = parse_scenario("seed = -1\n[[expect]]\ncheck = \"success_rate\"\n", "s.toml");
    ASSERT_THAT(r.errors, SizeIs(1));
    EXPECT_EQ(r.errors[0].to_string(), "s.toml:1:8: seed: must be at least 0, got -1");
}

TEST(scenario_loader, bad_durations_name_the_key) {
    const scenario_result unitless = parse_scenario("time_limit = \"30\"\n[[expect]]\ncheck = \"success_rate\"\n", "s.toml");
    ASSERT_THAT(unitless.errors, SizeIs(1));
    EXPECT_THAT(unitless.errors[0].to_string(), HasSubstr("s.toml:1:14: time_limit: bad duration \"30\": "));

    const scenario_result zero = parse_scenario("time_limit = \"0s\"\n[[expect]]\ncheck = \"success_rate\"\n", "s.toml");
    ASSERT_THAT(zero.errors, SizeIs(1));
    EXPECT_EQ(zero.errors[0].to_string(), "s.toml:1:14: time_limit: must be longer than 0, got \"0s\"");

    const scenario_result in_fault =
        parse_scenario("[[fault]]\nkind = \"delay\"\nwait = \"ten\"\n[[expect]]\ncheck = \"success_rate\"\n", "s.toml");
    ASSERT_THAT(in_fault.errors, SizeIs(1));
    EXPECT_THAT(in_fault.errors[0].to_string(), HasSubstr("s.toml:3:8:"));
    EXPECT_THAT(in_fault.errors[0].to_string(), HasSubstr("wait"));
}

TEST(scenario_loader, unknown_fault_kind_lists_the_kinds) {
    const scenario_result r =
        parse_scenario("[[fault]]\nkind = \"explode\"\n[[expect]]\ncheck = \"success_rate\"\n", "s.toml");
    ASSERT_THAT(r.errors, SizeIs(1));
    const std::string text = r.errors[0].to_string();
    EXPECT_THAT(text, HasSubstr("s.toml:2:"));
    EXPECT_THAT(text, HasSubstr("explode"));
    EXPECT_THAT(text, HasSubstr("lost_response"));
    EXPECT_THAT(text, HasSubstr("status"));
}

TEST(scenario_loader, unknown_check_lists_the_checks) {
    const scenario_result r = parse_scenario("[[expect]]\ncheck = \"no_doubles\"\n", "s.toml");
    ASSERT_THAT(r.errors, SizeIs(1));
    const std::string text = r.errors[0].to_string();
    EXPECT_THAT(text, HasSubstr("s.toml:2:9: [[expect]]: check: unknown value \"no_doubles\"; allowed: "));
    EXPECT_THAT(text, HasSubstr("no_double_effects"));
    EXPECT_THAT(text, HasSubstr("retry_budget"));
}

TEST(scenario_loader, unknown_key_in_server_and_check_tables) {
    const scenario_result r = parse_scenario(
        "[server]\nidempotence = \"keys\"\n[[expect]]\ncheck = \"max_attempts\"\nmaximum = 3\n", "s.toml");
    ASSERT_THAT(r.errors, SizeIs(2));
    EXPECT_THAT(r.errors[0].to_string(), HasSubstr("s.toml:2:"));
    EXPECT_THAT(r.errors[0].to_string(), HasSubstr("idempotence"));
    EXPECT_THAT(r.errors[0].to_string(), HasSubstr("idempotency"));
    EXPECT_THAT(r.errors[1].to_string(), HasSubstr("s.toml:5:"));
    EXPECT_THAT(r.errors[1].to_string(), HasSubstr("maximum"));
    EXPECT_THAT(r.errors[1].to_string(), HasSubstr("max"));
}

TEST(scenario_loader, collects_every_error_in_file_order) {
    const scenario_result r = parse_scenario(R"(seed = "x"
bogus = 1
[[fault]]
kind = "explode"
[[expect]]
check = "nope"
)",
                                             "s.toml");
    ASSERT_THAT(r.errors, SizeIs(4)) << error_text(r);
    EXPECT_EQ(r.errors[0].where.line, 1U);
    EXPECT_EQ(r.errors[1].where.line, 2U);
    EXPECT_EQ(r.errors[2].where.line, 4U);
    EXPECT_EQ(r.errors[3].where.line, 6U);
}

TEST(scenario_loader, a_scenario_needs_an_expectation) {
    const scenario_result r = parse_scenario("name = \"x\"\n", "s.toml");
    ASSERT_THAT(r.errors, SizeIs(1));
    EXPECT_THAT(r.errors[0].to_string(), HasSubstr("s.toml:1:1: a scenario needs at least one [[expect]] table"));
    EXPECT_THAT(r.errors[0].to_string(), HasSubstr("success_rate"));

    const scenario_result wrong = parse_scenario("expect = 3\n", "s.toml");
    ASSERT_THAT(wrong.errors, SizeIs(1));
    EXPECT_EQ(wrong.errors[0].to_string(), "s.toml:1:10: expect: expected an array of tables, got an integer");
}

TEST(scenario_loader, syntax_errors_are_positioned) {
    const scenario_result r = parse_scenario("name = \"x\"\nseed = = 3\n", "s.toml");
    ASSERT_THAT(r.errors, SizeIs(1));
    EXPECT_EQ(r.errors[0].where.file, "s.toml");
    EXPECT_EQ(r.errors[0].where.line, 2U);
    EXPECT_GT(r.errors[0].where.column, 0U);
    EXPECT_THAT(r.errors[0].message, HasSubstr("TOML syntax error"));
}

TEST(scenario_loader, unreadable_file_is_one_error) {
    const scenario_result r = load_scenario_file("/nonexistent/faultline/s.toml");
    ASSERT_THAT(r.errors, SizeIs(1));
    EXPECT_EQ(r.errors[0].to_string(), "/nonexistent/faultline/s.toml: cannot read the scenario file");
}

class scenario_files_test : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = std::filesystem::temp_directory_path() /
                ("faultline-scenarios-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::remove_all(root_);
        std::filesystem::create_directories(root_ / "b");
        std::filesystem::create_directories(root_ / "empty");
        write("b/c.toml", "[[expect]]\ncheck = \"success_rate\"\n");
        write("a.toml", "[[expect]]\ncheck = \"success_rate\"\n");
        write("notes.txt", "not a scenario");
    }
    void TearDown() override { std::filesystem::remove_all(root_); }

    void write(const std::string& name, const std::string& text) {
        std::ofstream out(root_ / name);
        out << text;
    }
    std::string path(const std::string& name) const { return (root_ / name).string(); }

    std::filesystem::path root_;
};

TEST_F(scenario_files_test, folders_are_searched_recursively_and_sorted) {
    const scenario_files found = collect_scenario_files({root_.string(), path("a.toml")});
    ASSERT_TRUE(found.ok());
    ASSERT_THAT(found.files, SizeIs(2));
    EXPECT_EQ(found.files[0], path("a.toml"));
    EXPECT_EQ(found.files[1], path("b/c.toml"));
}

TEST_F(scenario_files_test, missing_paths_and_empty_folders_are_errors) {
    const scenario_files found = collect_scenario_files({path("missing.toml"), path("empty")});
    ASSERT_THAT(found.errors, SizeIs(2));
    EXPECT_EQ(found.errors[0].to_string(), path("missing.toml") + ": no such file or folder");
    EXPECT_EQ(found.errors[1].to_string(), path("empty") + ": no scenario files (*.toml) in this folder");
}

TEST_F(scenario_files_test, expectations_file_may_hold_only_expect_tables) {
    write("expect.toml", "[[expect]]\ncheck = \"max_attempts\"\nmax = 2\n");
    const expectations_result r = load_expectations_file(path("expect.toml"));
    ASSERT_TRUE(r.ok());
    ASSERT_THAT(r.expectations, SizeIs(1));
    EXPECT_EQ(r.expectations[0].check_name, "max_attempts");
}

constexpr std::string_view relay_expect = R"(
[[expect]]
check = "amplification"
)";

TEST(scenario_loader, reads_relay_tiers_in_file_order_with_the_client_policy_keys) {
    const scenario_result r = parse_scenario(std::string{R"(
[[relay]]
name = "edge"
preset = "no_budget"
[relay.policy]
max_attempts = 2
per_attempt_timeout = "250ms"
[relay.policy.budget]
kind = "token_bucket"
max_tokens = 4

[[relay]]
)"} + std::string{relay_expect},
                                             "storm.toml");
    ASSERT_TRUE(r.ok()) << error_text(r);
    ASSERT_THAT(r.value->relays, SizeIs(2));
    const relay_tier& edge = r.value->relays[0];
    EXPECT_EQ(edge.name, "edge");
    EXPECT_EQ(edge.policy.policy.max_attempts, 2u);
    EXPECT_EQ(edge.policy.policy.per_attempt_timeout, 250ms);
    EXPECT_EQ(edge.policy.budget.kind, drivers::budget_kind::token_bucket);
    EXPECT_EQ(edge.policy.budget.max_tokens, 4.0);
    // Unnamed: named by position; no policy table: the good preset's policy.
    EXPECT_EQ(r.value->relays[1].name, "relay-2");
    EXPECT_EQ(r.value->relays[1].policy.policy.max_attempts, drivers::preset_policy(drivers::client_preset::good).policy.max_attempts);
}

TEST(scenario_loader, relay_errors_name_the_tier_and_key) {
    const scenario_result r = parse_scenario(std::string{R"(
[[relay]]
name = "backend"
preset = "fast"

[[relay]]
[relay.policy]
max_attempt = 3
)"} + std::string{relay_expect},
                                             "storm.toml");
    ASSERT_FALSE(r.ok());
    const std::string text = error_text(r);
    EXPECT_THAT(text, HasSubstr("storm.toml:3:"));
    EXPECT_THAT(text, HasSubstr("\"backend\" is taken"));
    EXPECT_THAT(text, HasSubstr("storm.toml:4:"));
    EXPECT_THAT(text, HasSubstr("no_budget"));  // the allowed presets are listed
    EXPECT_THAT(text, HasSubstr("[relay.policy] #2"));
    EXPECT_THAT(text, HasSubstr("max_attempt"));
}

constexpr std::string_view proxy_expect = R"(
[[expect]]
check = "no_double_effects"
)";

// [proxy] with the commit declaration `faultline proxy --rules` takes: [server] routes.
TEST(scenario_loader, reads_the_proxy_table_and_the_routes_that_declare_commits) {
    const scenario_result r = parse_scenario(std::string{R"(
[proxy]
upstream = "127.0.0.1:9000"
connect_timeout = "250ms"
upstream_timeout = "3s"

[server]
service = "empty"
identity_header = "X-Request-Id"
[[server.endpoint]]
method = "POST"
path = "/payments"
effect = "non_idempotent"
)"} + std::string{proxy_expect},
                                             "proxied.toml");
    ASSERT_TRUE(r.ok()) << error_text(r);
    ASSERT_TRUE(r.value->proxy.has_value());
    const server::proxy_config& p = *r.value->proxy;
    EXPECT_EQ(p.upstream.address, "127.0.0.1");
    EXPECT_EQ(p.upstream.port, 9000);
    EXPECT_EQ(p.connect_timeout, 250ms);
    EXPECT_EQ(p.upstream_timeout, 3s);
    const server::proxy_options options = p.options();
    EXPECT_EQ(options.address, "127.0.0.1");
    EXPECT_EQ(options.port, 0);
    EXPECT_EQ(options.upstream_address, "127.0.0.1");
    EXPECT_EQ(options.upstream_port, 9000);
    EXPECT_EQ(options.connect_timeout, 250ms);
    EXPECT_EQ(options.upstream_timeout, 3s);
    EXPECT_FALSE(r.value->server.service.builtin_endpoints);
    EXPECT_EQ(r.value->server.identity.header, "X-Request-Id");
    ASSERT_THAT(r.value->server.service.endpoints, SizeIs(1));
    EXPECT_EQ(r.value->server.service.endpoints[0].effect, server::effect_semantics::non_idempotent);
}

TEST(scenario_loader, the_proxy_table_has_defaults_and_is_absent_without_one) {
    const scenario_result r = parse_scenario(std::string{"[proxy]\nupstream = \"[::1]:80\"\n"} +
                                             std::string{proxy_expect}, "proxied.toml");
    ASSERT_TRUE(r.ok()) << error_text(r);
    EXPECT_EQ(r.value->proxy->upstream.address, "::1");
    EXPECT_EQ(r.value->proxy->upstream.port, 80);
    EXPECT_EQ(r.value->proxy->connect_timeout, 2s);
    EXPECT_EQ(r.value->proxy->upstream_timeout, 30s);

    const scenario_result plain = parse_scenario(std::string{proxy_expect}, "plain.toml");
    ASSERT_TRUE(plain.ok()) << error_text(plain);
    EXPECT_FALSE(plain.value->proxy.has_value());
}

TEST(scenario_loader, bad_proxy_tables_name_the_key) {
    const auto errors = [](std::string_view table) {
        return error_text(parse_scenario(std::string{table} + std::string{proxy_expect}, "p.toml"));
    };
    EXPECT_EQ(errors("[proxy]\n"), "p.toml:1:1: [proxy]: missing required key \"upstream\"\n");
    EXPECT_EQ(errors("[proxy]\nupstream = \"localhost:80\"\n"),
              "p.toml:2:12: [proxy]: upstream: expected ADDRESS:PORT with an IP address and a port in [1, 65535], "
              "e.g. \"127.0.0.1:9000\", got \"localhost:80\"\n");
    EXPECT_EQ(errors("[proxy]\nupstream = \"127.0.0.1:0\"\n"),
              "p.toml:2:12: [proxy]: upstream: expected ADDRESS:PORT with an IP address and a port in [1, 65535], "
              "e.g. \"127.0.0.1:9000\", got \"127.0.0.1:0\"\n");
    EXPECT_EQ(errors("[proxy]\nupstream = \"10.0.0.7:80\"\n"),
              "p.toml:2:12: [proxy]: upstream: must be a loopback address (a scenario keeps all traffic on loopback; "
              "`faultline proxy` fronts other hosts), got \"10.0.0.7:80\"\n");
    EXPECT_EQ(errors("[proxy]\nupstream = \"127.0.0.1:80\"\nupstream_timeout = \"0s\"\nlisten = 1\n"),
              "p.toml:3:20: [proxy]: upstream_timeout: must be in [1ms, 1h], got \"0s\"\n"
              "p.toml:4:1: [proxy]: unknown key \"listen\"; allowed: connect_timeout, upstream, upstream_timeout\n");
}

// What the built-in service would do and the upstream does instead: errors at the keys, so the
// scenario does not run with settings that would silently mean nothing.
TEST(scenario_loader, proxy_rejects_the_service_models_replies_idempotency_and_relays) {
    const scenario_result r = parse_scenario(std::string{R"([proxy]
upstream = "127.0.0.1:9000"
[server]
idempotency = "keys"
idempotency_required = true
[[server.endpoint]]
method = "POST"
path = "/payments"
effect = "non_idempotent"
status = 201
body = "{}"
[[relay]]
)"} + std::string{proxy_expect},
                                             "p.toml");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(error_text(r),
              "p.toml:4:15: [server]: idempotency: the upstream behind [proxy] owns its idempotency keys; the proxy "
              "has no idempotency layer (remove the key, or drop [proxy])\n"
              "p.toml:5:24: [server]: idempotency_required: the upstream behind [proxy] owns its idempotency keys; "
              "the proxy cannot refuse requests without one\n"
              "p.toml:10:10: [[server.endpoint]] #1: status: the upstream behind [proxy] answers; behind [proxy] an "
              "endpoint only declares what commits (method, path, effect)\n"
              "p.toml:11:8: [[server.endpoint]] #1: body: the upstream behind [proxy] answers; behind [proxy] an "
              "endpoint only declares what commits (method, path, effect)\n"
              "p.toml:12:1: relay: [[relay]] tiers and [proxy] do not go together yet: the runner chains relays "
              "only in front of the built-in service (remove [proxy] or the [[relay]] tables)\n");
}

TEST(host_port, parses_ip_and_port_forms) {
    EXPECT_EQ(server::parse_host_port("127.0.0.1:8080")->address, "127.0.0.1");
    EXPECT_EQ(server::parse_host_port("127.0.0.1:8080")->port, 8080);
    EXPECT_EQ(server::parse_host_port("[::1]:9")->address, "::1");
    EXPECT_FALSE(server::parse_host_port("127.0.0.1"));
    EXPECT_FALSE(server::parse_host_port(":80"));
    EXPECT_FALSE(server::parse_host_port("127.0.0.1:"));
    EXPECT_FALSE(server::parse_host_port("127.0.0.1:65536"));
    EXPECT_FALSE(server::parse_host_port("127.0.0.1:80x"));
}

}  // namespace
}  // namespace faultline::runner
