// The control API through real sockets: rules changed at runtime, reset, journal/ledger/stats
// exports, and bad requests answered with a status and a message naming the problem.
#include "server_fixture.hpp"
#include "test_client.hpp"

#include "faultline/server/control_api.hpp"

#include "faultline/record/journal_json.hpp"

#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>

namespace faultline::server::testing {
namespace {

namespace json = boost::json;

// The server's events but its late spells, which the machine's load adds at any time.
std::vector<record::server_event> without_lateness(std::vector<record::server_event> events) {
    std::erase_if(events, [](const record::server_event& e) { return e.kind == record::server_event_kind::server_late; });
    return events;
}

struct control_reply {
    int status = 0;
    std::string body;
    json::value parsed;
    std::string allow;
    std::string authenticate;
};

control_reply parse_reply(const raw_reply& reply) {
    control_reply out;
    const auto res = reply.parsed();
    if (!res) return out;
    out.status = static_cast<int>(res->result_int());
    out.body = res->body();
    out.allow = std::string{(*res)[http::field::allow]};
    out.authenticate = std::string{(*res)[http::field::www_authenticate]};
    json::error_code ec;
    out.parsed = json::parse(out.body, ec);
    return out;
}

control_reply call(std::uint16_t port, std::string_view method, std::string_view path, std::string_view body = {},
                   std::string_view content_type = "application/json", header_pairs headers = {}) {
    if (!body.empty()) headers.emplace_back("Content-Type", std::string{content_type});
    return parse_reply(exchange(port, make_request(method, "/__faultline/" + std::string{path}, body, headers)));
}

// A request with exactly these header lines (make_request always adds Host: 127.0.0.1).
control_reply call_raw(std::uint16_t port, std::string_view method, std::string_view path, std::string_view lines,
                       std::string_view body = {}) {
    std::string req = std::string{method} + " /__faultline/" + std::string{path} + " HTTP/1.1\r\n" +
                      std::string{lines} + "Content-Length: " + std::to_string(body.size()) +
                      "\r\nConnection: close\r\n\r\n" + std::string{body};
    return parse_reply(exchange(port, std::move(req)));
}

server_options with_token(std::string token) {
    server_options options;
    options.control_token = std::move(token);
    return options;
}

TEST(control_api, recognises_its_prefix) {
    EXPECT_TRUE(is_control_target("/__faultline/health"));
    EXPECT_FALSE(is_control_target("/__faultlinehealth"));
    EXPECT_FALSE(is_control_target("/payments"));
}

TEST(control_api, health_is_never_faulted_nor_journaled) {
    test_server s{"[[fault]]\nkind = \"reset\"\n"};  // every attempt reset
    const auto health = call(s.control_port(), "GET", "health");
    EXPECT_EQ(health.status, 200);
    EXPECT_EQ(health.parsed.at("status"), "ok");
    EXPECT_EQ(health.parsed.at("seed"), 7);
    EXPECT_EQ(status_of(s.port(), "GET", "/x"), 0);  // reset
    EXPECT_EQ(s.journal().size(), 1U);
}

TEST(control_api, rules_added_listed_and_removed_at_runtime) {
    test_server s{""};
    EXPECT_EQ(status_of(s.port(), "GET", "/x"), 200);

    auto added = call(s.control_port(), "POST", "rules", R"({"name":"teapot","kind":"status","status":418})");
    EXPECT_EQ(added.status, 201) << added.body;
    EXPECT_EQ(added.parsed.at("added"), "teapot");
    EXPECT_EQ(status_of(s.port(), "GET", "/x"), 418);

    // A TOML table, placed first: it now wins over the teapot.
    added = call(s.control_port(), "POST", "rules?position=0",
                 "name = \"gone\"\nkind = \"status\"\nstatus = 410\n[match]\npath = \"/old*\"\n", "application/toml");
    EXPECT_EQ(added.status, 201) << added.body;
    EXPECT_EQ(status_of(s.port(), "GET", "/old/thing"), 410);
    EXPECT_EQ(status_of(s.port(), "GET", "/x"), 418);

    const auto listed = call(s.control_port(), "GET", "rules");
    EXPECT_EQ(listed.status, 200);
    const auto& rules = listed.parsed.at("rules").as_array();
    ASSERT_EQ(rules.size(), 2U);
    EXPECT_EQ(rules[0].at("name"), "gone");
    EXPECT_EQ(rules[1].at("name"), "teapot");
    EXPECT_EQ(rules[1].at("kind"), "status");

    EXPECT_EQ(call(s.control_port(), "DELETE", "rules/teapot").status, 200);
    EXPECT_EQ(status_of(s.port(), "GET", "/x"), 200);
    const auto unknown = call(s.control_port(), "DELETE", "rules/teapot");
    EXPECT_EQ(unknown.status, 404);
    EXPECT_NE(unknown.body.find("teapot"), std::string::npos);

    EXPECT_EQ(call(s.control_port(), "DELETE", "rules").status, 200);
    EXPECT_EQ(status_of(s.port(), "GET", "/old/thing"), 200);
}

TEST(control_api, bad_requests_name_the_problem) {
    test_server s{""};
    const auto bad_json = call(s.control_port(), "POST", "rules", "{not json");
    EXPECT_EQ(bad_json.status, 400);
    EXPECT_NE(bad_json.parsed.at("error").as_string().find("JSON"), std::string::npos) << bad_json.body;

    const auto not_object = call(s.control_port(), "POST", "rules", "[1,2]");
    EXPECT_EQ(not_object.status, 400);

    const auto bad_kind = call(s.control_port(), "POST", "rules", R"({"kind":"warp"})");
    EXPECT_EQ(bad_kind.status, 400);
    EXPECT_NE(bad_kind.body.find("warp"), std::string::npos) << bad_kind.body;

    const auto bad_toml = call(s.control_port(), "POST", "rules", "kind = ", "application/toml");
    EXPECT_EQ(bad_toml.status, 400);
    EXPECT_NE(bad_toml.body.find("control-api:1:"), std::string::npos) << bad_toml.body;

    const auto bad_position = call(s.control_port(), "POST", "rules?position=first", R"({"kind":"close"})");
    EXPECT_EQ(bad_position.status, 400);
    EXPECT_NE(bad_position.body.find("position"), std::string::npos);

    const auto empty = call(s.control_port(), "POST", "rules");
    EXPECT_EQ(empty.status, 400);

    ASSERT_EQ(call(s.control_port(), "POST", "rules", R"({"name":"a","kind":"close"})").status, 201);
    const auto duplicate = call(s.control_port(), "POST", "rules", R"({"name":"a","kind":"close"})");
    EXPECT_EQ(duplicate.status, 409);

    const auto wrong_method = call(s.control_port(), "PUT", "journal", "x");
    EXPECT_EQ(wrong_method.status, 405);
    EXPECT_EQ(wrong_method.allow, "GET");

    const auto unknown_path = call(s.control_port(), "GET", "nothing-here");
    EXPECT_EQ(unknown_path.status, 404);
    EXPECT_NE(unknown_path.body.find("nothing-here"), std::string::npos);
}

TEST(control_api, exports_journal_ledger_and_stats_and_resets) {
    test_server s{"[[fault]]\nname = \"slow\"\nkind = \"delay\"\nwait = \"1ms\"\n[fault.match]\npath = \"/kv/*\"\n"};
    const std::string pay = make_request("POST", "/payments", R"({"amount":3})");
    ASSERT_TRUE(exchange(s.port(), pay).parsed());
    ASSERT_TRUE(exchange(s.port(), make_request("PUT", "/kv/a", "1")).parsed());

    const auto journal = call(s.control_port(), "GET", "journal");
    EXPECT_EQ(journal.status, 200);
    EXPECT_EQ(std::count(journal.body.begin(), journal.body.end(), '\n'), 2);

    const auto ledger = call(s.control_port(), "GET", "ledger");
    EXPECT_EQ(ledger.status, 200);
    EXPECT_EQ(ledger.parsed.at("entries").as_array().size(), 2U);

    const auto stats = call(s.control_port(), "GET", "stats");
    EXPECT_EQ(stats.status, 200);
    EXPECT_EQ(stats.parsed.at("faults").at("fired_by_kind").at("delay"), 1);
    EXPECT_EQ(stats.parsed.at("faults").at("overflowed"), 0);
    EXPECT_EQ(stats.parsed.at("server").at("attempts"), 2);

    EXPECT_EQ(call(s.control_port(), "POST", "reset").status, 200);
    // The attempts are forgotten; the reset itself is what the journal now holds.
    const auto after_reset = call(s.control_port(), "GET", "journal").body;
    EXPECT_EQ(std::count(after_reset.begin(), after_reset.end(), '\n'), 1) << after_reset;
    EXPECT_NE(after_reset.find(R"("event":"reset")"), std::string::npos) << after_reset;
    EXPECT_EQ(call(s.control_port(), "GET", "ledger").parsed.at("entries").as_array().size(), 0U);
    // Attempt counts start again: the same payment is a first attempt.
    ASSERT_TRUE(exchange(s.port(), pay).parsed());
    const auto after = s.journal();
    ASSERT_EQ(after.size(), 1U);
    EXPECT_EQ(after[0].attempt, 1U);
}

TEST(control_api, the_service_port_never_serves_it) {
    test_server s{""};
    const std::string pay = make_request("POST", "/payments", R"({"amount":3})");
    ASSERT_TRUE(exchange(s.port(), pay).parsed());
    // What a client under test would do to erase its double charge: an ordinary request to the
    // service model (no endpoint matches: 404), journaled as an attempt like any other.
    EXPECT_EQ(status_of(s.port(), "POST", "/__faultline/reset"), 404);
    EXPECT_EQ(status_of(s.port(), "DELETE", "/__faultline/rules"), 404);
    const auto journal = s.journal();
    ASSERT_EQ(journal.size(), 3U);
    EXPECT_EQ(journal[1].target, "/__faultline/reset");
    EXPECT_EQ(journal[1].effect, record::effect_kind::unmatched);
    EXPECT_EQ(s.context().effects.size(), 1U);
    for (const auto& e : s.context().records.events()) EXPECT_FALSE(record::is_control_action(e.kind)) << to_string(e.kind);
}

TEST(control_api, control_actions_are_server_events_that_survive_reset_in_memory_and_in_the_file) {
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("faultline_control_events_" + std::to_string(::getpid()) + ".jsonl"))
                                 .string();
    journal_options file;
    file.path = path;
    test_server s{"", 7, {}, file};
    ASSERT_TRUE(exchange(s.port(), make_request("POST", "/payments", R"({"amount":3})")).parsed());
    ASSERT_EQ(call(s.control_port(), "POST", "rules", R"({"name":"teapot","kind":"status","status":418})").status, 201);
    ASSERT_EQ(call(s.control_port(), "DELETE", "rules/teapot").status, 200);
    ASSERT_EQ(call(s.control_port(), "POST", "rules", R"({"name":"gone","kind":"close"})").status, 201);
    ASSERT_EQ(call(s.control_port(), "DELETE", "rules").status, 200);
    ASSERT_EQ(call(s.control_port(), "POST", "reset").status, 200);

    const auto events = without_lateness(s.context().records.events());
    ASSERT_EQ(events.size(), 5U);
    EXPECT_EQ(events[0].kind, record::server_event_kind::rule_added);
    EXPECT_EQ(events[0].rule, "teapot");
    EXPECT_NE(events[0].detail.find(R"("status":418)"), std::string::npos) << events[0].detail;
    EXPECT_EQ(events[1].kind, record::server_event_kind::rule_removed);
    EXPECT_EQ(events[3].kind, record::server_event_kind::rules_cleared);
    EXPECT_EQ(events[3].detail, "gone");
    EXPECT_EQ(events[4].kind, record::server_event_kind::reset);
    EXPECT_EQ(events[0].seq, 2U);  // numbered from the journal's sequence, after the one attempt
    EXPECT_GT(events[4].seq, events[3].seq);
    EXPECT_EQ(events[4].peer.rfind("127.0.0.1:", 0), 0U) << events[4].peer;
    EXPECT_GT(events[4].at_ns, 0);

    s.finish();
    // The reset emptied memory, not the file: the attempt and every event are there.
    const auto read = record::read_jsonl(path);
    ASSERT_TRUE(read.ok());
    EXPECT_EQ(read.records.size(), 1U);
    ASSERT_EQ(without_lateness(read.server_events).size(), 5U);
    std::filesystem::remove(path);
}

// A reset starts the next round: its number is answered, the journal download is that round's, a
// round before it is no longer in memory (the file keeps it), and health and stats name the round.
TEST(control_api, a_reset_starts_the_next_round_whose_journal_is_served_by_default) {
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("faultline_control_rounds_" + std::to_string(::getpid()) + ".jsonl"))
                                 .string();
    journal_options file;
    file.path = path;
    test_server s{"", 7, {}, file};
    const std::string put = make_request("PUT", "/kv/a", "1");
    EXPECT_EQ(call(s.control_port(), "GET", "health").parsed.at("round"), 1);
    ASSERT_EQ(call(s.control_port(), "POST", "rules", R"({"name":"teapot","kind":"status","status":418})").status, 201);
    ASSERT_TRUE(exchange(s.port(), put).parsed());
    const auto first = call(s.control_port(), "GET", "journal?round=1");
    EXPECT_EQ(first.status, 200);
    EXPECT_EQ(std::count(first.body.begin(), first.body.end(), '\n'), 2) << first.body;
    EXPECT_EQ(first.body.find("round"), std::string::npos) << first.body;  // round 1 is written as before
    const auto not_yet = call(s.control_port(), "GET", "journal?round=2");
    EXPECT_EQ(not_yet.status, 404);
    EXPECT_EQ(not_yet.parsed.at("error"), "no round 2 yet: the current round is 1");

    const auto reset = call(s.control_port(), "POST", "reset");
    EXPECT_EQ(reset.status, 200);
    EXPECT_EQ(reset.parsed, json::parse(R"({"reset":true,"round":2})"));
    ASSERT_TRUE(exchange(s.port(), put).parsed());
    ASSERT_TRUE(exchange(s.port(), put).parsed());

    const auto current = call(s.control_port(), "GET", "journal");
    EXPECT_EQ(current.status, 200);
    EXPECT_EQ(std::count(current.body.begin(), current.body.end(), '\n'), 3) << current.body;
    EXPECT_EQ(current.body.find(R"({"event":"reset",)"), 0U) << current.body;
    EXPECT_EQ(current.body.find(R"("event":"rule_added")"), std::string::npos) << current.body;  // round 1's event
    EXPECT_NE(current.body.find(R"("round":2,"conn")"), std::string::npos) << current.body;
    EXPECT_NE(current.body.find(R"("attempt":2,)"), std::string::npos) << current.body;
    EXPECT_EQ(call(s.control_port(), "GET", "journal?round=2").body, current.body);
    const auto all = call(s.control_port(), "GET", "journal?round=all");
    EXPECT_EQ(std::count(all.body.begin(), all.body.end(), '\n'), 4) << all.body;  // and round 1's event
    const auto gone = call(s.control_port(), "GET", "journal?round=1");
    EXPECT_EQ(gone.status, 404);
    EXPECT_EQ(gone.parsed.at("error"),
              "round 1 is no longer in memory: a reset forgets the attempts of the rounds before it (the journal "
              "file, --journal, keeps every round); the current round is 2");
    for (const char* bad : {"journal?round=0", "journal?round=x", "journal?round=-1", "journal?round="}) {
        const auto refused = call(s.control_port(), "GET", bad);
        EXPECT_EQ(refused.status, 400) << bad;
        EXPECT_NE(refused.body.find("query parameter 'round' must be a round number"), std::string::npos)
            << refused.body;
    }
    EXPECT_EQ(call(s.control_port(), "GET", "health").parsed.at("round"), 2);
    EXPECT_EQ(call(s.control_port(), "GET", "stats").parsed.at("journal").at("round"), 2);

    s.finish();
    const auto read = record::read_jsonl(path);
    ASSERT_TRUE(read.ok()) << read.errors.front().to_string();
    ASSERT_EQ(read.records.size(), 3U);
    EXPECT_EQ(read.records[0].round, 1);
    EXPECT_EQ(read.records[1].round, 2);
    EXPECT_EQ(read.records[2].round, 2);
    std::filesystem::remove(path);
}

TEST(control_api, requires_the_token_when_one_is_set) {
    test_server s{"", 7, with_token("s3cret")};
    const auto missing = call(s.control_port(), "GET", "health");
    EXPECT_EQ(missing.status, 401);
    EXPECT_EQ(missing.authenticate, R"(Bearer realm="faultline")");
    const auto wrong = call(s.control_port(), "POST", "reset", {}, {}, {{"Authorization", "Bearer s3cre"}});
    EXPECT_EQ(wrong.status, 403);
    EXPECT_NE(wrong.body.find("wrong token"), std::string::npos);
    EXPECT_EQ(call(s.control_port(), "GET", "health", {}, {}, {{"Authorization", "Bearer s3cret"}}).status, 200);
    EXPECT_EQ(call(s.control_port(), "GET", "health", {}, {}, {{"Faultline-Control-Token", "s3cret"}}).status, 200);
    EXPECT_TRUE(s.context().records.events().empty());  // the refused reset did nothing
}

TEST(control_api, a_default_server_makes_its_own_random_token) {
    server_context context{model_config{}, {}, 7};
    server_options options;
    options.control_port = 0;
    server first{context, options};
    server second{context, options};
    ASSERT_EQ(first.control_token().size(), 32U);
    EXPECT_EQ(first.control_token().find_first_not_of("0123456789abcdef"), std::string::npos);
    EXPECT_NE(first.control_token(), second.control_token());
    ASSERT_FALSE(first.start());
    EXPECT_EQ(call(*first.control_port(), "GET", "health").status, 401);
    EXPECT_EQ(call(*first.control_port(), "GET", "health", {}, {},
                   {{"Authorization", "Bearer " + first.control_token()}})
                  .status,
              200);
}

TEST(control_api, refuses_foreign_host_and_origin_even_without_a_token) {
    test_server s{""};
    const auto rebinding = call_raw(s.control_port(), "GET", "health", "Host: evil.example:8080\r\n");
    EXPECT_EQ(rebinding.status, 403);
    EXPECT_NE(rebinding.body.find("DNS rebinding"), std::string::npos) << rebinding.body;
    // The cross-site form post that used to add a rule (201).
    const auto csrf = call_raw(s.control_port(), "POST", "rules",
                               "Host: 127.0.0.1\r\nOrigin: https://evil.example\r\nContent-Type: text/plain\r\n",
                               R"({"name":"x","kind":"close"})");
    EXPECT_EQ(csrf.status, 403);
    EXPECT_NE(csrf.body.find("cross-site"), std::string::npos) << csrf.body;
    EXPECT_TRUE(s.context().engine.rules().empty());
    EXPECT_EQ(call_raw(s.control_port(), "GET", "health", "Host: localhost:1234\r\nOrigin: http://127.0.0.1:99\r\n")
                  .status,
              200);
    EXPECT_EQ(call_raw(s.control_port(), "GET", "health", "Host: [::1]\r\n").status, 200);
}

// Issue 27, item 8: with two Host fields the first may be loopback and the second foreign; the
// connection refuses the request (RFC 9112 3.2) rather than judge either one.
TEST(control_api, two_host_fields_are_refused_not_judged_by_the_first) {
    test_server s{""};
    const auto two = call_raw(s.control_port(), "GET", "health", "Host: 127.0.0.1\r\nHost: evil.example\r\n");
    EXPECT_EQ(two.status, 400);
    EXPECT_EQ(s.engine().counters().control_requests, 0U);
}

TEST(control_api, loopback_host_and_origin_rules) {
    for (const char* host : {"127.0.0.1", "127.0.0.1:80", "localhost", "LOCALHOST:8080", "[::1]", "[::1]:9"}) {
        EXPECT_TRUE(is_loopback_host(host)) << host;
    }
    for (const char* host : {"", "127.0.0.1.evil.example", "localhost.", "localhost:", "localhost:x", "[::1]:1234567",
                             "10.0.0.1", "evil.example"}) {
        EXPECT_FALSE(is_loopback_host(host)) << host;
    }
    EXPECT_TRUE(is_loopback_origin("http://localhost:3000"));
    EXPECT_TRUE(is_loopback_origin("https://[::1]"));
    EXPECT_FALSE(is_loopback_origin("null"));
    EXPECT_FALSE(is_loopback_origin("file://localhost"));
    EXPECT_FALSE(is_loopback_origin("http://localhost.evil.example"));
}

TEST(control_api, constant_time_compare_and_percent_decoding) {
    EXPECT_TRUE(constant_time_equal("abc", "abc"));
    EXPECT_FALSE(constant_time_equal("abc", "abd"));
    EXPECT_FALSE(constant_time_equal("abc", "ab"));
    EXPECT_FALSE(constant_time_equal("", "a"));
    EXPECT_FALSE(constant_time_equal("a", ""));
    EXPECT_TRUE(constant_time_equal("", ""));
    EXPECT_EQ(percent_decode("a%3Ab%2e"), "a:b.");
    EXPECT_EQ(percent_decode("plain"), "plain");
    EXPECT_FALSE(percent_decode("a%3"));
    EXPECT_FALSE(percent_decode("a%zz"));
    EXPECT_FALSE(percent_decode("%"));
}

TEST(control_api, rule_names_are_checked_at_add_and_decoded_at_delete) {
    test_server s{""};
    const auto bad = call(s.control_port(), "POST", "rules", R"({"name":"what?","kind":"close"})");
    EXPECT_EQ(bad.status, 400);
    EXPECT_NE(bad.body.find("A-Z a-z 0-9 . _ : -"), std::string::npos) << bad.body;
    ASSERT_EQ(call(s.control_port(), "POST", "rules", R"({"name":"api:v1.slow","kind":"close"})").status, 201);
    EXPECT_EQ(call(s.control_port(), "DELETE", "rules/api%3Av1.slow").status, 200);
    EXPECT_TRUE(s.context().engine.rules().empty());
    EXPECT_EQ(call(s.control_port(), "DELETE", "rules/a%2").status, 400);
}

TEST(control_api, a_rule_waiting_longer_than_max_fault_wait_is_refused) {
    test_server s{"[server]\nmax_fault_wait = \"2s\"\n"};
    const auto bad = call(s.control_port(), "POST", "rules", R"({"name":"slow","kind":"delay","wait":"2562047h"})");
    EXPECT_EQ(bad.status, 400);
    EXPECT_NE(bad.body.find("max_fault_wait = 2s"), std::string::npos) << bad.body;
    EXPECT_EQ(call(s.control_port(), "POST", "rules", R"({"name":"slow","kind":"delay","wait":"2s"})").status, 201);
}

}  // namespace
}  // namespace faultline::server::testing
