// The limits the server enforces on its clients, through real sockets with small configured values:
// slowloris connections closed after header_timeout, idle kept-alive ones after idle_timeout, the
// connection cap (the control API still answers at the cap), a hang fault outliving both timeouts,
// strict request framing (RFC 9112 §6.1, §6.3), and the rate limit on limit events.
#include "server_fixture.hpp"
#include "test_client.hpp"

#include "limit_event_gate.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <gtest/gtest.h>

#include <poll.h>

#include <memory>
#include <string>
#include <vector>

namespace faultline::server::testing {
namespace {

using namespace std::chrono_literals;
namespace asio = boost::asio;

std::size_t events_of(server_context& context, record::server_event_kind kind) {
    const auto events = context.records.events();
    return static_cast<std::size_t>(
        std::count_if(events.begin(), events.end(), [kind](const record::server_event& e) { return e.kind == kind; }));
}

TEST(limits, slowloris_connections_are_closed_after_header_timeout) {
    test_server s{"[server]\nheader_timeout = \"200ms\"\nidle_timeout = \"1h\"\n"};
    constexpr std::size_t slowloris = 500;
    // Each sends half a request head and never finishes it; each read ends in EOF, not the client's
    // own 20 s timeout.
    const std::vector<std::string> partial(slowloris, "GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
    const auto replies = exchange_concurrently(s.port(), partial, 20s);
    for (const raw_reply& r : replies) {
        ASSERT_FALSE(r.connect_error) << r.connect_error.message();
        EXPECT_FALSE(r.timed_out);
        EXPECT_TRUE(r.bytes.empty());
    }
    EXPECT_EQ(s.engine().counters().header_timeouts, slowloris);
    const std::size_t journaled = events_of(s.context(), record::server_event_kind::header_timeout);
    // Rate-limited: every timeout counted, at most 100 a second journaled, the rest counted apart.
    EXPECT_GE(journaled, 1U);
    EXPECT_EQ(journaled + s.engine().counters().events_not_journaled, slowloris);
    EXPECT_TRUE(s.journal().empty());  // not attempts
}

TEST(limits, a_connection_that_never_sends_is_closed_after_header_timeout) {
    test_server s{"[server]\nheader_timeout = \"100ms\"\n"};
    const auto reply = exchange(s.port(), "", 10s);
    EXPECT_FALSE(reply.timed_out);
    EXPECT_EQ(reply.read_error, asio::error::eof);
    const auto events = s.context().records.events();
    ASSERT_EQ(events.size(), 1U);
    EXPECT_EQ(events[0].kind, record::server_event_kind::header_timeout);
    EXPECT_EQ(events[0].peer.rfind("127.0.0.1:", 0), 0U);
    EXPECT_NE(events[0].detail.find("100ms"), std::string::npos) << events[0].detail;
}

TEST(limits, an_idle_kept_alive_connection_is_closed_after_idle_timeout) {
    test_server s{"[server]\nidle_timeout = \"100ms\"\nheader_timeout = \"10s\"\n"};
    connection c{s.port()};
    ASSERT_TRUE(c.connected());
    const auto first = c.round_trip(make_request("GET", "/a", {}, {}, true));
    ASSERT_TRUE(first.parsed());
    const auto after = c.read_response(10s);
    EXPECT_FALSE(after.timed_out);
    EXPECT_TRUE(after.bytes.empty());
    EXPECT_EQ(s.engine().counters().idle_timeouts, 1U);
    EXPECT_EQ(events_of(s.context(), record::server_event_kind::idle_timeout), 1U);
    EXPECT_EQ(s.journal().size(), 1U);
}

TEST(limits, a_hang_fault_is_not_a_read_timeout) {
    test_server s{"[server]\nheader_timeout = \"50ms\"\nidle_timeout = \"50ms\"\n"
                  "[[fault]]\nkind = \"hang\"\nlimit = \"400ms\"\n"};
    const auto reply = exchange(s.port(), make_request("GET", "/x"), 10s);
    EXPECT_FALSE(reply.timed_out);
    const auto journal = s.journal();
    ASSERT_EQ(journal.size(), 1U);
    EXPECT_EQ(journal[0].outcome, record::wire_outcome::hung);
    EXPECT_GE(journal[0].finished_ns - journal[0].request_ns, 400'000'000);
    EXPECT_EQ(s.engine().counters().header_timeouts, 0U);
    EXPECT_EQ(s.engine().counters().idle_timeouts, 0U);
}

// Holds connections open: each connected, nothing sent.
struct idle_clients {
    asio::io_context io;
    std::vector<std::unique_ptr<asio::ip::tcp::socket>> sockets;

    void open(std::uint16_t port, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) {
            auto socket = std::make_unique<asio::ip::tcp::socket>(io);
            socket->connect({asio::ip::make_address("127.0.0.1"), port});
            sockets.push_back(std::move(socket));
        }
    }
};

TEST(limits, over_max_connections_new_ones_are_refused_and_the_control_api_still_answers) {
    test_server s{"[server]\nmax_connections = 8\n"};
    EXPECT_EQ(s.engine().max_connections(), 8U);
    idle_clients held;
    held.open(s.port(), 8);
    // The server counts a connection once its session exists; a served request proves all 8 are.
    connection probe_control{s.control_port()};
    ASSERT_TRUE(probe_control.connected());
    for (int i = 0; i < 200 && s.engine().counters().open < 8; ++i) {
        ASSERT_TRUE(probe_control.round_trip(make_request("GET", "/__faultline/health", {}, {}, true)).parsed());
    }
    ASSERT_EQ(s.engine().counters().open, 8U);

    const auto refused = exchange(s.port(), make_request("GET", "/x"), 10s);
    EXPECT_FALSE(refused.timed_out);
    EXPECT_FALSE(refused.parsed());
    EXPECT_EQ(s.engine().counters().over_limit, 1U);
    const auto events = s.context().records.events();
    ASSERT_EQ(events.size(), 1U);
    EXPECT_EQ(events[0].kind, record::server_event_kind::connection_refused);
    EXPECT_NE(events[0].detail.find("cap of 8"), std::string::npos) << events[0].detail;

    // The control API has its own room.
    const auto health = exchange(s.control_port(), make_request("GET", "/__faultline/health"));
    ASSERT_TRUE(health.parsed());
    EXPECT_EQ(health.parsed()->result_int(), 200);

    // One released, one served again.
    held.sockets.pop_back();
    bool served = false;
    for (int i = 0; i < 200 && !served; ++i) served = exchange(s.port(), make_request("GET", "/y")).parsed().has_value();
    EXPECT_TRUE(served);
}

TEST(limits, at_max_connections_the_longest_idle_kept_alive_connection_makes_room) {
    test_server s{"[server]\nmax_connections = 2\nidle_timeout = \"1h\"\n"};
    connection older{s.port()};
    connection newer{s.port()};
    ASSERT_TRUE(older.round_trip(make_request("GET", "/counters/a", {}, {}, true)).parsed());
    ASSERT_TRUE(newer.round_trip(make_request("GET", "/counters/b", {}, {}, true)).parsed());
    // Both kept alive and idle, the cap reached: the third is served in the place of the older.
    const auto third = exchange(s.port(), make_request("GET", "/counters/c"), 10s);
    ASSERT_TRUE(third.parsed());
    EXPECT_EQ(third.parsed()->result_int(), 200);
    const auto evicted = older.read_response(10s);
    EXPECT_FALSE(evicted.timed_out);
    EXPECT_TRUE(evicted.bytes.empty());
    const auto still_open = newer.round_trip(make_request("GET", "/counters/d", {}, {}, true));
    ASSERT_TRUE(still_open.parsed());
    EXPECT_EQ(s.engine().counters().idle_evicted, 1U);
    EXPECT_EQ(s.engine().counters().over_limit, 0U);
    const auto events = s.context().records.events();
    ASSERT_EQ(events.size(), 1U);
    EXPECT_EQ(events[0].kind, record::server_event_kind::idle_evicted);
    EXPECT_NE(events[0].detail.find("after 1 requests, to make room at the cap of 2"), std::string::npos)
        << events[0].detail;
    EXPECT_EQ(s.journal().size(), 4U);
}

TEST(limits, a_response_the_client_does_not_read_is_reset_after_write_timeout) {
    // A reply far larger than the socket buffers on both sides, to a client that never reads.
    const std::string body(32u << 20, 'x');
    serve_config config = test_server::parsed("[server]\nwrite_timeout = \"200ms\"\n[[server.endpoint]]\nmethod = \"GET\"\n"
                                              "path = \"/big\"\neffect = \"read\"\n");
    config.model.service.endpoints.at(0).body = body;  // past a rules file's 1 MiB
    test_server s{std::move(config)};
    asio::io_context io;
    asio::ip::tcp::socket client{io};
    client.open(asio::ip::tcp::v4());
    client.set_option(asio::socket_base::receive_buffer_size{4096});
    client.connect({asio::ip::make_address("127.0.0.1"), s.port()});
    asio::write(client, asio::buffer(make_request("GET", "/big")));
    // Wait, reading nothing, until the connection is reset (POLLERR/POLLHUP are always reported).
    pollfd watched{client.native_handle(), 0, 0};
    ASSERT_EQ(::poll(&watched, 1, 10'000), 1) << "not reset within 10 s";
    EXPECT_NE(watched.revents & (POLLERR | POLLHUP), 0);
    const auto journal = s.journal();
    ASSERT_EQ(journal.size(), 1U);
    EXPECT_EQ(journal[0].outcome, record::wire_outcome::client_gone);
    EXPECT_LT(s.wire().at(0).bytes_out, body.size());
    EXPECT_EQ(s.engine().counters().write_timeouts, 1U);
    const auto events = s.context().records.events();
    ASSERT_EQ(events.size(), 1U);
    EXPECT_EQ(events[0].kind, record::server_event_kind::write_timeout);
    EXPECT_NE(events[0].detail.find("not taken within 200ms; connection reset"), std::string::npos) << events[0].detail;
}

int status_of_raw(std::uint16_t port, const std::string& bytes) {
    const auto reply = exchange(port, bytes, 10s);
    const auto res = reply.parsed();
    return res ? static_cast<int>(res->result_int()) : 0;
}

TEST(limits, transfer_codings_other_than_a_final_chunked_are_refused_before_any_effect) {
    test_server s{""};
    const std::string head = "POST /payments HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    // gzip alone: no way to find the body's end (it used to commit a payment with an empty body).
    EXPECT_EQ(status_of_raw(s.port(), head + "Transfer-Encoding: gzip\r\n\r\n{\"amount\":1}"), 400);
    EXPECT_EQ(status_of_raw(s.port(), head + "Transfer-Encoding: chunked, gzip\r\n\r\n"), 400);
    EXPECT_EQ(status_of_raw(s.port(), head + "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n"), 501);
    EXPECT_EQ(status_of_raw(s.port(), head + "Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n"), 400);
    // Plain chunked still works.
    EXPECT_EQ(status_of_raw(s.port(),
                            head + "Transfer-Encoding: Chunked\r\nConnection: close\r\n\r\nc\r\n{\"amount\":2}\r\n0\r\n\r\n"),
              201);
    EXPECT_EQ(s.engine().counters().bad_requests, 4U);
    const auto journal = s.journal();
    ASSERT_EQ(journal.size(), 1U);  // the refused ones are not attempts
    EXPECT_EQ(s.context().effects.size(), 1U);
}

TEST(limit_event_gate, journals_at_most_n_a_second_per_kind_and_says_how_many_it_skipped) {
    detail::limit_event_gate gate{2};
    constexpr std::int64_t ms = 1'000'000;
    EXPECT_EQ(gate.admit(record::server_event_kind::header_timeout, 0), 0U);
    EXPECT_EQ(gate.admit(record::server_event_kind::header_timeout, 1 * ms), 0U);
    EXPECT_FALSE(gate.admit(record::server_event_kind::header_timeout, 2 * ms));
    EXPECT_FALSE(gate.admit(record::server_event_kind::header_timeout, 999 * ms));
    EXPECT_EQ(gate.admit(record::server_event_kind::connection_refused, 999 * ms), 0U);  // its own budget
    EXPECT_EQ(gate.admit(record::server_event_kind::header_timeout, 1000 * ms), 2U);
    EXPECT_EQ(gate.admit(record::server_event_kind::header_timeout, 1001 * ms), 0U);
}

}  // namespace
}  // namespace faultline::server::testing
