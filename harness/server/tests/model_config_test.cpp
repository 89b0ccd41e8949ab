#include "faultline/server/model_config.hpp"

#include <gtest/gtest.h>

namespace faultline::server {
namespace {

toml::table parse(std::string_view text) { return toml::parse(text, std::string_view{"scenario.toml"}); }

std::vector<std::string> messages(const config_errors& errors) {
    std::vector<std::string> out;
    for (const auto& e : errors) out.push_back(e.to_string());
    return out;
}

TEST(model_config, empty_table_gives_the_defaults) {
    config_errors errors;
    const auto c = parse_model_config(toml::table{}, "x.toml", errors);
    ASSERT_TRUE(c);
    EXPECT_TRUE(errors.empty());
    EXPECT_TRUE(c->service.builtin_endpoints);
    EXPECT_TRUE(c->service.endpoints.empty());
    EXPECT_EQ(c->service.catch_all, catch_all_effect::not_found);
    EXPECT_EQ(c->idempotency.mode, idempotency_mode::off);
    EXPECT_FALSE(c->idempotency.required);
    EXPECT_EQ(c->identity.header, "");
    EXPECT_EQ(c->identity.body_field, "");
    EXPECT_EQ(c->journal_max_records, 1'000'000U);
}

TEST(model_config, reads_every_key) {
    const auto t = parse(R"(
[server]
service = "empty"
idempotency = "keys"
idempotency_required = true
identity_header = "X-Request-Id"
identity_field = "order_id"
catch_all = "by_method"
journal_max_records = 5000

[[server.endpoint]]
method = "POST"
path = "/orders/{id}/pay"
effect = "non_idempotent"
status = 201
body = '{"paid":{n}}'

[[server.endpoint]]
method = "*"
path = "/health"
effect = "none"
content_type = "text/plain"
)");
    config_errors errors;
    const auto c = parse_model_config(*t["server"].as_table(), "scenario.toml", errors);
    ASSERT_TRUE(c) << messages(errors).front();
    EXPECT_FALSE(c->service.builtin_endpoints);
    EXPECT_EQ(c->service.catch_all, catch_all_effect::by_method);
    EXPECT_EQ(c->idempotency.mode, idempotency_mode::keys);
    EXPECT_TRUE(c->idempotency.required);
    EXPECT_EQ(c->identity.header, "X-Request-Id");
    EXPECT_EQ(c->identity.body_field, "order_id");
    EXPECT_EQ(c->journal_max_records, 5000U);
    ASSERT_EQ(c->service.endpoints.size(), 2U);
    const auto& e = c->service.endpoints[0];
    EXPECT_EQ(e.method, "POST");
    EXPECT_EQ(e.path, "/orders/{id}/pay");
    EXPECT_EQ(e.effect, effect_semantics::non_idempotent);
    EXPECT_EQ(e.status, 201);
    EXPECT_EQ(e.body, R"({"paid":{n}})");
    EXPECT_EQ(e.content_type, "application/json");
    EXPECT_EQ(c->service.endpoints[1].method, "*");
    EXPECT_EQ(c->service.endpoints[1].status, 200);
    EXPECT_EQ(c->service.endpoints[1].content_type, "text/plain");
}

TEST(model_config, reads_the_limits_and_bounds_them) {
    const auto t = parse("[server]\nheader_timeout = \"250ms\"\nidle_timeout = \"5s\"\nmax_connections = 12\n"
                         "max_fault_wait = \"2m\"\nwrite_timeout = \"3s\"\n");
    config_errors errors;
    const auto c = parse_model_config(*t["server"].as_table(), "scenario.toml", errors);
    ASSERT_TRUE(c) << messages(errors).front();
    EXPECT_EQ(c->limits.header_timeout, std::chrono::milliseconds{250});
    EXPECT_EQ(c->limits.idle_timeout, std::chrono::seconds{5});
    EXPECT_EQ(c->limits.max_connections, 12U);
    EXPECT_EQ(c->limits.max_fault_wait, std::chrono::minutes{2});
    EXPECT_EQ(c->limits.write_timeout, std::chrono::seconds{3});
    const server_limits defaults;
    EXPECT_EQ(defaults.header_timeout, std::chrono::seconds{10});
    EXPECT_EQ(defaults.idle_timeout, std::chrono::seconds{60});
    EXPECT_EQ(defaults.max_connections, 4096U);
    EXPECT_EQ(defaults.max_fault_wait, std::chrono::hours{1});
    EXPECT_EQ(defaults.write_timeout, std::chrono::seconds{30});

    const auto bad = parse("[server]\nheader_timeout = \"0s\"\nmax_connections = 0\nmax_fault_wait = \"25h\"\n");
    errors.clear();
    EXPECT_FALSE(parse_model_config(*bad["server"].as_table(), "scenario.toml", errors));
    ASSERT_EQ(errors.size(), 3U);
    EXPECT_EQ(errors[0].where.line, 2U);
    EXPECT_NE(errors[2].message.find("max_fault_wait"), std::string::npos) << errors[2].message;
}

TEST(model_config, unknown_keys_are_listed_with_positions) {
    const auto t = parse("[server]\nidempotency = \"keys\"\ncolour = 1\n");
    config_errors errors;
    EXPECT_FALSE(parse_model_config(*t["server"].as_table(), "scenario.toml", errors));
    EXPECT_EQ(messages(errors),
              std::vector<std::string>{
                  "scenario.toml:3:1: [server]: unknown key \"colour\"; allowed: catch_all, endpoint, header_timeout, "
                  "idempotency, idempotency_required, identity_field, identity_header, idle_timeout, "
                  "journal_max_records, max_concurrent_streams, max_connections, max_fault_wait, service, write_timeout"});
}

TEST(model_config, the_catch_all_of_earlier_versions_is_declared_by_name) {
    for (const auto& [text, expected] : {std::pair{"none", catch_all_effect::none},
                                         std::pair{"not_found", catch_all_effect::not_found}}) {
        const auto t = parse(std::string{"[server]\ncatch_all = \""} + text + "\"\n");
        config_errors errors;
        const auto c = parse_model_config(*t["server"].as_table(), "scenario.toml", errors);
        ASSERT_TRUE(c) << messages(errors).front();
        EXPECT_EQ(c->service.catch_all, expected) << text;
    }
}

TEST(model_config, extra_keys_belong_to_someone_else) {
    const auto t = parse("[server]\nmax_active_faults = 4\nbogus = 1\n");
    config_errors errors;
    EXPECT_FALSE(parse_model_config(*t["server"].as_table(), "scenario.toml", errors, {"max_active_faults"}));
    ASSERT_EQ(errors.size(), 1U);
    EXPECT_NE(errors[0].message.find("allowed: catch_all"), std::string::npos);
    EXPECT_NE(errors[0].message.find(", max_active_faults"), std::string::npos);
    EXPECT_EQ(errors[0].where.line, 3U);
}

TEST(model_config, every_bad_value_is_reported) {
    const auto t = parse(R"([server]
service = "fancy"
idempotency = 3
idempotency_required = "yes"
identity_header = "X Request"
identity_field = ""
catch_all = "all"
journal_max_records = 0
)");
    config_errors errors;
    EXPECT_FALSE(parse_model_config(*t["server"].as_table(), "scenario.toml", errors));
    EXPECT_EQ(messages(errors),
              (std::vector<std::string>{
                  R"(scenario.toml:2:11: [server]: service: unknown value "fancy"; allowed: default, empty)",
                  R"(scenario.toml:3:15: [server]: idempotency: expected a string, got an integer)",
                  R"(scenario.toml:4:24: [server]: idempotency_required: expected true or false, got a string)",
                  R"(scenario.toml:5:19: [server]: identity_header: must be an HTTP token (letters, digits, -), got "X Request")",
                  R"(scenario.toml:6:18: [server]: identity_field: must not be empty)",
                  R"(scenario.toml:7:13: [server]: catch_all: unknown value "all"; allowed: not_found, none, by_method)",
                  R"(scenario.toml:8:23: [server]: journal_max_records: must be at least 1, got 0)",
              }));
}

TEST(model_config, bad_endpoints) {
    const auto t = parse(R"([server]
[[server.endpoint]]
method = "POST"
path = "orders"
effect = "sometimes"
status = 99
speed = 1
[[server.endpoint]]
path = "/x"
)");
    config_errors errors;
    EXPECT_FALSE(parse_model_config(*t["server"].as_table(), "scenario.toml", errors));
    EXPECT_EQ(messages(errors),
              (std::vector<std::string>{
                  R"(scenario.toml:4:8: [[server.endpoint]]: path: must start with '/', got "orders")",
                  R"(scenario.toml:5:10: [[server.endpoint]]: effect: unknown value "sometimes"; allowed: non_idempotent, idempotent_write, read, none)",
                  R"(scenario.toml:6:10: [[server.endpoint]]: status: must be in [100, 599], got 99)",
                  R"(scenario.toml:7:1: [[server.endpoint]]: unknown key "speed"; allowed: body, content_type, effect, method, path, status)",
                  R"(scenario.toml:8:1: [[server.endpoint]]: missing required key "method")",
                  R"(scenario.toml:8:1: [[server.endpoint]]: missing required key "effect")",
              }));
}

TEST(model_config, an_empty_endpoint_list_declares_none) {
    const auto t = parse("[server]\nendpoint = []\n");
    config_errors errors;
    const auto c = parse_model_config(*t["server"].as_table(), "scenario.toml", errors);
    ASSERT_TRUE(c);
    EXPECT_TRUE(c->service.endpoints.empty());
}

TEST(model_config, endpoint_must_be_an_array_of_tables) {
    const auto t = parse("[server]\nendpoint = \"x\"\n");
    config_errors errors;
    EXPECT_FALSE(parse_model_config(*t["server"].as_table(), "scenario.toml", errors));
    ASSERT_EQ(errors.size(), 1U);
    EXPECT_EQ(errors[0].to_string(),
              R"(scenario.toml:2:12: [server]: endpoint: expected an array of tables, got a string)");
}

}  // namespace
}  // namespace faultline::server
