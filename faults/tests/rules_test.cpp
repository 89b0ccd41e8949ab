// Rule matching and the TOML/JSON rule format: fields, defaults, and errors with file:line:column.
#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "faultline/config/document.hpp"
#include "faultline/faults/rule.hpp"
#include "test_support.hpp"

namespace faultline::faults {
namespace {

using namespace std::chrono_literals;
using testing::attempt_builder;
using testing::messages;
using testing::one_error;
using testing::one_rule;
using testing::parse;

TEST(glob_match, stars_and_question_marks) {
    EXPECT_TRUE(glob_match("/payments*", "/payments"));
    EXPECT_TRUE(glob_match("/payments*", "/payments/17"));
    EXPECT_FALSE(glob_match("/payments*", "/payment"));
    EXPECT_TRUE(glob_match("/kv/?", "/kv/a"));
    EXPECT_FALSE(glob_match("/kv/?", "/kv/ab"));
    EXPECT_FALSE(glob_match("/kv/?", "/kv/"));
    EXPECT_TRUE(glob_match("*", ""));
    EXPECT_TRUE(glob_match("", ""));
    EXPECT_FALSE(glob_match("", "/"));
    EXPECT_TRUE(glob_match("/counters/*/increment", "/counters/a/b/increment"));
    EXPECT_TRUE(glob_match("a*b*c", "axxbyyc"));
    EXPECT_FALSE(glob_match("a*b*c", "axxbyy"));
    EXPECT_TRUE(glob_match("*.json", "x.json"));
    EXPECT_FALSE(glob_match("*.json", "x.jso"));
}

TEST(glob_match, pathological_patterns_stay_fast) {
    const std::string text(10'000, 'a');
    EXPECT_FALSE(glob_match("*a*a*a*a*a*a*a*a*b", text));
    EXPECT_TRUE(glob_match("*a*a*a*a*a*a*a*a*", text));
}

TEST(request_match, every_condition_must_hold) {
    request_match match;
    match.methods = {"PUT", "DELETE"};
    match.path = "/kv/*";
    match.headers = {{"x-tenant", "blue"}};
    match.headers_present = {"Idempotency-Key"};

    attempt_builder a;
    a.method = "PUT";
    a.target = "/kv/k1?consistent=1";  // the query is not part of the path
    a.headers = {{"X-Tenant", "blue"}, {"idempotency-key", "\"k\""}};
    EXPECT_TRUE(match.matches(a.build().request));

    a.method = "put";  // methods are case-sensitive
    EXPECT_FALSE(match.matches(a.build().request));
    a.method = "DELETE";
    EXPECT_TRUE(match.matches(a.build().request));
    a.target = "/payments";
    EXPECT_FALSE(match.matches(a.build().request));
    a.target = "/kv/k1";
    a.headers[0].second = "Blue";  // values compare exactly
    EXPECT_FALSE(match.matches(a.build().request));
    a.headers[0].second = "blue";
    a.headers.pop_back();
    EXPECT_FALSE(match.matches(a.build().request));
    EXPECT_TRUE(request_match{}.matches(a.build().request));
}

TEST(rule_format, reads_name_match_when_and_the_kind) {
    const rule r = one_rule(R"([[fault]]
name = "lose-payments"
kind = "lost_response"
then = "close"
[fault.match]
method = "POST"
path = "/payments*"
headers = { "X-A" = "1" }
header_present = ["X-B"]
[fault.when]
probability = 0.5
attempts = [1, 2]
first = 10
every = 3
from = "1s"
for = "2s"
)");
    EXPECT_EQ(r.name, "lose-payments");
    EXPECT_EQ(r.kind, "lost_response");
    EXPECT_EQ(r.level, fault_level::attempt);
    EXPECT_EQ(r.match.methods, std::vector<std::string>{"POST"});
    EXPECT_EQ(r.match.path, "/payments*");
    ASSERT_EQ(r.match.headers.size(), 1U);
    EXPECT_EQ(r.match.headers[0].name, "X-A");
    EXPECT_EQ(r.match.headers[0].value, "1");
    EXPECT_EQ(r.match.headers_present, std::vector<std::string>{"X-B"});
    EXPECT_EQ(r.when.probability, 0.5);
    EXPECT_EQ(r.when.attempts, (std::vector<std::uint32_t>{1, 2}));
    EXPECT_EQ(r.when.first, 10U);
    EXPECT_EQ(r.when.every, 3U);
    EXPECT_EQ(r.when.from, 1s);
    EXPECT_EQ(r.when.for_duration, 2s);
    EXPECT_EQ(r.where.line, 1U);
    EXPECT_EQ(r.where.file, "rules.toml");
    EXPECT_EQ(r.source.at("then"), "close");
    EXPECT_EQ(r.source.at("match").at("path"), "/payments*");
}

TEST(rule_format, default_names_follow_the_position_and_methods_may_be_a_list) {
    const rules_result result = parse(R"([[fault]]
kind = "delay"
wait = "1ms"
[[fault]]
kind = "status"
[fault.match]
method = ["PUT", "DELETE"]
)");
    ASSERT_TRUE(result.ok()) << messages(result);
    ASSERT_EQ(result.rules.size(), 2U);
    EXPECT_EQ(result.rules[0].name, "delay-1");
    EXPECT_EQ(result.rules[1].name, "status-2");
    EXPECT_EQ(result.rules[1].match.methods, (std::vector<std::string>{"PUT", "DELETE"}));
    EXPECT_EQ(result.rules[1].where.line, 4U);
}

TEST(rule_format, an_empty_file_has_no_rules) {
    const rules_result result = parse("");
    EXPECT_TRUE(result.ok());
    EXPECT_TRUE(result.rules.empty());
}

TEST(rule_format, errors_name_the_key_and_the_allowed_ones) {
    EXPECT_EQ(one_error("[[fault]]\nname = \"x\"\n"), "rules.toml:1:1: fault rule: missing required key \"kind\"");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"explode\"\n"),
              "rules.toml:2:8: fault rule: kind: unknown value \"explode\"; allowed: close, delay, goaway, "
              "grpc_status, hang, lost_response, malformed, overload, refuse, refused_stream, reset, slow_body, status, tls, tls_truncate, truncate");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"status\"\nname = \"\"\n"),
              "rules.toml:3:8: fault rule: name: must be 1 to 128 characters long, got 0");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"status\"\n[fault.match]\nverb = \"GET\"\n"),
              "rules.toml:4:1: [fault.match]: unknown key \"verb\"; allowed: header_present, headers, method, path");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"status\"\n[fault.match]\nmethod = 1\n"),
              "rules.toml:4:10: [fault.match]: method: expected a string or an array of strings, got an integer");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"status\"\nmatch = \"all\"\n"),
              "rules.toml:3:9: fault rule: match: expected a table, got a string");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"status\"\n[fault.when]\nprobability = 1.5\n"),
              "rules.toml:4:15: [fault.when]: probability: must be in [0, 1], got 1.5");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"status\"\n[fault.when]\nattempts = [1, 0]\n"),
              "rules.toml:4:16: [fault.when]: attempts: every item must be an integer in [1, 4294967295], got 0");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"status\"\n[fault.when]\nfor = \"0s\"\n"),
              "rules.toml:4:7: [fault.when]: for: must be longer than 0, got \"0s\"");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"status\"\n[fault.when]\nfrom = \"5\"\n"),
              "rules.toml:4:8: [fault.when]: from: bad duration \"5\": missing unit (ns, us, ms, s, m, h)");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"status\"\n[fault.when]\nevery = 0\n"),
              "rules.toml:4:9: [fault.when]: every: must be at least 1, got 0");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"status\"\n[fault.when]\nprobabilty = 0.5\n"),
              "rules.toml:4:1: [fault.when]: unknown key \"probabilty\"; allowed: attempts, barrier, barrier_timeout, "
              "every, first, for, from, probability");
}

TEST(rule_format, names_are_addressable_path_segments) {
    // Each of these could be added but never deleted: DELETE /__faultline/rules/{name} cannot name it.
    for (const char* bad : {"what?", "a/b", "a#b", "50%", "two words", "tab\\t", "\\u0001"}) {
        const std::string text = std::string{"[[fault]]\nkind = \"close\"\nname = \""} + bad + "\"\n";
        const std::string error = one_error(text);
        EXPECT_NE(error.find("rules.toml:3:8: fault rule: name: may hold only A-Z a-z 0-9 . _ : -"), std::string::npos)
            << bad << ": " << error;
    }
    EXPECT_EQ(one_error("[[fault]]\nkind = \"close\"\nname = \"" + std::string(129, 'a') + "\"\n"),
              "rules.toml:3:8: fault rule: name: must be 1 to 128 characters long, got 129");
    EXPECT_EQ(one_rule("[[fault]]\nkind = \"close\"\nname = \"api:v1.slow_path-2\"\n").name, "api:v1.slow_path-2");
    EXPECT_TRUE(rule_name_problem(std::string(128, 'z')).empty());
}

TEST(rule_format, waits_longer_than_max_fault_wait_are_errors_at_their_key) {
    // 2562047h fits in int64 nanoseconds, so it parses as a duration; the server must not wait it.
    EXPECT_EQ(one_error("[[fault]]\nkind = \"delay\"\nwait = \"2562047h\"\n"),
              "rules.toml:3:8: fault kind \"delay\": wait: must be at most [server] max_fault_wait = 1h, got 2562047h");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"hang\"\nlimit = \"61m\"\n"),
              "rules.toml:3:9: fault kind \"hang\": limit: must be at most [server] max_fault_wait = 1h, got 61m");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"delay\"\ndistribution = \"uniform\"\nmin = \"1s\"\nmax = \"2h\"\n"),
              "rules.toml:5:7: fault kind \"delay\": max: must be at most [server] max_fault_wait = 1h, got 2h");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"lost_response\"\nthen = \"hang\"\nhang_limit = \"2h\"\n"),
              "rules.toml:4:14: fault kind \"lost_response\": hang_limit: must be at most [server] max_fault_wait = 1h, "
              "got 2h");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"overload\"\nrate = 1.0\nexcess = \"queue\"\nmax_queue_wait = \"3h\"\n"),
              "rules.toml:5:18: fault kind \"overload\": max_queue_wait: must be at most [server] max_fault_wait = 1h, "
              "got 3h");
    // A lower limit reaches the defaults too (a hang's 30 s).
    const auto low = parse_rules_text("[[fault]]\nkind = \"hang\"\n", "rules.toml", {std::chrono::seconds{10}});
    ASSERT_EQ(low.errors.size(), 1U);
    EXPECT_EQ(low.errors[0].to_string(),
              "rules.toml:1:1: fault kind \"hang\": limit: must be at most [server] max_fault_wait = 10s, got 30s");
    const auto barrier = parse_rules_text(
        "[[fault]]\nkind = \"close\"\n[fault.when]\nbarrier = 2\nbarrier_timeout = \"20s\"\n", "rules.toml",
        {std::chrono::seconds{10}});
    ASSERT_EQ(barrier.errors.size(), 1U);
    EXPECT_NE(barrier.errors[0].to_string().find("rules.toml:5:19: [fault.when]: barrier_timeout: must be at most"),
              std::string::npos)
        << barrier.errors[0].to_string();
    // Built rules are checked the same way, naming where they came from.
    const rule hang = one_rule("[[fault]]\nname = \"h\"\nkind = \"hang\"\nlimit = \"20s\"\n");
    const auto problems = wait_problems(hang, {std::chrono::seconds{10}});
    ASSERT_EQ(problems.size(), 1U);
    EXPECT_EQ(problems[0], "rules.toml:1:1: fault rule \"h\": limit = 20s is longer than [server] max_fault_wait = 10s");
    EXPECT_TRUE(wait_problems(hang, {}).empty());
}

TEST(rule_format, file_level_errors) {
    EXPECT_EQ(one_error("fault = 1\n"),
              "rules.toml:1:9: fault: expected an array of tables ([[fault]]), got an integer");
    EXPECT_EQ(one_error("seed = 1\n"),
              "rules.toml:1:1: rules file: unknown key \"seed\"; allowed: fault");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"status\"\nname = \"a\"\n[[fault]]\nkind = \"close\"\nname = \"a\"\n"),
              "rules.toml:4:1: duplicate fault rule name \"a\" (first defined at rules.toml:1:1)");
    const std::string syntax = one_error("[[fault]]\nkind = \n");
    EXPECT_EQ(syntax.rfind("rules.toml:2:", 0), 0U) << syntax;
}

TEST(rule_format, collects_every_error_and_keeps_the_good_rules) {
    const rules_result result = parse(R"([[fault]]
kind = "status"
status = 99
[[fault]]
kind = "delay"
wait = "1s"
[[fault]]
kind = "nope"
)");
    EXPECT_EQ(result.errors.size(), 2U) << messages(result);
    ASSERT_EQ(result.rules.size(), 1U);
    EXPECT_EQ(result.rules[0].name, "delay-2");
}

// A rules file read from disk as `faultline serve --rules` does: config::load_document reads it, and
// its [[fault]] tables go to parse_rules.
rules_result load_rules(const std::string& path) {
    config::document document = config::load_document(path, "rules file");
    rules_result result;
    if (!document.table) {
        result.errors = std::move(document.errors);
    } else if (const toml::node* faults = document.table->get("fault")) {
        result = parse_rules(*faults, path);
    }
    return result;
}

TEST(rule_format, a_missing_file_is_an_error) {
    const rules_result result = load_rules("/nonexistent/faultline-rules.toml");
    ASSERT_EQ(result.errors.size(), 1U);
    EXPECT_EQ(result.errors[0].to_string(), "/nonexistent/faultline-rules.toml: cannot read the rules file");
}

TEST(rule_json, parses_like_a_fault_table) {
    const rules_result result = parse_rule_json(boost::json::parse(
        R"({"name":"slow","kind":"delay","wait":"20ms","match":{"method":["GET"]},"when":{"attempts":[1]}})"));
    ASSERT_TRUE(result.ok()) << messages(result);
    ASSERT_EQ(result.rules.size(), 1U);
    EXPECT_EQ(result.rules[0].name, "slow");
    EXPECT_EQ(result.rules[0].match.methods, std::vector<std::string>{"GET"});
    EXPECT_EQ(result.rules[0].when.attempts, std::vector<std::uint32_t>{1});
    EXPECT_EQ(result.rules[0].source.at("wait"), "20ms");
}

TEST(rule_json, errors_name_the_key) {
    EXPECT_EQ(parse_rule_json(boost::json::parse(R"({"kind":"delay","wait":5})")).errors.at(0).to_string(),
              "fault kind \"delay\": wait: expected a duration such as \"250ms\", got an integer");
    EXPECT_EQ(parse_rule_json(boost::json::parse(R"({"kind":"delay","wait":null})")).errors.at(0).to_string(),
              "wait: null is not allowed");
    EXPECT_EQ(parse_rule_json(boost::json::parse("[1]")).errors.at(0).to_string(),
              "a fault rule must be a JSON object with the keys of a [[fault]] table");
}

}  // namespace
}  // namespace faultline::faults
