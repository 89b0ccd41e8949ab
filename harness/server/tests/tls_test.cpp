// TLS on the one HTTP connection: the same attempts, faults and journal as plain TCP, over a real
// TLS client on 127.0.0.1 that trusts the run's own authority; and what only TLS has — a handshake
// that fails (a client rejecting the certificate, plain HTTP on the TLS port) journaled as such, a
// complete exchange and a fault's close ending with close_notify, a reset with an RST.
#include "server_fixture.hpp"
#include "test_client.hpp"

#include "faultline/tls/certificates.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>

#include <gtest/gtest.h>

namespace faultline::harness::testing {
namespace {

using namespace std::chrono_literals;
namespace asio = boost::asio;
namespace ssl = asio::ssl;

struct run_authority {
    tls::certificate_authority ca = tls::certificate_authority::generate("tls_test CA", std::chrono::system_clock::now());
    tls::key_and_certificate served = ca.issue(tls::request_for({"localhost", "127.0.0.1"}, std::chrono::system_clock::now()));
};

server_options tls_options(const run_authority& authority) {
    server_options options;
    options.tls = authority.served;
    return options;
}

struct tls_reply {
    boost::system::error_code handshake_error;
    boost::system::error_code read_error;  // what ended reading: eof (close_notify), stream_truncated, …
    std::string bytes;
};

// One request over TLS, read until the server ends the stream, bounded by `timeout`. The client
// verifies the chain against `trusted_pem` and the name 127.0.0.1.
tls_reply tls_exchange(std::uint16_t port, const std::string& trusted_pem, const std::string& request,
                       std::chrono::milliseconds timeout = 5s) {
    asio::io_context io;
    ssl::context context{ssl::context::tls_client};
    context.add_certificate_authority(asio::buffer(trusted_pem));
    context.set_verify_mode(ssl::verify_peer);
    ssl::stream<asio::ip::tcp::socket> stream{io, context};
    stream.set_verify_callback(ssl::host_name_verification{"127.0.0.1"});
    tls_reply reply;
    auto buffer = std::make_shared<std::array<char, 4096>>();
    std::function<void()> read_more = [&] {
        stream.async_read_some(asio::buffer(*buffer), [&](boost::system::error_code ec, std::size_t n) {
            reply.bytes.append(buffer->data(), n);
            if (ec) return void(reply.read_error = ec);
            read_more();
        });
    };
    // After a failed handshake: the server closes only once it has journaled the failure.
    std::function<void()> await_close = [&] {
        stream.next_layer().async_read_some(asio::buffer(*buffer), [&](boost::system::error_code ec, std::size_t) {
            if (!ec) await_close();
        });
    };
    stream.next_layer().async_connect({asio::ip::make_address("127.0.0.1"), port}, [&](boost::system::error_code ec) {
        if (ec) return void(reply.handshake_error = ec);
        stream.async_handshake(ssl::stream_base::client, [&](boost::system::error_code hs) {
            if (hs) {
                reply.handshake_error = hs;
                return await_close();
            }
            asio::async_write(stream, asio::buffer(request), [&](boost::system::error_code wec, std::size_t) {
                if (wec) return void(reply.read_error = wec);
                read_more();
            });
        });
    });
    io.run_for(timeout);
    return reply;
}

TEST(tls, serves_the_model_over_tls_journals_the_attempt_and_ends_with_close_notify) {
    const run_authority authority;
    test_server s{"", 7, tls_options(authority)};
    EXPECT_EQ(s.engine().url().rfind("https://127.0.0.1:", 0), 0U) << s.engine().url();
    const auto reply = tls_exchange(s.port(), authority.ca.certificate_pem(), make_request("GET", "/hello"));
    ASSERT_FALSE(reply.handshake_error) << reply.handshake_error.message();
    // A clean TLS end (close_notify) reads as eof; a cut one as stream_truncated.
    EXPECT_EQ(reply.read_error, asio::error::eof) << reply.read_error.message();
    const auto res = parse_response(reply.bytes);
    ASSERT_TRUE(res) << reply.bytes;
    EXPECT_EQ(res->result_int(), 200);
    EXPECT_EQ(res->body(), "ok");
    const auto journal = s.journal();
    ASSERT_EQ(journal.size(), 1U);
    EXPECT_EQ(journal[0].outcome, wire_outcome::responded);
    EXPECT_EQ(journal[0].target, "/hello");
}

// A fault's close is a clean TLS close (close_notify, then FIN), as a server that closes on purpose
// sends; a reset is an RST under TLS: the client sees the reply lost either way, after the commit.
TEST(tls, a_lost_response_commits_then_closes_or_resets_under_tls_with_no_reply) {
    const run_authority authority;
    for (const std::string then : {"close", "reset"}) {
        SCOPED_TRACE(then);
        test_server s{"[[fault]]\nname = \"lost\"\nkind = \"lost_response\"\nthen = \"" + then +
                          "\"\n[fault.match]\npath = \"/payments\"\n",
                      7, tls_options(authority)};
        const auto reply = tls_exchange(s.port(), authority.ca.certificate_pem(),
                                        make_request("POST", "/payments", R"({"amount":5})"));
        ASSERT_FALSE(reply.handshake_error) << reply.handshake_error.message();
        EXPECT_EQ(reply.read_error, then == "close" ? boost::system::error_code{asio::error::eof}
                                                    : boost::system::error_code{asio::error::connection_reset})
            << reply.read_error.message();
        EXPECT_TRUE(reply.bytes.empty());
        const auto journal = s.journal();
        ASSERT_EQ(journal.size(), 1U);
        EXPECT_EQ(journal[0].effect, effect_kind::committed);
        EXPECT_EQ(journal[0].outcome, then == "close" ? wire_outcome::closed : wire_outcome::reset);
        EXPECT_EQ(journal[0].fault, "lost_response");
    }
}

TEST(tls, a_client_that_rejects_the_certificate_is_journaled_as_a_failed_handshake_not_an_attempt) {
    const run_authority authority;
    test_server s{"", 7, tls_options(authority)};
    const auto stranger = tls::certificate_authority::generate("another CA", std::chrono::system_clock::now());
    const auto reply = tls_exchange(s.port(), stranger.certificate_pem(), make_request("GET", "/hello"));
    EXPECT_TRUE(reply.handshake_error);
    EXPECT_TRUE(s.journal().empty());
    const auto events = s.context().records.events();
    ASSERT_EQ(events.size(), 1U);
    EXPECT_EQ(events[0].kind, server_event_kind::tls_handshake_failed);
    EXPECT_NE(events[0].detail.find("unknown ca"), std::string::npos) << events[0].detail;
    EXPECT_EQ(s.engine().counters().tls_handshake_failures, 1U);
}

TEST(tls, plain_http_on_the_tls_port_is_a_failed_handshake_with_the_reason) {
    const run_authority authority;
    test_server s{"", 7, tls_options(authority)};
    const auto reply = exchange(s.port(), make_request("GET", "/hello"));
    EXPECT_FALSE(reply.parsed());
    EXPECT_TRUE(s.journal().empty());
    const auto events = s.context().records.events();
    ASSERT_EQ(events.size(), 1U);
    EXPECT_EQ(events[0].kind, server_event_kind::tls_handshake_failed);
    EXPECT_NE(events[0].detail.find("http request"), std::string::npos) << events[0].detail;
}

TEST(tls, a_client_that_never_says_hello_is_closed_at_header_timeout_and_journaled_so) {
    const run_authority authority;
    test_server s{"[server]\nheader_timeout = \"200ms\"\n", 7, tls_options(authority)};
    const auto reply = exchange(s.port(), "", 5s);
    EXPECT_FALSE(reply.timed_out);
    const auto events = s.context().records.events();
    ASSERT_EQ(events.size(), 1U);
    EXPECT_EQ(events[0].kind, server_event_kind::header_timeout);
    EXPECT_EQ(events[0].detail.rfind("TLS handshake not complete within 200ms", 0), 0U) << events[0].detail;
}

}  // namespace
}  // namespace faultline::harness::testing
