// The proxy set (proxy_set.hpp) through its control API on real sockets: proxies created, listed,
// described and deleted at runtime, each one's own control API under /__faultline/proxies/{name}/,
// bad requests answered with their status, a config file's [[proxy]] tables, and the Toxiproxy-style
// round: two proxies in front of one real upstream, a rule added to one mid-test, seen acting, removed,
// seen gone, and the round read back from that proxy's journal.
#include "faultline/server/proxy_set.hpp"

#include "server_fixture.hpp"
#include "test_client.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace faultline::server::testing {
namespace {

namespace json = boost::json;

// A started set with no token (each test reaches it on loopback only).
class set_fixture {
public:
    explicit set_fixture(proxy_set_options options = no_token()) : set_{std::move(options)} {
        if (const auto ec = set_.start()) throw std::runtime_error{"proxy set did not start: " + ec.message()};
    }
    static proxy_set_options no_token() {
        proxy_set_options options;
        options.control_token = std::string{};
        options.seed = 11;
        return options;
    }
    proxy_set& set() { return set_; }
    std::uint16_t control() const { return set_.control_port(); }

    // POST /__faultline/proxies with `body`; the created proxy's port, or 0.
    std::uint16_t create(const std::string& body) {
        const control_reply reply = control_call(control(), "POST", "proxies", {}, body);
        EXPECT_EQ(reply.status, 201) << reply.body;
        if (reply.status != 201) return 0;
        const std::string listen{json::parse(reply.body).at("listen").as_string()};
        return static_cast<std::uint16_t>(std::stoi(listen.substr(listen.rfind(':') + 1)));
    }

private:
    proxy_set set_;
};

std::string definition(std::string_view name, std::uint16_t upstream, std::string_view extra = {}) {
    return R"({"name":")" + std::string{name} + R"(","upstream":"127.0.0.1:)" + std::to_string(upstream) + '"' +
           std::string{extra} + "}";
}

std::string error_of(const control_reply& reply) {
    const json::value body = json::parse(reply.body);
    return std::string{body.at("error").as_string()};
}

TEST(proxy_set, starts_with_no_proxies_and_answers_health) {
    set_fixture f;
    const control_reply health = control_call(f.control(), "GET", "health");
    EXPECT_EQ(health.status, 200);
    EXPECT_EQ(health.body, R"({"status":"ok","proxies":0})");
    EXPECT_EQ(control_call(f.control(), "GET", "proxies").body, R"({"proxies":[]})");
}

TEST(proxy_set, a_proxy_created_at_runtime_forwards_is_listed_and_is_gone_once_deleted) {
    test_server upstream{""};
    set_fixture f;
    const std::uint16_t port = f.create(definition("api", upstream.port()));
    ASSERT_NE(port, 0);
    const int direct = status_of(upstream.port(), "GET", "/kv/a");
    ASSERT_NE(direct, 0);
    EXPECT_EQ(status_of(port, "GET", "/kv/a"), direct);

    const std::string listen = "127.0.0.1:" + std::to_string(port);
    const std::string described = R"({"name":"api","mode":"http","listen":")" + listen + R"(","url":"http://)" +
                                  listen + R"(","upstream":"127.0.0.1:)" + std::to_string(upstream.port()) + R"("})";
    EXPECT_EQ(control_call(f.control(), "GET", "proxies/api").body, described);
    EXPECT_EQ(control_call(f.control(), "GET", "proxies").body, R"({"proxies":[)" + described + "]}");

    const control_reply deleted = control_call(f.control(), "DELETE", "proxies/api");
    EXPECT_EQ(deleted.status, 200) << deleted.body;
    EXPECT_EQ(control_call(f.control(), "GET", "proxies/api").status, 404);
    EXPECT_EQ(control_call(f.control(), "GET", "proxies").body, R"({"proxies":[]})");
    EXPECT_EQ(control_call(f.control(), "DELETE", "proxies/api").status, 404);
    // The name is free again at once.
    EXPECT_NE(f.create(definition("api", upstream.port())), 0);
}

TEST(proxy_set, bad_requests_get_a_message_and_their_own_status) {
    test_server upstream{""};
    set_fixture f;
    const std::uint16_t port = f.create(definition("one", upstream.port()));
    ASSERT_NE(port, 0);

    const control_reply bad_json = control_call(f.control(), "POST", "proxies", {}, "{name:");
    EXPECT_EQ(bad_json.status, 400);
    EXPECT_TRUE(error_of(bad_json).starts_with("bad JSON body")) << bad_json.body;
    EXPECT_EQ(control_call(f.control(), "POST", "proxies", {}, "[1]").status, 400);

    const control_reply no_upstream = control_call(f.control(), "POST", "proxies", {}, R"({"name":"x"})");
    EXPECT_EQ(no_upstream.status, 400);
    EXPECT_NE(no_upstream.body.find("upstream"), std::string::npos) << no_upstream.body;

    const control_reply bad_upstream =
        control_call(f.control(), "POST", "proxies", {}, R"({"name":"x","upstream":"nowhere"})");
    EXPECT_EQ(bad_upstream.status, 400);
    EXPECT_NE(bad_upstream.body.find("HOST:PORT"), std::string::npos) << bad_upstream.body;

    const control_reply unknown_key =
        control_call(f.control(), "POST", "proxies", {}, definition("x", upstream.port(), R"(,"colour":"red")"));
    EXPECT_EQ(unknown_key.status, 400);
    EXPECT_NE(unknown_key.body.find("colour"), std::string::npos) << unknown_key.body;

    const control_reply journal_file = control_call(f.control(), "POST", "proxies", {},
                                                    definition("x", upstream.port(), R"(,"journal":"/tmp/x.jsonl")"));
    EXPECT_EQ(journal_file.status, 400);
    EXPECT_TRUE(error_of(journal_file).starts_with("journal: a journal file is named in --config only"))
        << journal_file.body;

    const control_reply bad_name = control_call(f.control(), "POST", "proxies", {}, definition("a/b", upstream.port()));
    EXPECT_EQ(bad_name.status, 400) << bad_name.body;

    const control_reply not_loopback = control_call(f.control(), "POST", "proxies", {},
                                                    definition("x", upstream.port(), R"(,"listen":"0.0.0.0:0")"));
    EXPECT_EQ(not_loopback.status, 400);
    EXPECT_NE(not_loopback.body.find("--allow-non-loopback"), std::string::npos) << not_loopback.body;

    const control_reply duplicate = control_call(f.control(), "POST", "proxies", {}, definition("one", upstream.port()));
    EXPECT_EQ(duplicate.status, 409);
    EXPECT_EQ(error_of(duplicate), "a proxy named 'one' exists already");

    const control_reply busy = control_call(
        f.control(), "POST", "proxies", {},
        definition("two", upstream.port(), R"(,"listen":"127.0.0.1:)" + std::to_string(port) + '"'));
    EXPECT_EQ(busy.status, 409);
    EXPECT_NE(error_of(busy).find("cannot listen on 127.0.0.1:" + std::to_string(port)), std::string::npos)
        << busy.body;

    EXPECT_EQ(control_call(f.control(), "GET", "proxies/nobody").status, 404);
    EXPECT_EQ(control_call(f.control(), "GET", "proxies/nobody/rules").status, 404);
    EXPECT_EQ(control_call(f.control(), "PUT", "proxies").status, 405);
    EXPECT_EQ(control_call(f.control(), "POST", "proxies/one").status, 405);
    EXPECT_EQ(control_call(f.control(), "GET", "rules").status, 404);
    // None of it left a proxy behind, nor stopped the one there is.
    EXPECT_EQ(json::parse(control_call(f.control(), "GET", "proxies").body).at("proxies").as_array().size(), 1U);
    EXPECT_EQ(status_of(port, "GET", "/kv/a"), status_of(upstream.port(), "GET", "/kv/a"));
}

TEST(proxy_set, the_control_port_keeps_serves_access_rules) {
    proxy_set_options options = set_fixture::no_token();
    options.control_token = "sesame";
    set_fixture f{options};
    EXPECT_EQ(control_call(f.control(), "GET", "proxies").status, 401);
    EXPECT_EQ(control_call(f.control(), "GET", "proxies", "wrong").status, 403);
    EXPECT_EQ(control_call(f.control(), "GET", "proxies", "sesame").status, 200);
    const auto foreign = exchange(f.control(), make_request("GET", "/__faultline/proxies", {},
                                                            {{"Origin", "http://evil.example"}, {"Authorization", "Bearer sesame"}}))
                             .parsed();
    ASSERT_TRUE(foreign);
    EXPECT_EQ(foreign->result_int(), 403U);
}

// The issue's done-test, Toxiproxy's workflow: two proxies made at runtime in front of one real
// upstream, a rule added to one mid-test acts on it alone, is removed, and the round's journal says so.
TEST(proxy_set, toxiproxy_style_round_two_proxies_a_rule_added_and_removed_mid_test) {
    test_server upstream{""};
    set_fixture f;
    const std::uint16_t api = f.create(definition("api", upstream.port()));
    const std::uint16_t web = f.create(definition("web", upstream.port()));
    ASSERT_NE(api, 0);
    ASSERT_NE(web, 0);
    const int healthy = status_of(upstream.port(), "GET", "/kv/x");
    ASSERT_NE(healthy, 0);
    ASSERT_NE(healthy, 503);
    EXPECT_EQ(status_of(api, "GET", "/kv/1"), healthy);

    const control_reply added = control_call(f.control(), "POST", "proxies/api/rules", {},
                                             R"({"name":"down","kind":"status","status":503})");
    EXPECT_EQ(added.status, 201) << added.body;
    EXPECT_EQ(control_call(f.control(), "GET", "proxies/web/rules").body, R"({"rules":[]})");
    EXPECT_EQ(status_of(api, "GET", "/kv/2"), 503);
    EXPECT_EQ(status_of(api, "GET", "/kv/3"), 503);
    EXPECT_EQ(status_of(web, "GET", "/kv/4"), healthy);  // the other proxy has no rule

    EXPECT_EQ(control_call(f.control(), "DELETE", "proxies/api/rules/down").status, 200);
    EXPECT_EQ(control_call(f.control(), "GET", "proxies/api/rules").body, R"({"rules":[]})");
    EXPECT_EQ(status_of(api, "GET", "/kv/5"), healthy);

    const control_reply journal = control_until(f.control(), "proxies/api/journal", {}, [](const control_reply& r) {
        return r.status == 200 && parse_journal_lines(r.body).attempts.size() >= 4;
    });
    ASSERT_EQ(journal.status, 200) << journal.body;
    const journal_lines lines = parse_journal_lines(journal.body);
    std::vector<std::string> targets;
    std::vector<std::string> fired;
    for (const json::object& attempt : lines.attempts) {
        targets.emplace_back(attempt.at("target").as_string());
        EXPECT_EQ(attempt.at("instance").as_string(), "api");
        if (attempt.at("rule").as_string() == "down") fired.emplace_back(attempt.at("target").as_string());
    }
    EXPECT_EQ(targets, (std::vector<std::string>{"/kv/1", "/kv/2", "/kv/3", "/kv/5"}));
    EXPECT_EQ(fired, (std::vector<std::string>{"/kv/2", "/kv/3"}));
    EXPECT_EQ(lines.events, (std::vector<std::string>{"started", "rule_added", "rule_removed"}));

    // The other proxy's journal is its own: one attempt, nothing fired, no rule events.
    const control_reply web_journal = control_until(f.control(), "proxies/web/journal", {}, [](const control_reply& r) {
        return r.status == 200 && !parse_journal_lines(r.body).attempts.empty();
    });
    const journal_lines web_lines = parse_journal_lines(web_journal.body);
    ASSERT_EQ(web_lines.attempts.size(), 1U);
    EXPECT_EQ(web_lines.attempts.front().at("rule").as_string(), "");
    EXPECT_EQ(web_lines.events, (std::vector<std::string>{"started"}));

    // Each proxy's stats and reset are its own too.
    const json::value stats = json::parse(control_call(f.control(), "GET", "proxies/api/stats").body);
    EXPECT_EQ(stats.at("server").at("attempts").to_number<int>(), 4);
    EXPECT_EQ(control_call(f.control(), "POST", "proxies/api/reset").body, R"({"reset":true,"round":2})");
    const json::value web_health = json::parse(control_call(f.control(), "GET", "proxies/web/health").body);
    EXPECT_EQ(web_health.at("round").to_number<int>(), 1);
}

// A created proxy takes a [server] table as a rules file's: its routes say what commits, so a reply
// lost after the upstream committed, and the client's retry, are two committed effects of one
// operation — what no_double_effects judges. With no route for it (service "empty"), nothing commits.
TEST(proxy_set, a_created_proxys_server_routes_say_what_commits) {
    test_server upstream{""};
    set_fixture f;
    const std::string lose_first =
        R"(,"fault":[{"name":"lost","kind":"lost_response","then":"reset","match":{"method":"POST"},"when":{"attempts":[1]}}])";
    const std::string routes =
        R"(,"server":{"service":"empty","identity_header":"X-Request-Id",)"
        R"("endpoint":[{"method":"POST","path":"/payments","effect":"non_idempotent"}]})";
    const std::uint16_t routed = f.create(definition("routed", upstream.port(), routes + lose_first));
    const std::uint16_t plain = f.create(definition("plain", upstream.port(), R"(,"server":{"service":"empty"})" + lose_first));
    ASSERT_NE(routed, 0);
    ASSERT_NE(plain, 0);
    for (const std::uint16_t port : {routed, plain}) {
        const header_pairs id{{"X-Request-Id", "op-1"}};
        EXPECT_FALSE(exchange(port, make_request("POST", "/payments", R"({"amount":1})", id)).parsed());  // lost
        const auto retried = exchange(port, make_request("POST", "/payments", R"({"amount":1})", id));
        ASSERT_TRUE(retried.parsed()) << retried.bytes;
        EXPECT_EQ(retried.parsed()->result_int() / 100, 2);
    }
    const auto effects = [&](std::string_view proxy) {
        const control_reply journal = control_until(f.control(), "proxies/" + std::string{proxy} + "/journal", {},
                                                    [](const control_reply& r) {
                                                        return r.status == 200 &&
                                                               parse_journal_lines(r.body).attempts.size() >= 2;
                                                    });
        std::vector<std::string> out;
        for (const json::object& attempt : parse_journal_lines(journal.body).attempts) {
            out.emplace_back(attempt.at("effect").as_string());
        }
        return out;
    };
    EXPECT_EQ(effects("routed"), (std::vector<std::string>{"committed", "committed"}));
    EXPECT_EQ(effects("plain"), (std::vector<std::string>{"none", "none"}));

    const control_reply bad = control_call(f.control(), "POST", "proxies", {},
                                           definition("bad", upstream.port(), R"(,"server":{"service":"everything"})"));
    EXPECT_EQ(bad.status, 400);
    EXPECT_NE(bad.body.find("service"), std::string::npos) << bad.body;
}

TEST(proxy_set, a_config_files_proxy_tables_make_the_proxies_with_their_rules) {
    test_server upstream{""};
    set_fixture f;
    const std::string config = "[[proxy]]\nname = \"slow\"\nupstream = \"127.0.0.1:" + std::to_string(upstream.port()) +
                               "\"\n[[proxy.fault]]\nname = \"teapot\"\nkind = \"status\"\nstatus = 418\n"
                               "[[proxy]]\nname = \"plain\"\nupstream = \"127.0.0.1:" +
                               std::to_string(upstream.port()) + "\"\n";
    const create_result made = f.set().create_all(config, "proxies.toml");
    ASSERT_TRUE(made.ok()) << (made.errors.empty() ? "" : made.errors.front());
    ASSERT_TRUE(f.set().find("slow"));
    ASSERT_TRUE(f.set().find("plain"));
    EXPECT_EQ(status_of(f.set().find("slow")->port(), "GET", "/kv/a"), 418);
    EXPECT_NE(status_of(f.set().find("plain")->port(), "GET", "/kv/a"), 418);

    const create_result bad = f.set().create_all("[[proxy]]\nname = \"x\"\nupstream = \"127.0.0.1:1\"\nmode = \"udp\"\n",
                                                 "bad.toml");
    ASSERT_FALSE(bad.ok());
    ASSERT_EQ(bad.failure, create_failure::invalid);
    EXPECT_TRUE(bad.errors.front().starts_with("bad.toml:4:")) << bad.errors.front();
    EXPECT_FALSE(f.set().create_all("[[proxies]]\n", "typo.toml").ok());
}

TEST(proxy_set, deleting_a_proxy_answers_before_its_held_connections_drain) {
    test_server upstream{""};
    set_fixture f;
    const std::uint16_t port = f.create(definition("held", upstream.port(), R"(,"fault":[{"name":"slow","kind":"delay","wait":"30s"}])"));
    ASSERT_NE(port, 0);
    boost::asio::io_context io;
    boost::asio::ip::tcp::socket held{io};
    held.connect({boost::asio::ip::make_address("127.0.0.1"), port});
    boost::asio::write(held, boost::asio::buffer(make_request("GET", "/kv/slow")));
    // The proxy holds the request once its rule has fired.
    const control_reply counted = control_until(f.control(), "proxies/held/stats", {}, [](const control_reply& r) {
        return r.status == 200 && r.body.find(R"("slow":1)") != std::string::npos;
    });
    ASSERT_NE(counted.body.find(R"("slow":1)"), std::string::npos) << counted.body;

    EXPECT_EQ(control_call(f.control(), "DELETE", "proxies/held").status, 200);
    // The held connection is still open when the DELETE is answered: the proxy drains it (up to its
    // drain time, 1 s) on the set's stopping thread, not on the control port's.
    held.non_blocking(true);
    std::array<char, 64> byte{};
    boost::system::error_code ec;
    held.read_some(boost::asio::buffer(byte), ec);
    EXPECT_EQ(ec, boost::asio::error::would_block) << ec.message();
    // And the control port answers meanwhile.
    EXPECT_EQ(control_call(f.control(), "GET", "proxies").body, R"({"proxies":[]})");
}

}  // namespace
}  // namespace faultline::server::testing
