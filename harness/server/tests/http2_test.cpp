// HTTP/2 on the one connection: h2c by prior knowledge on the plain port, h2 by ALPN on the TLS
// port beside HTTP/1.1, each stream one attempt with its own fault, journaled with its protocol,
// connection and stream id. A real nghttp2 client on 127.0.0.1 (h2_test_client.hpp).
#include "h2_test_client.hpp"
#include "server_fixture.hpp"
#include "test_client.hpp"

#include "faultline/tls/certificates.hpp"

#include <nghttp2/nghttp2.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <functional>
#include <set>

namespace faultline::server::testing {
namespace {

using namespace std::chrono_literals;

const record::wire_detail& wire_of(const std::vector<record::journal_record>& journal, const std::vector<record::wire_detail>& wire,
                           std::string_view target) {
    for (std::size_t i = 0; i < journal.size(); ++i) {
        if (journal[i].target == target) return wire.at(i);
    }
    throw std::runtime_error{"no record for " + std::string{target}};
}

const record::journal_record& record_of(const std::vector<record::journal_record>& journal, std::string_view target) {
    const auto it = std::find_if(journal.begin(), journal.end(), [&](const record::journal_record& r) { return r.target == target; });
    if (it == journal.end()) throw std::runtime_error{"no record for " + std::string{target}};
    return *it;
}

TEST(http2, h2c_by_prior_knowledge_is_served_and_journaled_with_its_stream) {
    test_server s{""};
    const auto result = h2_exchange(s.port(), {{"GET", "/hello"}});
    ASSERT_EQ(result.connect_error, "");
    ASSERT_FALSE(result.timed_out);
    ASSERT_EQ(result.replies.size(), 1U);
    const h2_reply& reply = result.replies[0];
    EXPECT_TRUE(reply.closed);
    EXPECT_FALSE(reply.reset_code);
    EXPECT_EQ(reply.status, 200);
    EXPECT_EQ(reply.body, "ok");
    EXPECT_EQ(reply.headers.at("content-length"), "2");
    EXPECT_EQ(reply.headers.at("server"), "faultline");

    const auto journal = s.journal();
    const auto wire = s.wire();
    ASSERT_EQ(journal.size(), 1U);
    EXPECT_EQ(journal[0].outcome, record::wire_outcome::responded);
    EXPECT_EQ(journal[0].status, 200);
    EXPECT_EQ(journal[0].method, "GET");
    EXPECT_EQ(journal[0].connection, 1U);
    EXPECT_EQ(wire[0].protocol, "h2c");
    EXPECT_EQ(wire[0].stream, 1U);
    EXPECT_FALSE(wire[0].stream_reset);
    EXPECT_GT(wire[0].bytes_in, 0U);
    EXPECT_GT(wire[0].bytes_out, 2U);
}

TEST(http2, concurrent_streams_on_one_connection_are_one_attempt_each) {
    test_server s{""};
    std::vector<h2_request> requests;
    for (int i = 0; i < 5; ++i) requests.push_back({"GET", "/item/" + std::to_string(i)});
    const auto result = h2_exchange(s.port(), requests);
    ASSERT_EQ(result.connect_error, "");
    ASSERT_EQ(result.replies.size(), 5U);
    for (const auto& reply : result.replies) {
        EXPECT_TRUE(reply.closed);
        EXPECT_GT(reply.status, 0) << reply.stream;
    }
    const auto journal = s.journal();
    const auto wire = s.wire();
    ASSERT_EQ(journal.size(), 5U);
    std::set<std::uint32_t> streams;
    std::set<std::uint32_t> requests_on_connection;
    for (std::size_t i = 0; i < journal.size(); ++i) {
        EXPECT_EQ(journal[i].connection, journal[0].connection);
        EXPECT_EQ(wire[i].protocol, "h2c");
        streams.insert(*wire[i].stream);
        requests_on_connection.insert(*journal[i].connection_request);
    }
    EXPECT_EQ(streams, (std::set<std::uint32_t>{1, 3, 5, 7, 9}));
    EXPECT_EQ(requests_on_connection, (std::set<std::uint32_t>{1, 2, 3, 4, 5}));
}

TEST(http2, a_fault_applies_to_its_own_stream_while_the_next_one_succeeds) {
    test_server s{R"(
[[fault]]
name = "flaky"
kind = "status"
status = 503
retry_after = "2s"
[fault.match]
path = "/flaky"
)"};
    const auto result = h2_exchange(s.port(), {{"GET", "/flaky"}, {"GET", "/hello"}});
    ASSERT_EQ(result.connect_error, "");
    ASSERT_EQ(result.replies.size(), 2U);
    EXPECT_EQ(result.replies[0].stream, 1);
    EXPECT_EQ(result.replies[0].status, 503);
    EXPECT_EQ(result.replies[0].headers.at("retry-after"), "2");
    EXPECT_EQ(result.replies[1].stream, 3);
    EXPECT_EQ(result.replies[1].status, 200);
    EXPECT_EQ(result.replies[1].body, "ok");

    const auto journal = s.journal();
    const auto wire = s.wire();
    ASSERT_EQ(journal.size(), 2U);
    EXPECT_EQ(record_of(journal, "/flaky").fault, "status");
    EXPECT_EQ(record_of(journal, "/flaky").status, 503);
    EXPECT_EQ(record_of(journal, "/flaky").retry_after_ms, 2000);
    EXPECT_EQ(wire_of(journal, wire, "/flaky").stream, 1U);
    EXPECT_EQ(record_of(journal, "/hello").fault, "");
    EXPECT_EQ(wire_of(journal, wire, "/hello").stream, 3U);
}

// The effect is committed, then the stream ends with RST_STREAM and no reply: INTERNAL_ERROR for
// `reset`, CANCEL for `close`. The connection and its other streams go on.
TEST(http2, a_lost_response_commits_then_resets_only_its_stream) {
    for (const std::string then : {"reset", "close"}) {
        SCOPED_TRACE(then);
        test_server s{"[[fault]]\nname = \"lost\"\nkind = \"lost_response\"\nthen = \"" + then +
                      "\"\n[fault.match]\npath = \"/payments\"\n"};
        const auto result = h2_exchange(s.port(), {{"POST", "/payments", R"({"amount":5})"}, {"GET", "/hello"}});
        ASSERT_EQ(result.connect_error, "");
        ASSERT_EQ(result.replies.size(), 2U);
        const std::uint32_t code = then == "reset" ? NGHTTP2_INTERNAL_ERROR : NGHTTP2_CANCEL;
        EXPECT_EQ(result.replies[0].reset_code, code);
        EXPECT_EQ(result.replies[0].status, 0);
        EXPECT_EQ(result.replies[1].status, 200);
        EXPECT_FALSE(result.goaway_code);

        const auto journal = s.journal();
        const auto wire = s.wire();
        ASSERT_EQ(journal.size(), 2U);
        const record::journal_record& lost = record_of(journal, "/payments");
        EXPECT_EQ(lost.effect, record::effect_kind::committed);
        EXPECT_EQ(lost.outcome, then == "reset" ? record::wire_outcome::reset : record::wire_outcome::closed);
        EXPECT_EQ(lost.status, 0);
        EXPECT_EQ(wire_of(journal, wire, "/payments").stream_reset, then == "reset" ? "INTERNAL_ERROR" : "CANCEL");
        EXPECT_EQ(s.context().effects.size(), 1U);
    }
}

TEST(http2, a_reset_before_the_commit_commits_nothing) {
    test_server s{"[[fault]]\nname = \"r\"\nkind = \"reset\"\n[fault.match]\npath = \"/payments\"\n"};
    const auto result = h2_exchange(s.port(), {{"POST", "/payments", R"({"amount":5})"}});
    ASSERT_EQ(result.replies.size(), 1U);
    EXPECT_EQ(result.replies[0].reset_code, NGHTTP2_INTERNAL_ERROR);
    const auto journal = s.journal();
    ASSERT_EQ(journal.size(), 1U);
    EXPECT_EQ(journal[0].effect, record::effect_kind::none);
    EXPECT_EQ(journal[0].outcome, record::wire_outcome::reset);
}

// The head promises the whole body; part of it comes in DATA, then RST_STREAM.
TEST(http2, a_truncated_body_is_data_then_rst_stream) {
    test_server s{"[[fault]]\nname = \"cut\"\nkind = \"truncate\"\nbody_bytes = 1\n[fault.match]\npath = \"/hello\"\n"};
    const auto result = h2_exchange(s.port(), {{"GET", "/hello"}});
    ASSERT_EQ(result.replies.size(), 1U);
    const h2_reply& reply = result.replies[0];
    EXPECT_EQ(reply.status, 200);
    EXPECT_EQ(reply.headers.at("content-length"), "2");
    EXPECT_EQ(reply.body, "o");
    EXPECT_TRUE(reply.reset_code);
    const auto journal = s.journal();
    const auto wire = s.wire();
    ASSERT_EQ(journal.size(), 1U);
    EXPECT_EQ(journal[0].outcome, record::wire_outcome::truncated);
    EXPECT_TRUE(wire[0].stream_reset);
}

TEST(http2, a_slow_body_comes_as_paced_data_frames) {
    test_server s{"[[fault]]\nname = \"slow\"\nkind = \"slow_body\"\nbytes_per_second = 20\nchunk_bytes = 1\n"
                  "[fault.match]\npath = \"/hello\"\n"};
    const auto result = h2_exchange(s.port(), {{"GET", "/hello"}});
    ASSERT_EQ(result.replies.size(), 1U);
    const h2_reply& reply = result.replies[0];
    EXPECT_EQ(reply.status, 200);
    EXPECT_EQ(reply.body, "ok");
    EXPECT_FALSE(reply.reset_code);
    // Two one-byte chunks at 20 B/s: the second comes one 50 ms pause after the first.
    EXPECT_GE(reply.closed_at - reply.first_data, 40ms);
    const auto journal = s.journal();
    ASSERT_EQ(journal.size(), 1U);
    EXPECT_EQ(journal[0].outcome, record::wire_outcome::responded);
    EXPECT_EQ(journal[0].fault, "slow_body");
}

// A hang leaves its stream silent; at the limit it is cancelled, and the journal says hung.
TEST(http2, a_hang_keeps_its_stream_silent_until_the_limit_then_cancels_it) {
    test_server s{"[[fault]]\nname = \"h\"\nkind = \"hang\"\nlimit = \"100ms\"\n[fault.match]\npath = \"/slow\"\n"};
    const auto result = h2_exchange(s.port(), {{"GET", "/slow"}, {"GET", "/hello"}});
    ASSERT_EQ(result.replies.size(), 2U);
    EXPECT_EQ(result.replies[0].status, 0);
    EXPECT_EQ(result.replies[0].reset_code, NGHTTP2_CANCEL);
    EXPECT_EQ(result.replies[1].status, 200);
    const auto journal = s.journal();
    ASSERT_EQ(journal.size(), 2U);
    EXPECT_EQ(record_of(journal, "/slow").outcome, record::wire_outcome::hung);
}

// Malformed bytes have no HTTP/2 form: the stream is reset with PROTOCOL_ERROR, journaled as such.
TEST(http2, malformed_bytes_become_a_protocol_error_on_the_stream) {
    test_server s{"[[fault]]\nname = \"m\"\nkind = \"malformed\"\n[fault.match]\npath = \"/hello\"\n"};
    const auto result = h2_exchange(s.port(), {{"GET", "/hello"}});
    ASSERT_EQ(result.replies.size(), 1U);
    EXPECT_EQ(result.replies[0].reset_code, NGHTTP2_PROTOCOL_ERROR);
    const auto journal = s.journal();
    const auto wire = s.wire();
    ASSERT_EQ(journal.size(), 1U);
    EXPECT_EQ(journal[0].outcome, record::wire_outcome::malformed);
    EXPECT_EQ(wire[0].stream_reset, "PROTOCOL_ERROR");
    const auto events = s.context().records.events();
    const auto it = std::find_if(events.begin(), events.end(),
                                 [](const record::server_event& e) { return e.kind == record::server_event_kind::fault_not_mapped; });
    ASSERT_NE(it, events.end());
    EXPECT_EQ(it->rule, "m");
    EXPECT_NE(it->detail.find("no HTTP/2 form"), std::string::npos) << it->detail;
}

// Refused before processing: nothing committed, REFUSED_STREAM tells the client it may retry.
TEST(http2, a_refused_stream_is_reset_with_refused_stream_and_commits_nothing) {
    test_server s{"[[fault]]\nname = \"busy\"\nkind = \"refused_stream\"\n[fault.match]\npath = \"/payments\"\n"};
    const auto result = h2_exchange(s.port(), {{"POST", "/payments", R"({"amount":5})"}, {"GET", "/hello"}});
    ASSERT_EQ(result.replies.size(), 2U);
    EXPECT_EQ(result.replies[0].reset_code, NGHTTP2_REFUSED_STREAM);
    EXPECT_EQ(result.replies[0].status, 0);
    EXPECT_EQ(result.replies[1].status, 200);
    const auto journal = s.journal();
    const auto wire = s.wire();
    ASSERT_EQ(journal.size(), 2U);
    EXPECT_EQ(record_of(journal, "/payments").effect, record::effect_kind::none);
    EXPECT_EQ(record_of(journal, "/payments").outcome, record::wire_outcome::reset);
    EXPECT_EQ(wire_of(journal, wire, "/payments").stream_reset, "REFUSED_STREAM");
    EXPECT_EQ(s.context().effects.size(), 0U);
}

// GOAWAY before the commit: its last-stream-id stops below the stream, which nothing processed; the
// stream begun before it is still answered.
TEST(http2, a_goaway_before_the_commit_names_the_last_stream_processed_below_the_faulted_one) {
    test_server s{"[[fault]]\nname = \"away\"\nkind = \"goaway\"\n[fault.match]\npath = \"/payments\"\n"};
    const auto result = h2_exchange(s.port(), {{"GET", "/hello"}, {"POST", "/payments", R"({"amount":5})"}});
    ASSERT_EQ(result.replies.size(), 2U);
    EXPECT_EQ(result.replies[0].status, 200);
    EXPECT_EQ(result.replies[1].status, 0);
    EXPECT_EQ(result.goaway_code, NGHTTP2_NO_ERROR);
    EXPECT_EQ(result.goaway_last_stream, 1);
    s.finish();
    const auto journal = s.journal();
    ASSERT_EQ(journal.size(), 2U);
    EXPECT_EQ(record_of(journal, "/payments").fault, "goaway");
    EXPECT_EQ(record_of(journal, "/payments").effect, record::effect_kind::none);
    EXPECT_EQ(record_of(journal, "/payments").outcome, record::wire_outcome::closed);
    EXPECT_EQ(s.context().effects.size(), 0U);
}

// GOAWAY after the commit covers the stream, and the connection ends with no reply: a lost response.
TEST(http2, a_goaway_after_the_commit_covers_the_stream_and_loses_its_reply) {
    test_server s{"[[fault]]\nname = \"away\"\nkind = \"goaway\"\nphase = \"after\"\n"};
    const auto result = h2_exchange(s.port(), {{"POST", "/payments", R"({"amount":5})"}});
    ASSERT_EQ(result.replies.size(), 1U);
    EXPECT_EQ(result.replies[0].status, 0);
    EXPECT_EQ(result.goaway_code, NGHTTP2_INTERNAL_ERROR);
    EXPECT_EQ(result.goaway_last_stream, 1);
    s.finish();
    const auto journal = s.journal();
    ASSERT_EQ(journal.size(), 1U);
    EXPECT_EQ(journal[0].effect, record::effect_kind::committed);
    EXPECT_EQ(journal[0].outcome, record::wire_outcome::closed);
    EXPECT_EQ(s.context().effects.size(), 1U);
}

// A client past SETTINGS_MAX_CONCURRENT_STREAMS sees its extra streams refused, unprocessed.
TEST(http2, max_concurrent_streams_is_the_servers_setting) {
    test_server s{"[server]\nmax_concurrent_streams = 1\n[[fault]]\nkind = \"delay\"\nwait = \"200ms\"\n"};
    const auto result = h2_exchange(s.port(), {{"GET", "/hello"}, {"GET", "/hello"}, {"GET", "/hello"}});
    ASSERT_EQ(result.replies.size(), 3U);
    std::size_t answered = 0;
    for (const auto& reply : result.replies) answered += reply.status == 200 ? 1 : 0;
    EXPECT_GE(answered, 1U);
    s.finish();
    EXPECT_EQ(s.journal().size(), answered);
}

// HTTP/1.1 cannot say "not processed": a close with no reply, and the journal says what was done.
TEST(http2, a_refused_stream_on_http11_closes_and_journals_that_it_has_no_http11_form) {
    test_server s{"[[fault]]\nname = \"busy\"\nkind = \"refused_stream\"\n"};
    const auto reply = exchange(s.port(), make_request("GET", "/hello"));
    EXPECT_TRUE(reply.bytes.empty());
    const auto journal = s.journal();
    ASSERT_EQ(journal.size(), 1U);
    EXPECT_EQ(journal[0].outcome, record::wire_outcome::closed);
    EXPECT_EQ(journal[0].fault, "refused_stream");
    const auto events = s.context().records.events();
    const auto it = std::find_if(events.begin(), events.end(),
                                 [](const record::server_event& e) { return e.kind == record::server_event_kind::fault_not_mapped; });
    ASSERT_NE(it, events.end());
    EXPECT_EQ(it->rule, "busy");
    EXPECT_NE(it->detail.find("no HTTP/1.1 form"), std::string::npos) << it->detail;
}

struct run_authority {
    tls::certificate_authority ca = tls::certificate_authority::generate("http2_test CA", std::chrono::system_clock::now());
    tls::key_and_certificate served = ca.issue(tls::request_for({"localhost", "127.0.0.1"}, std::chrono::system_clock::now()));
};

TEST(http2, h2_over_tls_is_chosen_by_alpn_and_journaled_as_h2) {
    const run_authority authority;
    server_options options;
    options.tls = authority.served;
    test_server s{"[[fault]]\nname = \"flaky\"\nkind = \"status\"\nstatus = 503\n[fault.match]\npath = \"/flaky\"\n", 7,
                  options};
    h2_client_options client;
    client.trusted_ca_pem = authority.ca.certificate_pem();
    const auto result = h2_exchange(s.port(), {{"GET", "/hello"}, {"GET", "/flaky"}}, client);
    ASSERT_EQ(result.connect_error, "");
    EXPECT_EQ(result.alpn, "h2");
    ASSERT_EQ(result.replies.size(), 2U);
    EXPECT_EQ(result.replies[0].status, 200);
    EXPECT_EQ(result.replies[0].body, "ok");
    EXPECT_EQ(result.replies[1].status, 503);
    const auto journal = s.journal();
    const auto wire = s.wire();
    ASSERT_EQ(journal.size(), 2U);
    EXPECT_EQ(wire_of(journal, wire, "/hello").protocol, "h2");
    EXPECT_EQ(wire_of(journal, wire, "/flaky").stream, 3U);
}

// The TLS port speaks HTTP/1.1 to a client that offers no h2 (no ALPN at all here).
TEST(http2, an_http11_client_on_the_same_tls_port_still_speaks_http11) {
    const run_authority authority;
    server_options options;
    options.tls = authority.served;
    test_server s{"", 7, options};
    namespace asio = boost::asio;
    asio::io_context io;
    asio::ssl::context context{asio::ssl::context::tls_client};
    context.add_certificate_authority(asio::buffer(authority.ca.certificate_pem()));
    context.set_verify_mode(asio::ssl::verify_peer);
    asio::ssl::stream<asio::ip::tcp::socket> stream{io, context};
    const std::string request = make_request("GET", "/hello");
    std::string bytes;
    std::array<char, 4096> buffer{};
    std::function<void()> read_more = [&] {
        stream.async_read_some(asio::buffer(buffer), [&](boost::system::error_code ec, std::size_t n) {
            bytes.append(buffer.data(), n);
            if (!ec) read_more();
        });
    };
    stream.next_layer().async_connect({asio::ip::make_address("127.0.0.1"), s.port()}, [&](boost::system::error_code ec) {
        if (ec) return;
        stream.async_handshake(asio::ssl::stream_base::client, [&](boost::system::error_code hs) {
            if (hs) return;
            asio::async_write(stream, asio::buffer(request), [&](boost::system::error_code, std::size_t) { read_more(); });
        });
    });
    io.run_for(5s);  // until the server's close ends the reads
    const auto res = parse_response(bytes);
    ASSERT_TRUE(res) << bytes;
    EXPECT_EQ(res->result_int(), 200);
    const auto journal = s.journal();
    const auto wire = s.wire();
    ASSERT_EQ(journal.size(), 1U);
    EXPECT_FALSE(wire[0].protocol);
    EXPECT_FALSE(wire[0].stream);
}

}  // namespace
}  // namespace faultline::server::testing
