// The control API through real sockets: rules changed at runtime, reset, journal/ledger/stats
// exports, and bad requests answered with a status and a message naming the problem.
#include "server_fixture.hpp"
#include "test_client.hpp"

#include "faultline/server/control_api.hpp"

#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

namespace faultline::harness::testing {
namespace {

namespace json = boost::json;

struct control_reply {
    int status = 0;
    std::string body;
    json::value parsed;
    std::string allow;
};

control_reply call(std::uint16_t port, std::string_view method, std::string_view path, std::string_view body = {},
                   std::string_view content_type = "application/json") {
    header_pairs headers;
    if (!body.empty()) headers.emplace_back("Content-Type", std::string{content_type});
    const auto reply = exchange(port, make_request(method, "/__faultline/" + std::string{path}, body, headers));
    control_reply out;
    const auto res = reply.parsed();
    if (!res) return out;
    out.status = static_cast<int>(res->result_int());
    out.body = res->body();
    out.allow = std::string{(*res)[http::field::allow]};
    json::error_code ec;
    out.parsed = json::parse(out.body, ec);
    return out;
}

int status_of(std::uint16_t port, std::string_view method, std::string_view target) {
    const auto reply = exchange(port, make_request(method, target));
    const auto res = reply.parsed();
    return res ? static_cast<int>(res->result_int()) : 0;
}

TEST(control_api, recognises_its_prefix) {
    EXPECT_TRUE(is_control_target("/__faultline/health"));
    EXPECT_FALSE(is_control_target("/__faultlinehealth"));
    EXPECT_FALSE(is_control_target("/payments"));
}

TEST(control_api, health_is_never_faulted_nor_journaled) {
    test_server s{"[[fault]]\nkind = \"reset\"\n"};  // every attempt reset
    const auto health = call(s.port(), "GET", "health");
    EXPECT_EQ(health.status, 200);
    EXPECT_EQ(health.parsed.at("status"), "ok");
    EXPECT_EQ(health.parsed.at("seed"), 7);
    EXPECT_EQ(status_of(s.port(), "GET", "/x"), 0);  // reset
    EXPECT_EQ(s.journal().size(), 1U);
}

TEST(control_api, rules_added_listed_and_removed_at_runtime) {
    test_server s{""};
    EXPECT_EQ(status_of(s.port(), "GET", "/x"), 200);

    auto added = call(s.port(), "POST", "rules", R"({"name":"teapot","kind":"status","status":418})");
    EXPECT_EQ(added.status, 201) << added.body;
    EXPECT_EQ(added.parsed.at("added"), "teapot");
    EXPECT_EQ(status_of(s.port(), "GET", "/x"), 418);

    // A TOML table, placed first: it now wins over the teapot.
    added = call(s.port(), "POST", "rules?position=0",
                 "name = \"gone\"\nkind = \"status\"\nstatus = 410\n[match]\npath = \"/old*\"\n", "application/toml");
    EXPECT_EQ(added.status, 201) << added.body;
    EXPECT_EQ(status_of(s.port(), "GET", "/old/thing"), 410);
    EXPECT_EQ(status_of(s.port(), "GET", "/x"), 418);

    const auto listed = call(s.port(), "GET", "rules");
    EXPECT_EQ(listed.status, 200);
    const auto& rules = listed.parsed.at("rules").as_array();
    ASSERT_EQ(rules.size(), 2U);
    EXPECT_EQ(rules[0].at("name"), "gone");
    EXPECT_EQ(rules[1].at("name"), "teapot");
    EXPECT_EQ(rules[1].at("kind"), "status");

    EXPECT_EQ(call(s.port(), "DELETE", "rules/teapot").status, 200);
    EXPECT_EQ(status_of(s.port(), "GET", "/x"), 200);
    const auto unknown = call(s.port(), "DELETE", "rules/teapot");
    EXPECT_EQ(unknown.status, 404);
    EXPECT_NE(unknown.body.find("teapot"), std::string::npos);

    EXPECT_EQ(call(s.port(), "DELETE", "rules").status, 200);
    EXPECT_EQ(status_of(s.port(), "GET", "/old/thing"), 200);
}

TEST(control_api, bad_requests_name_the_problem) {
    test_server s{""};
    const auto bad_json = call(s.port(), "POST", "rules", "{not json");
    EXPECT_EQ(bad_json.status, 400);
    EXPECT_NE(bad_json.parsed.at("error").as_string().find("JSON"), std::string::npos) << bad_json.body;

    const auto not_object = call(s.port(), "POST", "rules", "[1,2]");
    EXPECT_EQ(not_object.status, 400);

    const auto bad_kind = call(s.port(), "POST", "rules", R"({"kind":"warp"})");
    EXPECT_EQ(bad_kind.status, 400);
    EXPECT_NE(bad_kind.body.find("warp"), std::string::npos) << bad_kind.body;

    const auto bad_toml = call(s.port(), "POST", "rules", "kind = ", "application/toml");
    EXPECT_EQ(bad_toml.status, 400);
    EXPECT_NE(bad_toml.body.find("control-api:1:"), std::string::npos) << bad_toml.body;

    const auto bad_position = call(s.port(), "POST", "rules?position=first", R"({"kind":"close"})");
    EXPECT_EQ(bad_position.status, 400);
    EXPECT_NE(bad_position.body.find("position"), std::string::npos);

    const auto empty = call(s.port(), "POST", "rules");
    EXPECT_EQ(empty.status, 400);

    ASSERT_EQ(call(s.port(), "POST", "rules", R"({"name":"a","kind":"close"})").status, 201);
    const auto duplicate = call(s.port(), "POST", "rules", R"({"name":"a","kind":"close"})");
    EXPECT_EQ(duplicate.status, 409);

    const auto wrong_method = call(s.port(), "PUT", "journal", "x");
    EXPECT_EQ(wrong_method.status, 405);
    EXPECT_EQ(wrong_method.allow, "GET");

    const auto unknown_path = call(s.port(), "GET", "nothing-here");
    EXPECT_EQ(unknown_path.status, 404);
    EXPECT_NE(unknown_path.body.find("nothing-here"), std::string::npos);
}

TEST(control_api, exports_journal_ledger_and_stats_and_resets) {
    test_server s{"[[fault]]\nname = \"slow\"\nkind = \"delay\"\nwait = \"1ms\"\n[fault.match]\npath = \"/kv/*\"\n"};
    const std::string pay = make_request("POST", "/payments", R"({"amount":3})");
    ASSERT_TRUE(exchange(s.port(), pay).parsed());
    ASSERT_TRUE(exchange(s.port(), make_request("PUT", "/kv/a", "1")).parsed());

    const auto journal = call(s.port(), "GET", "journal");
    EXPECT_EQ(journal.status, 200);
    EXPECT_EQ(std::count(journal.body.begin(), journal.body.end(), '\n'), 2);

    const auto ledger = call(s.port(), "GET", "ledger");
    EXPECT_EQ(ledger.status, 200);
    EXPECT_EQ(ledger.parsed.at("entries").as_array().size(), 2U);

    const auto stats = call(s.port(), "GET", "stats");
    EXPECT_EQ(stats.status, 200);
    EXPECT_EQ(stats.parsed.at("faults").at("fired_by_kind").at("delay"), 1);
    EXPECT_EQ(stats.parsed.at("faults").at("overflowed"), 0);
    EXPECT_EQ(stats.parsed.at("server").at("attempts"), 2);

    EXPECT_EQ(call(s.port(), "POST", "reset").status, 200);
    EXPECT_EQ(call(s.port(), "GET", "journal").body, "");
    EXPECT_EQ(call(s.port(), "GET", "ledger").parsed.at("entries").as_array().size(), 0U);
    // Attempt counts start again: the same payment is a first attempt.
    ASSERT_TRUE(exchange(s.port(), pay).parsed());
    const auto after = s.journal();
    ASSERT_EQ(after.size(), 1U);
    EXPECT_EQ(after[0].attempt, 1U);
}

}  // namespace
}  // namespace faultline::harness::testing
