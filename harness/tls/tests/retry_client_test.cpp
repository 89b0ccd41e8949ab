// faultline's retry client (retry/http_client.hpp) over TLS with this module's contexts: it trusts
// exactly the CA it is given, verifies the name, keeps the TLS connection alive across requests, and
// does not retry a handshake that TLS refused (a certificate is not fixed by trying again).
#include "faultline/retry/http_client.hpp"
#include "faultline/tls/certificates.hpp"
#include "faultline/tls/contexts.hpp"
#include "faultline/tls/run_certificates.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>

namespace faultline::tls {
namespace {

using namespace std::chrono_literals;
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

// Accepts TLS connections on 127.0.0.1 and answers every request 200 "ok", keeping the connection
// alive; counts connections and completed handshakes.
struct without_alpn_t {};
constexpr without_alpn_t without_alpn;

class tls_ok_server {
public:
    tls_ok_server(asio::io_context& io, const key_and_certificate& identity)
        : acceptor_{io, {asio::ip::make_address("127.0.0.1"), 0}}, context_{server_context(identity)} {
        accept();
    }
    // A server that selects no protocol by ALPN, whatever the client offers (an HTTP/1.1-only server).
    tls_ok_server(asio::io_context& io, const key_and_certificate& identity, without_alpn_t)
        : tls_ok_server{io, identity} {
        SSL_CTX_set_alpn_select_cb(context_->native_handle(), nullptr, nullptr);
    }
    std::uint16_t port() const { return acceptor_.local_endpoint().port(); }
    int connections = 0;
    int handshakes = 0;
    int requests = 0;

private:
    struct session {
        session(tcp::socket socket, asio::ssl::context& context) : stream{std::move(socket), context} {}
        asio::ssl::stream<tcp::socket> stream;
        beast::flat_buffer buffer;
        http::request<http::string_body> request;
        http::response<http::string_body> response;
    };

    void accept() {
        acceptor_.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
            if (ec) return;
            ++connections;
            auto s = std::make_shared<session>(std::move(socket), *context_);
            s->stream.async_handshake(asio::ssl::stream_base::server, [this, s](boost::system::error_code hs) {
                if (hs) return;
                ++handshakes;
                serve(s);
            });
            accept();
        });
    }

    void serve(const std::shared_ptr<session>& s) {
        s->request = {};
        http::async_read(s->stream, s->buffer, s->request, [this, s](boost::system::error_code ec, std::size_t) {
            if (ec) return;
            ++requests;
            s->response = {http::status::ok, 11};
            s->response.body() = "ok";
            s->response.keep_alive(true);
            s->response.prepare_payload();
            http::async_write(s->stream, s->response, [this, s](boost::system::error_code wec, std::size_t) {
                if (!wec) serve(s);
            });
        });
    }

    tcp::acceptor acceptor_;
    context_ptr context_;
};

std::optional<retry::http_result> get(asio::io_context& io, retry::http_client& client) {
    std::optional<retry::http_result> result;
    retry::http_request request;
    request.target = "/hello";
    client.async_request(std::move(request), [&](retry::http_result r) { result = std::move(r); });
    const auto until = std::chrono::steady_clock::now() + 10s;
    io.restart();
    while (!result && std::chrono::steady_clock::now() < until) io.run_one_until(until);
    return result;
}

retry::retry_policy three_quick_attempts() {
    return retry::retry_policy{}.with_max_attempts(3).with_backoff(
        retry::backoff_policy{}.with_base(1ms).with_cap(2ms).with_jitter(retry::jitter_kind::none));
}

TEST(retry_client_over_tls, trusts_the_runs_ca_and_keeps_one_connection) {
    const run_certificates run{"retry_client_test CA", {}, temporary_ca_path("retry-client-test"), false};
    asio::io_context io;
    tls_ok_server server{io, run.identity()};
    retry::http_client_options options;
    options.tls = client_context({run.ca_file(), true});
    retry::http_client client{io.get_executor(), "127.0.0.1", server.port(), three_quick_attempts(), options};
    for (int i = 0; i < 3; ++i) {
        const auto result = get(io, client);
        ASSERT_TRUE(result.has_value());
        EXPECT_EQ(result->status, 200);
        EXPECT_EQ(result->body, "ok");
        EXPECT_EQ(result->attempts, 1U);
    }
    EXPECT_EQ(server.requests, 3);
    EXPECT_EQ(server.handshakes, 1);
    EXPECT_EQ(client.connections_opened(), 1U);
}

TEST(retry_client_over_tls, a_certificate_it_cannot_verify_ends_the_operation_without_a_retry) {
    const run_certificates served{"the server's CA", {}, temporary_ca_path("retry-client-served"), false};
    const run_certificates other{"another CA", {}, temporary_ca_path("retry-client-other"), false};
    struct case_t {
        const char* what;
        const std::string& trusted;
        std::string server_name;
    };
    for (const case_t& c : {case_t{"untrusted issuer", other.ca_file(), ""},
                            case_t{"another name", served.ca_file(), "payments.internal"}}) {
        SCOPED_TRACE(c.what);
        asio::io_context io;
        tls_ok_server server{io, served.identity()};
        retry::http_client_options options;
        options.tls = client_context({c.trusted, true});
        options.tls_server_name = c.server_name;
        retry::http_client client{io.get_executor(), "127.0.0.1", server.port(), three_quick_attempts(), options};
        const auto result = get(io, client);
        ASSERT_TRUE(result.has_value());
        EXPECT_EQ(result->attempts, 1U);
        EXPECT_EQ(result->last_outcome.kind, retry::outcome_kind::local_error);
        EXPECT_EQ(server.connections, 1);
        EXPECT_EQ(server.requests, 0);
    }
}

// HTTP/2 over TLS needs the server to select h2 by ALPN; one that selects nothing (it speaks only
// HTTP/1.1) would select nothing again, so the operation ends at once, saying why.
TEST(retry_client_over_tls, http2_fails_clearly_when_the_server_does_not_select_h2) {
    const run_certificates run{"retry_client_test CA", {}, temporary_ca_path("retry-client-h2"), false};
    asio::io_context io;
    tls_ok_server server{io, run.identity(), without_alpn};
    retry::http_client_options options;
    options.tls = client_context({run.ca_file(), true});
    options.protocol = retry::http_protocol::http2;
    retry::http_client client{io.get_executor(), "127.0.0.1", server.port(), three_quick_attempts(), options};
    const auto result = get(io, client);
    ASSERT_TRUE(result.has_value());
    EXPECT_EQ(result->attempts, 1U);
    EXPECT_EQ(result->final_decision, retry::decision::not_retryable);
    EXPECT_EQ(result->last_outcome.kind, retry::outcome_kind::local_error);
    EXPECT_EQ(result->failure_reason, "the server did not select h2 by ALPN (it selected \"\")");
    EXPECT_EQ(server.requests, 0);
    EXPECT_EQ(client.connections_opened(), 0U);
}

TEST(run_certificates, writes_the_ca_and_removes_it_unless_kept) {
    const std::string path = temporary_ca_path("run-certificates-test");
    {
        const run_certificates run{"test CA", {"payments.internal"}, path, false};
        EXPECT_EQ(run.ca_file(), path);
        EXPECT_TRUE(std::filesystem::exists(path));
        EXPECT_NE(run.identity().certificate_pem.find("BEGIN CERTIFICATE"), std::string::npos);
    }
    EXPECT_FALSE(std::filesystem::exists(path));
    {
        const run_certificates kept{"test CA", {}, path, true};
    }
    EXPECT_TRUE(std::filesystem::exists(path));
    std::filesystem::remove(path);
}

}  // namespace
}  // namespace faultline::tls
