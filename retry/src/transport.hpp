// Private to the HTTP retry client (http_client.hpp): the seam between its retry loop and the wire.
// The client builds each attempt's request and reads its response the same way whatever the
// protocol; a `transport` carries one attempt over its connections — HTTP/1.1 (http1_transport.cpp:
// a keep-alive pool, one request at a time per connection) or HTTP/2 (h2_transport.cpp: streams on
// shared connections, nghttp2). Both open connections through the one `connector` (resolve once,
// TCP, TLS with SNI and verification), so a second protocol is a second transport, not a copy.
//
// Threads: a transport and its connector are touched only on the client's strand, except
// `connector::opened()`, which may be read from any thread.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_state.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "faultline/retry/http_client.hpp"

namespace faultline::retry::transport_detail {

namespace beast = boost::beast;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;
using request_message = http::request<http::string_body>;
using response_message = http::response<http::string_body>;

// A connection: TCP, or TLS over it. Beast's timeouts act on the TCP stream either way.
struct connection {
    connection(const asio::any_io_executor& executor, asio::ssl::context* tls) : stream{executor} {
        if (tls != nullptr) secure.emplace(stream, *tls);
    }
    // Calls `op` with the stream requests travel on: the TLS stream, else the TCP one.
    template <class Op>
    auto on_stream(Op&& op) {
        return secure ? op(*secure) : op(stream);
    }
    beast::tcp_stream stream;
    std::optional<asio::ssl::stream<beast::tcp_stream&>> secure;
    beast::flat_buffer buffer;
};

// An attempt that did not end with a response, and why, when the reason is worth telling the caller
// (a local error: a refused certificate, a server that did not select h2).
struct attempt_failure {
    attempt_outcome outcome;
    std::string reason{};
};

// Opens connections to the client's one host and port. Shared: an HTTP/2 connection still
// connecting holds it, and may outlive the client.
class connector {
public:
    connector(asio::any_io_executor strand, std::string host, std::uint16_t port, const http_client_options& options);

    // A new, unopened connection (TLS when the options have a context).
    std::unique_ptr<connection> make() const;
    // Resolves (once), connects `c` and, with TLS, shakes hands offering the protocol `alpn` (e.g.
    // "h2"; empty: no ALPN) and requires the server to select it. The caller bounds it (the
    // stream's expiry). Nothing on success, counted in opened(); else the failure: connection_refused
    // (no request byte can have been sent), local_error (it would fail the same again), or cancelled
    // when `cancel` says so.
    asio::awaitable<std::optional<attempt_failure>> open(connection& c, const asio::cancellation_state& cancel,
                                                         std::string_view alpn = {});

    const std::string& host() const { return host_; }
    bool secure() const { return tls_ != nullptr; }
    std::uint64_t opened() const { return opened_.load(std::memory_order_relaxed); }

private:
    asio::awaitable<error_code> resolve();

    asio::any_io_executor strand_;
    std::string host_;
    std::uint16_t port_;
    std::shared_ptr<asio::ssl::context> tls_;
    std::string tls_server_name_;
    std::optional<tcp::resolver::results_type> endpoints_;
    std::atomic<std::uint64_t> opened_{0};
};

// Makes an attempt's request once its connection is ready: the Faultline-Deadline-Ms it carries is
// what is left at that moment, not when the attempt was planned.
class request_factory {
public:
    virtual request_message make() const = 0;

protected:
    ~request_factory() = default;
};

// Carries attempts over connections it owns. `exchange` fills `response` when the outcome is a
// response, and `failure_reason` when it can say why a local error happened.
class transport {
public:
    virtual ~transport() = default;
    virtual asio::awaitable<attempt_outcome> exchange(const attempt_context& ctx, const request_factory& request,
                                                      response_message& response, std::string& failure_reason) = 0;
};

// `options` must outlive the transport.
std::unique_ptr<transport> make_http1_transport(std::shared_ptr<connector> connections, const http_client_options& options);
std::unique_ptr<transport> make_h2_transport(asio::any_io_executor strand, std::shared_ptr<connector> connections,
                                             const http_client_options& options);

}  // namespace faultline::retry::transport_detail
