// The reverse proxy on loopback: a real upstream (the built-in server with no rules, a Beast/Asio
// service whose ledger tells what it committed), the proxy in front of it, a raw client in front of
// that. Each commit phase is judged by what the upstream committed, not by what the proxy says.
#include "scripted_upstream.hpp"
#include "server_fixture.hpp"
#include "test_client.hpp"

#include "faultline/record/journal_merge.hpp"
#include "faultline/server/proxy.hpp"

#include <boost/asio/error.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>

#include <gtest/gtest.h>

#include <poll.h>

#include <algorithm>
#include <memory>
#include <stdexcept>

namespace faultline::server::testing {
namespace {

using namespace std::chrono_literals;
namespace asio = boost::asio;

// A proxy for one test: rules from a TOML string (the format of `faultline proxy --rules`), in front
// of 127.0.0.1:upstream_port.
class test_proxy {
public:
    test_proxy(std::string_view rules_toml, std::uint16_t upstream_port, proxy_options options = {}) {
        auto parsed = parse_serve_config(rules_toml, "proxy.toml");
        if (!parsed.ok()) throw std::invalid_argument{"bad test rules: " + parsed.errors.front().to_string()};
        context_ = std::make_unique<server_context>(parsed.config->model, std::move(parsed.config->rules), 7);
        options.upstream_port = upstream_port;
        proxy_ = std::make_unique<proxy>(*context_, options);
        if (const auto ec = proxy_->start()) throw std::runtime_error{"proxy did not start: " + ec.message()};
    }

    std::uint16_t port() const { return proxy_->port(); }
    proxy& engine() { return *proxy_; }
    server_context& context() { return *context_; }
    std::vector<record::journal_record> journal() {
        proxy_->stop();
        return context_->records.snapshot();
    }
    std::vector<record::wire_detail> wire() {
        proxy_->stop();
        return context_->records.wire_snapshot();
    }

private:
    std::unique_ptr<server_context> context_;
    std::unique_ptr<proxy> proxy_;
};

std::string rule(std::string_view kind_and_keys, std::string_view path = "/*") {
    return "[[fault]]\nname = \"r\"\n" + std::string{kind_and_keys} + "\n[fault.match]\npath = \"" +
           std::string{path} + "\"\n";
}

// A port nothing listens on: bound, then closed.
std::uint16_t closed_port() {
    asio::io_context io;
    asio::ip::tcp::acceptor acceptor{io, {asio::ip::make_address("127.0.0.1"), 0}};
    const auto port = acceptor.local_endpoint().port();
    acceptor.close();
    return port;
}

template <class Entry>
Entry only(const std::vector<Entry>& entries) {
    EXPECT_EQ(entries.size(), 1U);
    return entries.empty() ? Entry{} : entries.front();
}

// The proxy listens on the same listener as `serve`: a listener-level fault closes its port too.
TEST(proxy, refuse_closed_port_refuses_connects_to_the_proxy) {
    test_proxy p{"[[fault]]\nname = \"closed\"\nkind = \"refuse\"\nhow = \"closed_port\"\n", closed_port()};
    const auto refused = exchange(p.port(), make_request("GET", "/x"));
    EXPECT_EQ(refused.connect_error, asio::error::connection_refused) << refused.connect_error.message();
    EXPECT_TRUE(p.journal().empty());
    const auto events = p.context().records.events();
    EXPECT_TRUE(std::any_of(events.begin(), events.end(), [](const record::server_event& e) {
        return e.kind == record::server_event_kind::listener_closed && e.rule == "closed";
    }));
}

TEST(proxy, forwards_the_upstream_reply_and_journals_its_status_and_time) {
    test_server upstream{""};
    test_proxy p{"", upstream.port()};
    const auto reply = exchange(p.port(), make_request("POST", "/payments", R"({"amount":7})"));
    const auto parsed = reply.parsed();
    ASSERT_TRUE(parsed);
    EXPECT_EQ(parsed->result_int(), 201);
    EXPECT_NE(parsed->body().find("\"amount\":7"), std::string::npos);
    EXPECT_EQ(upstream.context().model.charge_count(), 1U);
    const auto r = only(p.journal());
    const auto w = only(p.wire());
    EXPECT_EQ(r.status, 201);
    EXPECT_EQ(w.upstream_status, 201);
    ASSERT_TRUE(w.upstream_ns);
    EXPECT_GT(*w.upstream_ns, 0);
    EXPECT_FALSE(w.upstream_error);
    // POST /payments is non-idempotent in the declared (here: default) routes, and the upstream said 2xx.
    EXPECT_EQ(r.effect, record::effect_kind::committed);
    EXPECT_EQ(p.context().effects.size(), 1U);
}

TEST(proxy, a_read_or_a_failed_write_commits_nothing) {
    test_server upstream{""};
    test_proxy p{"", upstream.port()};
    EXPECT_EQ(exchange(p.port(), make_request("GET", "/payments/ch_1")).parsed()->result_int(), 404);
    EXPECT_EQ(exchange(p.port(), make_request("POST", "/payments", "not json")).parsed()->result_int(), 400);
    const auto journal = p.journal();
    const auto wire = p.wire();
    ASSERT_EQ(wire.size(), 2U);
    ASSERT_EQ(journal.size(), 2U);
    EXPECT_EQ(wire[0].upstream_status, 404);
    EXPECT_EQ(wire[1].upstream_status, 400);
    for (const auto& r : journal) EXPECT_EQ(r.effect, record::effect_kind::none);
    EXPECT_EQ(p.context().effects.size(), 0U);
}

TEST(proxy, a_fault_before_commit_never_reaches_the_upstream) {
    test_server upstream{""};
    test_proxy p{rule("kind = \"reset\""), upstream.port()};
    const auto reply = exchange(p.port(), make_request("POST", "/payments", R"({"amount":5})"));
    EXPECT_TRUE(reply.was_reset());
    EXPECT_EQ(upstream.context().model.charge_count(), 0U);
    EXPECT_TRUE(upstream.journal().empty());
    const auto r = only(p.journal());
    const auto w = only(p.wire());
    EXPECT_EQ(r.outcome, record::wire_outcome::reset);
    EXPECT_EQ(r.effect, record::effect_kind::none);
    EXPECT_FALSE(w.upstream_status);
}

TEST(proxy, a_lost_response_is_committed_upstream_and_never_delivered) {
    test_server upstream{""};
    test_proxy p{rule("kind = \"lost_response\"\nthen = \"reset\""), upstream.port()};
    const auto reply = exchange(p.port(), make_request("POST", "/payments", R"({"amount":5})"));
    EXPECT_TRUE(reply.was_reset());
    EXPECT_TRUE(reply.bytes.empty());
    EXPECT_EQ(upstream.context().model.charge_count(), 1U);
    const auto r = only(p.journal());
    const auto w = only(p.wire());
    EXPECT_EQ(r.outcome, record::wire_outcome::reset);
    EXPECT_EQ(r.effect, record::effect_kind::committed);
    EXPECT_EQ(w.upstream_status, 201);
}

TEST(proxy, a_status_after_commit_replaces_the_upstream_reply) {
    test_server upstream{""};
    test_proxy p{rule("kind = \"status\"\nstatus = 503\nphase = \"after\""), upstream.port()};
    const auto reply = exchange(p.port(), make_request("POST", "/payments", R"({"amount":5})"));
    ASSERT_TRUE(reply.parsed());
    EXPECT_EQ(reply.parsed()->result_int(), 503);
    EXPECT_EQ(upstream.context().model.charge_count(), 1U);
    const auto r = only(p.journal());
    const auto w = only(p.wire());
    EXPECT_EQ(r.status, 503);
    EXPECT_EQ(w.upstream_status, 201);
    EXPECT_EQ(r.effect, record::effect_kind::committed);
}

TEST(proxy, a_status_before_commit_is_answered_by_the_proxy_alone) {
    test_server upstream{""};
    test_proxy p{rule("kind = \"status\"\nstatus = 503"), upstream.port()};
    EXPECT_EQ(exchange(p.port(), make_request("POST", "/payments", R"({"amount":5})")).parsed()->result_int(), 503);
    EXPECT_EQ(upstream.context().model.charge_count(), 0U);
    EXPECT_EQ(only(p.journal()).effect, record::effect_kind::none);
}

TEST(proxy, truncate_cuts_the_upstream_reply_short) {
    test_server upstream{""};
    test_proxy p{rule("kind = \"truncate\"\nbody_bytes = 3"), upstream.port()};
    const auto reply = exchange(p.port(), make_request("POST", "/payments", R"({"amount":5})"));
    EXPECT_FALSE(reply.parsed());
    EXPECT_NE(reply.bytes.find("201"), std::string::npos);
    EXPECT_EQ(upstream.context().model.charge_count(), 1U);
    EXPECT_EQ(only(p.journal()).outcome, record::wire_outcome::truncated);
}

TEST(proxy, a_refused_upstream_is_a_502_and_journaled) {
    test_proxy p{"", closed_port()};
    const auto reply = exchange(p.port(), make_request("GET", "/x"));
    ASSERT_TRUE(reply.parsed());
    EXPECT_EQ(reply.parsed()->result_int(), 502);
    const auto r = only(p.journal());
    const auto w = only(p.wire());
    EXPECT_EQ(r.status, 502);
    EXPECT_EQ(w.upstream_error, "refused");
    EXPECT_FALSE(w.upstream_status);
    EXPECT_EQ(p.engine().counters().upstream_failures, 1U);
}

TEST(proxy, an_upstream_slower_than_the_timeout_is_a_504) {
    test_server upstream{rule("kind = \"delay\"\nwait = \"2s\"")};
    proxy_options options;
    options.upstream_timeout = 100ms;
    test_proxy p{"", upstream.port(), options};
    const auto reply = exchange(p.port(), make_request("GET", "/x"));
    ASSERT_TRUE(reply.parsed());
    EXPECT_EQ(reply.parsed()->result_int(), 504);
    const auto w = only(p.wire());
    EXPECT_EQ(w.upstream_error, "timeout");
    ASSERT_TRUE(w.upstream_ns);
    EXPECT_GE(*w.upstream_ns, 100'000'000);
}

// Pipelined requests in one write: each is parsed from what the proxy already buffered, forwarded and
// answered in order.
TEST(proxy, pipelined_requests_are_answered_in_order) {
    test_server upstream{""};
    test_proxy p{"", upstream.port()};
    connection client{p.port()};
    ASSERT_TRUE(client.connected());
    std::string both = make_request("GET", "/kv/a", {}, {}, true) + make_request("GET", "/kv/b", {}, {}, true);
    const auto first = client.round_trip(both);
    ASSERT_TRUE(first.parsed());
    EXPECT_EQ(first.parsed()->result_int(), 404);
    const auto second = client.read_response();
    ASSERT_TRUE(second.parsed());
    EXPECT_EQ(second.parsed()->result_int(), 404);
    const auto journal = p.journal();
    ASSERT_EQ(journal.size(), 2U);
    EXPECT_EQ(journal[0].target, "/kv/a");
    EXPECT_EQ(journal[1].target, "/kv/b");
    EXPECT_EQ(journal[1].connection_request, 2U);
}

// The read deadlines are the session watchdog's (no timer per request): a client that sends nothing
// is closed after header_timeout, and no attempt is journaled.
TEST(proxy, a_client_that_sends_nothing_is_closed_after_the_header_timeout) {
    test_server upstream{""};
    test_proxy p{"[server]\nheader_timeout = \"50ms\"\n", upstream.port()};
    const auto reply = exchange(p.port(), "", 3000ms);
    EXPECT_FALSE(reply.timed_out);
    EXPECT_EQ(reply.read_error, asio::error::eof);
    EXPECT_TRUE(reply.bytes.empty());
    EXPECT_TRUE(p.journal().empty());
}

// An upstream whose accept queue is full drops the proxy's SYN, so the connect hangs: past
// connect_timeout the attempt is a 502 with upstream_error "connect_timeout", long before the
// upstream_timeout.
TEST(proxy, an_upstream_connect_that_hangs_is_a_502_after_the_connect_timeout) {
    asio::io_context io;
    asio::ip::tcp::acceptor full{io};
    const asio::ip::tcp::endpoint loopback{asio::ip::make_address("127.0.0.1"), 0};
    full.open(loopback.protocol());
    full.bind(loopback);
    full.listen(0);  // one queued connection fills it; never accepted
    asio::ip::tcp::socket filler{io};
    filler.connect(full.local_endpoint());
    proxy_options options;
    options.connect_timeout = 100ms;
    options.upstream_timeout = 5s;
    test_proxy p{"", full.local_endpoint().port(), options};
    const auto reply = exchange(p.port(), make_request("GET", "/x"), 4000ms);
    ASSERT_TRUE(reply.parsed());
    EXPECT_EQ(reply.parsed()->result_int(), 502);
    const auto w = only(p.wire());
    EXPECT_EQ(w.upstream_error, "connect_timeout");
    ASSERT_TRUE(w.upstream_ns);
    EXPECT_GE(*w.upstream_ns, 100'000'000);
    EXPECT_LT(*w.upstream_ns, 4'000'000'000);
}

TEST(proxy, upstream_connections_are_kept_alive_and_reused) {
    test_server upstream{""};
    test_proxy p{"", upstream.port()};
    connection client{p.port()};
    ASSERT_TRUE(client.connected());
    for (int i = 0; i < 5; ++i) {
        const auto reply = client.round_trip(make_request("GET", "/x", {}, {}, true));
        ASSERT_TRUE(reply.parsed());
        EXPECT_EQ(reply.parsed()->result_int(), 200);
    }
    EXPECT_EQ(p.engine().counters().forwarded, 5U);
    EXPECT_EQ(p.engine().counters().upstream_connects, 1U);
    EXPECT_EQ(upstream.engine().counters().connections, 1U);
}

TEST(proxy, an_upstream_that_closed_a_pooled_connection_gets_the_request_on_a_new_one) {
    // The upstream closes kept-alive connections after 50 ms idle; the proxy's pooled one is then dead.
    test_server upstream{"[server]\nidle_timeout = \"50ms\"\n"};
    test_proxy p{"", upstream.port()};
    EXPECT_EQ(exchange(p.port(), make_request("GET", "/x")).parsed()->result_int(), 200);
    // Wait until the upstream has closed its side (its session is gone once the socket is closed),
    // bounded, not for a fixed time: the pooled connection is then found dead before the write.
    const auto until = std::chrono::steady_clock::now() + 5s;
    while ((upstream.engine().counters().idle_timeouts == 0 || upstream.engine().counters().open > 0) &&
           std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(5ms);
    }
    ASSERT_EQ(upstream.engine().counters().idle_timeouts, 1U);
    ASSERT_EQ(upstream.engine().counters().open, 0U);
    EXPECT_EQ(exchange(p.port(), make_request("GET", "/x")).parsed()->result_int(), 200);
    EXPECT_EQ(p.engine().counters().upstream_connects, 2U);
    EXPECT_EQ(p.engine().counters().upstream_failures, 0U);
}

TEST(proxy, the_instance_tag_is_in_every_record) {
    test_server upstream{""};
    proxy_options options;
    options.instance = "tier-a";
    test_proxy p{"", upstream.port(), options};
    exchange(p.port(), make_request("GET", "/x"));
    EXPECT_EQ(only(p.journal()).instance, "tier-a");
    const auto events = p.context().records.events();
    ASSERT_FALSE(events.empty());
    EXPECT_EQ(events.front().kind, record::server_event_kind::started);
    EXPECT_EQ(events.front().peer, "tier-a");
    EXPECT_TRUE(record::wall_anchor_ns(events));
}

TEST(proxy, probe_upstream_tells_a_listening_port_from_a_closed_one) {
    test_server upstream{""};
    EXPECT_FALSE(probe_upstream("127.0.0.1", upstream.port(), 1s));
    EXPECT_EQ(probe_upstream("127.0.0.1", closed_port(), 1s), asio::error::connection_refused);
}


// Issue 27, item 1. The upstream reads the second request on the pooled connection, then closes or
// resets it without a reply. The upstream may have executed it: sending it again on a new connection
// would charge twice while the journal shows one attempt. It goes once; the attempt is a 502.
TEST(proxy, a_request_on_a_reused_connection_that_dies_after_the_write_is_never_sent_again) {
    using act = scripted_upstream::step::act;
    for (const act how : {act::close, act::reset}) {
        scripted_upstream upstream{[how](std::size_t index) {
            if (index == 0) return scripted_upstream::reply(scripted_upstream::response(200));
            return scripted_upstream::step{how, {}};
        }};
        test_proxy p{"", upstream.port()};
        connection client{p.port()};
        ASSERT_TRUE(client.connected());
        const auto first = client.round_trip(make_request("GET", "/x", {}, {}, true));
        ASSERT_TRUE(first.parsed());
        EXPECT_EQ(first.parsed()->result_int(), 200);
        const auto paid = client.round_trip(make_request("POST", "/payments", R"({"amount":5})", {}, true));
        ASSERT_TRUE(paid.parsed());
        EXPECT_EQ(paid.parsed()->result_int(), 502);
        const auto journal = p.journal();
        const auto wire = p.wire();
        EXPECT_EQ(upstream.requests(), 2U) << "the POST was sent to the upstream again";
        EXPECT_EQ(upstream.connections(), 1U);
        ASSERT_EQ(journal.size(), 2U);
        EXPECT_EQ(journal[1].status, 502);
        EXPECT_EQ(journal[1].effect, record::effect_kind::none);
        EXPECT_EQ(wire[1].upstream_error, how == act::close ? "closed" : "reset");
    }
}

// Issue 27, item 2: interim replies. An upstream's 103 Early Hints reaches the client as an interim
// reply, then the final one, on a connection that stays open; the journal has the final status.
TEST(proxy, an_upstream_103_is_relayed_as_an_interim_reply_before_the_final_one) {
    scripted_upstream upstream{[](std::size_t) {
        return scripted_upstream::reply("HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n" +
                                        scripted_upstream::response(201, "done"));
    }};
    test_proxy p{"[[server.endpoint]]\nmethod = \"POST\"\npath = \"/pay\"\neffect = \"non_idempotent\"\n",
                 upstream.port()};
    connection client{p.port()};
    ASSERT_TRUE(client.connected());
    const auto hints = client.round_trip(make_request("POST", "/pay", R"({"amount":5})", {}, true), 3s);
    ASSERT_TRUE(hints.parsed());
    EXPECT_EQ(hints.parsed()->result_int(), 103);
    EXPECT_EQ((*hints.parsed())["Link"], "</a.css>; rel=preload");
    const auto final_reply = client.read_response(3s);
    ASSERT_TRUE(final_reply.parsed()) << "no final reply after the interim one";
    EXPECT_EQ(final_reply.parsed()->result_int(), 201);
    EXPECT_EQ(final_reply.parsed()->body(), "done");
    const auto again = client.round_trip(make_request("GET", "/x", {}, {}, true), 3s);
    ASSERT_TRUE(again.parsed());
    EXPECT_EQ(again.parsed()->result_int(), 103);
    const auto journal = p.journal();
    ASSERT_EQ(journal.size(), 2U);
    EXPECT_EQ(journal[0].status, 201);
    EXPECT_EQ(journal[0].effect, record::effect_kind::committed);
    EXPECT_EQ(p.wire()[0].upstream_status, 201);
}

// Issue 31: instances of one service that share their key store (docs/fleet.md) answer a keyed retry
// that reached another instance with the stored reply, marked `Idempotent-Replayed: true`. That 2xx
// is a replay, not a second commit; an unmarked 2xx (or one marked false) still commits.
TEST(proxy, an_upstream_2xx_marked_idempotent_replayed_commits_nothing) {
    scripted_upstream upstream{[](std::size_t index) {
        const std::string marks[] = {"", "Idempotent-Replayed: true\r\n", "idempotent-replayed: TRUE\r\n",
                                     "Idempotent-Replayed: false\r\n"};
        return scripted_upstream::reply("HTTP/1.1 201 Created\r\n" + marks[index % 4] + "Content-Length: 2\r\n\r\nok");
    }};
    test_proxy p{"[[server.endpoint]]\nmethod = \"POST\"\npath = \"/pay\"\neffect = \"non_idempotent\"\n",
                 upstream.port()};
    connection client{p.port()};
    ASSERT_TRUE(client.connected());
    for (int i = 0; i < 4; ++i) {
        const auto reply = client.round_trip(make_request("POST", "/pay", R"({"amount":5})", {{"Idempotency-Key", "k1"}}, true), 3s);
        ASSERT_TRUE(reply.parsed());
        EXPECT_EQ(reply.parsed()->result_int(), 201);
    }
    const auto journal = p.journal();
    ASSERT_EQ(journal.size(), 4U);
    EXPECT_EQ(journal[0].effect, record::effect_kind::committed);
    EXPECT_EQ(journal[1].effect, record::effect_kind::replayed);
    EXPECT_EQ(journal[2].effect, record::effect_kind::replayed);
    EXPECT_EQ(journal[3].effect, record::effect_kind::committed);
    EXPECT_EQ(p.context().effects.size(), 2U);
}

// Issue 27, item 2: the proxy forwards no Upgrade, so an upstream's 101 is a broken reply: 502,
// journaled as bad_reply, never relayed.
TEST(proxy, an_upstream_101_is_a_502_and_never_relayed) {
    scripted_upstream upstream{[](std::size_t) {
        return scripted_upstream::reply("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n");
    }};
    test_proxy p{"", upstream.port()};
    const auto reply = exchange(p.port(), make_request("GET", "/ws", {}, {{"Upgrade", "websocket"}}), 3s);
    ASSERT_TRUE(reply.parsed());
    EXPECT_EQ(reply.parsed()->result_int(), 502);
    EXPECT_EQ(reply.bytes.find("101"), std::string::npos) << reply.bytes;
    const auto r = only(p.journal());
    EXPECT_EQ(r.status, 502);
    EXPECT_EQ(only(p.wire()).upstream_error, "bad_reply");
    const auto seen = upstream.seen();
    ASSERT_EQ(seen.size(), 1U);
    EXPECT_EQ(seen[0].find(http::field::upgrade), seen[0].end());
}

// Issue 27, item 2: a request forwarded carries exactly one Host, the client's.
TEST(proxy, the_upstream_gets_exactly_one_host_the_clients) {
    scripted_upstream upstream{[](std::size_t) { return scripted_upstream::reply(scripted_upstream::response(200)); }};
    test_proxy p{"", upstream.port()};
    ASSERT_TRUE(exchange(p.port(), make_request("GET", "/x")).parsed());
    const auto seen = upstream.seen();
    ASSERT_EQ(seen.size(), 1U);
    EXPECT_EQ(seen[0].count(http::field::host), 1U);
    EXPECT_EQ(seen[0][http::field::host], "127.0.0.1");
}

// Issue 27, item 4: [server] max_connections holds in the proxy; the refusal is journaled.
TEST(proxy, over_max_connections_a_new_connection_is_refused_and_journaled) {
    test_server upstream{""};
    test_proxy p{"[server]\nmax_connections = 2\n", upstream.port()};
    asio::io_context io;
    std::vector<std::unique_ptr<asio::ip::tcp::socket>> held;
    for (int i = 0; i < 2; ++i) {
        // Mid-request, so neither is an idle kept-alive connection that could make room.
        held.push_back(std::make_unique<asio::ip::tcp::socket>(io));
        held.back()->connect({asio::ip::make_address("127.0.0.1"), p.port()});
        asio::write(*held.back(), asio::buffer(std::string{"GET /held HTTP/1.1\r\n"}));
    }
    const auto refused = exchange(p.port(), make_request("GET", "/x"), 10s);
    EXPECT_FALSE(refused.timed_out);
    EXPECT_FALSE(refused.parsed());
    held.clear();
    EXPECT_TRUE(p.journal().empty());
    const auto events = p.context().records.events();
    const auto refusal = std::find_if(events.begin(), events.end(), [](const record::server_event& e) {
        return e.kind == record::server_event_kind::connection_refused;
    });
    ASSERT_NE(refusal, events.end());
    EXPECT_NE(refusal->detail.find("cap of 2"), std::string::npos) << refusal->detail;
}

// Issue 27, item 4: [server] write_timeout holds in the proxy. The upstream's reply is far larger
// than the socket buffers and the client never reads: the connection is reset, the attempt ends
// client_gone, and a write_timeout event is journaled.
TEST(proxy, a_reply_the_client_does_not_read_is_reset_after_the_write_timeout) {
    const std::string body(32U << 20, 'x');
    scripted_upstream upstream{[&body](std::size_t) { return scripted_upstream::reply(scripted_upstream::response(200, body)); }};
    test_proxy p{"[server]\nwrite_timeout = \"200ms\"\n", upstream.port()};
    asio::io_context io;
    asio::ip::tcp::socket client{io};
    client.open(asio::ip::tcp::v4());
    client.set_option(asio::socket_base::receive_buffer_size{4096});
    client.connect({asio::ip::make_address("127.0.0.1"), p.port()});
    asio::write(client, asio::buffer(make_request("GET", "/big")));
    pollfd watched{client.native_handle(), 0, 0};
    ASSERT_EQ(::poll(&watched, 1, 10'000), 1) << "not reset within 10 s";
    EXPECT_NE(watched.revents & (POLLERR | POLLHUP), 0);
    const auto r = only(p.journal());
    EXPECT_EQ(r.outcome, record::wire_outcome::client_gone);
    const auto events = p.context().records.events();
    EXPECT_TRUE(std::any_of(events.begin(), events.end(),
                            [](const record::server_event& e) { return e.kind == record::server_event_kind::write_timeout; }));
}

// Issue 27, item 5: the upstream may be named, as Docker and Kubernetes services are.
TEST(proxy, the_upstream_may_be_a_host_name) {
    test_server upstream{""};
    proxy_options options;
    options.upstream_address = "localhost";
    test_proxy p{"", upstream.port(), options};
    const auto reply = exchange(p.port(), make_request("GET", "/x"));
    ASSERT_TRUE(reply.parsed());
    EXPECT_EQ(reply.parsed()->result_int(), 200);
    EXPECT_FALSE(probe_upstream("localhost", upstream.port(), 1s));
}

}  // namespace
}  // namespace faultline::server::testing
