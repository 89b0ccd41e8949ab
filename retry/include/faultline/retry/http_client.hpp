// The HTTP retry client: sends one HTTP request as an operation of several attempts, driven by the
// asynchronous retry loop (async_execute.hpp) and therefore by the same `retry_state` as every other
// faultline client. It targets one host and port (resolved once, on the first request), reuses its
// connections, bounds every attempt by the per-attempt timeout, and sends on every attempt:
//   Faultline-Attempt: <n>          1-based attempt number
//   Faultline-Deadline-Ms: <ms>     remaining overall deadline, >= 1 (only when there is a deadline)
//   Idempotency-Key: <key>          the operation's key (see idempotency.hpp), the same on every attempt
// The request body is re-sent byte for byte on every attempt. With a TLS context in the options every
// connection is TLS (SNI and, when the context verifies, the certificate's name checked against the
// server name), and its handshake is part of the attempt: it counts as connecting.
//
// Two protocols (`http_client_options::protocol`), each a transport behind the same attempt (the
// request is built and the response read the same way):
// - HTTP/1.1 (Boost.Beast, the default): keep-alive connections, one request at a time each; the
//   per-attempt timeout covers connect, write and read together, and on expiry the socket is closed
//   and the connection discarded.
// - HTTP/2 (nghttp2): with TLS, ALPN offers "h2" and a server that selects anything else fails the
//   attempt as local_error (`http_result::failure_reason` says so; trying again would not change it);
//   without TLS, h2c by prior knowledge. Each attempt is a stream; one connection carries as many at
//   once as the server's SETTINGS_MAX_CONCURRENT_STREAMS allows (100 assumed until its SETTINGS
//   arrive), and an attempt that finds every connection full **opens another connection** rather than
//   queue behind streams it does not know the end of. The per-attempt timeout runs from the attempt's
//   start; on expiry the stream alone is reset (RST_STREAM CANCEL) and the connection goes on. A
//   connection that received GOAWAY takes no new stream. HTTP/1.1's connection-specific fields are
//   not sent (RFC 9113 8.2.2) and Host becomes :authority.
//
// How transport errors become outcomes (the retry classification depends on it):
//   connect fails (refused, unreachable, timed out)      connection_refused (never reached the server)
//   TLS handshake reset, closed or timed out             connection_refused (no request byte was sent)
//   TLS refuses the handshake (certificate not verified) local_error: it would fail the same again
//   HTTP/1.1:
//   write fails before any request byte went out         reset_before_write
//   write fails after some bytes                         reset_after_write (timeout_after_write if the
//                                                        per-attempt timeout fired)
//   read: per-attempt timeout                            timeout_after_write
//   read: EOF with no complete response                  eof_after_write
//   read: reset or any other error (malformed response)  reset_after_write
//   HTTP/2:
//   TLS: the server did not select h2 by ALPN            local_error
//   RST_STREAM REFUSED_STREAM, or a GOAWAY whose         reset_before_write: never processed (RFC 9113
//   last-stream-id is below the stream, or the stream's  8.7), as a connection reset before the request
//   HEADERS never went out                               was written: safe to retry for any method
//   RST_STREAM with any other code (CANCEL,              reset_after_write (the server may have acted,
//   INTERNAL_ERROR, ...), before or after the response   even when its response headers came first)
//   headers; a body over body_limit; a reset connection
//   or a protocol error after the request went out
//   the connection ends (EOF, TLS close) before the      eof_after_write (e.g. GOAWAY covering the
//   response is complete                                 stream, then the end of the connection)
//   per-attempt timeout after the request went out       timeout_after_write, and RST_STREAM CANCEL
//   both:
//   a complete response                                  response, with status; Retry-After parsed with
//                                                        parse_retry_after against the response's Date
//                                                        (the clock's wall time without a valid Date)
//   the caller cancelled                                 cancelled (HTTP/2: RST_STREAM CANCEL)
// A 409 is an idempotency "key in use" conflict (the first request with the key is still in flight,
// so retrying later is right) when the response carries `Faultline-Idempotency: in-flight`; any other
// 409 is an ordinary conflict and is not retried.
//
// Idempotency keys: the request's safety comes from its method (RFC 9110 idempotent methods). A
// request that already carries an Idempotency-Key header keeps it (and counts as keyed); otherwise a
// non-idempotent request gets a generated key when policy.keys.auto_add is on.
//
// Ownership and threads: the client owns its connections through a shared state that running
// operations also hold, so the client object may be destroyed while requests are in flight (they
// finish normally). All of the client's state is touched only on its own strand, its destruction
// included (the destructor hands the client's share of it to the strand), so async_request may be
// called from any thread and concurrently, and the client must be destroyed before its executor's
// execution context. Under HTTP/1.1 each attempt takes an idle keep-alive connection from a small
// pool (at most `max_idle_connections` kept) or opens a new one, so concurrent requests use separate
// connections; under HTTP/2 they are streams of shared connections. An idle HTTP/2 connection keeps
// a read pending (the server may send GOAWAY or PING at any time), which keeps the executor busy:
// destroying the client closes its connections, so an io_context's run() returns once the client is
// gone and its requests are over. The injected clock and random source must outlive the client; the
// random source is only used on the strand.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/beast/http/fields.hpp>
#include <boost/beast/http/verb.hpp>
#include <boost/container/small_vector.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "faultline/core/clock.hpp"
#include "faultline/core/random.hpp"
#include "faultline/retry/async_execute.hpp"
#include "faultline/retry/deadline.hpp"
#include "faultline/retry/execute.hpp"
#include "faultline/retry/outcome.hpp"
#include "faultline/retry/policy.hpp"

namespace boost::asio::ssl {
class context;
}  // namespace boost::asio::ssl

namespace faultline::retry {

namespace http = boost::beast::http;

// The response header that marks a 409 as "idempotency key in use", and its value.
inline constexpr std::string_view idempotency_status_header = "Faultline-Idempotency";
inline constexpr std::string_view idempotency_in_flight = "in-flight";

struct http_request {
    http::verb method = http::verb::get;
    std::string target = "/";
    http::fields headers;  // sent as given on every attempt (Host is set when absent)
    std::string body;      // Content-Length is set from it
};

// Per-call settings.
struct request_options {
    std::optional<time_point> deadline;                  // absolute; combined with policy.overall_timeout
    std::function<void(const decision_event&)> on_decision;  // called for every decision, on the strand
    // Overrides the safety derived from the method and key. Treating an unkeyed POST as safe to
    // repeat is wrong for real clients; it exists so test clients can be deliberately unsafe.
    std::optional<request_safety> safety;
};

// One attempt as the client saw it, for logging.
struct attempt_record {
    std::uint32_t attempt = 0;
    attempt_outcome outcome;
    decision verdict = decision::success;  // what the loop decided after it
    duration delay{0};                     // the wait before the next attempt when verdict == retry
};

struct http_result {
    decision final_decision = decision::success;
    std::uint32_t attempts = 0;
    int status = 0;              // the last response's status; 0 when no response arrived
    http::fields headers;        // the last response's headers
    std::string body;            // the last response's body
    duration total_time{0};      // on the injected clock, from the call to the final decision
    attempt_outcome last_outcome;
    // Why the last attempt failed when its outcome is local_error and the client can tell (a
    // certificate TLS refused, a server that did not select h2 by ALPN); empty otherwise.
    std::string failure_reason;
    boost::container::small_vector<attempt_record, 4> history;  // every attempt, in order

    bool succeeded() const { return final_decision == decision::success; }
};

// How requests travel: HTTP/1.1, or HTTP/2 (h2 by ALPN with TLS, h2c by prior knowledge without).
enum class http_protocol { http1, http2 };

struct http_client_options {
    clock* clk = nullptr;                  // null: the steady clock
    random_source* random = nullptr;       // null: a per-client mt19937_64 seeded from default_random()
    std::size_t max_idle_connections = 4;  // idle HTTP/1.1 keep-alive connections kept for reuse
    std::uint64_t body_limit = 8u << 20;   // the largest response body accepted (bytes)
    // TLS on every connection with this context (its trust and verify mode), null: plain TCP.
    std::shared_ptr<asio::ssl::context> tls{};
    std::string tls_server_name{};  // SNI and the name verified; "" means the host
    http_protocol protocol = http_protocol::http1;
};

class http_client_state;

namespace http_detail {
asio::any_io_executor strand_of(const http_client_state& state);
asio::awaitable<http_result> run_request(std::shared_ptr<http_client_state> state, http_request request,
                                         request_options options);
}  // namespace http_detail

class http_client {
public:
    // `host` is a name or address (faultline uses 127.0.0.1); nothing is resolved until the first request.
    // An invalid policy (validate) throws std::invalid_argument.
    http_client(asio::any_io_executor executor, std::string host, std::uint16_t port, retry_policy policy = {},
                http_client_options options = {});
    // A copy shares the state (connections, pool); each releases its share on the strand.
    ~http_client();
    http_client(const http_client&) = default;
    http_client(http_client&&) noexcept = default;
    http_client& operator=(http_client other) noexcept;

    // Sends `request` as one operation; completes `token` with void(http_result). Works with
    // asio::use_awaitable, a callback, asio::use_future; cancellation as for async_execute.
    template <class CompletionToken>
    auto async_request(http_request request, request_options options, CompletionToken&& token) {
        return async_detail::async_spawn<http_result>(
            http_detail::strand_of(*state_), http_detail::run_request(state_, std::move(request), std::move(options)),
            std::forward<CompletionToken>(token));
    }
    template <class CompletionToken>
    auto async_request(http_request request, CompletionToken&& token) {
        return async_request(std::move(request), request_options{}, std::forward<CompletionToken>(token));
    }

    // Connections opened so far (a keep-alive reuse counter for tests and reports).
    std::uint64_t connections_opened() const;

private:
    std::shared_ptr<http_client_state> state_;
};

}  // namespace faultline::retry
