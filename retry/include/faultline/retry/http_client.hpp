// The HTTP retry client: sends one HTTP/1.1 request as an operation of several attempts over
// Boost.Beast, driven by the asynchronous retry loop (async_execute.hpp) and therefore by the same
// `retry_state` as every other faultline client. It targets one host and port (resolved once, on the
// first request), reuses keep-alive connections, bounds every attempt by the per-attempt timeout
// (connect, write and read together; on expiry the socket is closed and the connection discarded),
// and sends on every attempt:
//   Faultline-Attempt: <n>          1-based attempt number
//   Faultline-Deadline-Ms: <ms>     remaining overall deadline, >= 1 (only when there is a deadline)
//   Idempotency-Key: <key>          the operation's key (see idempotency.hpp), the same on every attempt
// The request body is re-sent byte for byte on every attempt. With a TLS context in the options every
// connection is TLS (SNI and, when the context verifies, the certificate's name checked against the
// server name), and its handshake is part of the attempt: it counts as connecting.
//
// How transport errors become outcomes (the retry classification depends on it):
//   connect fails (refused, unreachable, timed out)      connection_refused (never reached the server)
//   TLS handshake reset, closed or timed out             connection_refused (no request byte was sent)
//   TLS refuses the handshake (certificate not verified) local_error: it would fail the same again
//   write fails before any request byte went out         reset_before_write
//   write fails after some bytes                         reset_after_write (timeout_after_write if the
//                                                        per-attempt timeout fired)
//   read: per-attempt timeout                            timeout_after_write
//   read: EOF with no complete response                  eof_after_write
//   read: reset or any other error (malformed response)  reset_after_write
//   a complete response                                  response, with status; Retry-After parsed with
//                                                        parse_retry_after against the response's Date
//                                                        (the clock's wall time without a valid Date)
//   the caller cancelled                                 cancelled
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
// finish normally). All of the client's state is touched only on its own strand, so async_request may
// be called from any thread and concurrently: each attempt takes an idle keep-alive connection from a
// small pool (at most `max_idle_connections` kept) or opens a new one, so concurrent requests use
// separate connections. The injected clock and random source must outlive the client; the random
// source is only used on the strand.
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
    boost::container::small_vector<attempt_record, 4> history;  // every attempt, in order

    bool succeeded() const { return final_decision == decision::success; }
};

struct http_client_options {
    clock* clk = nullptr;                  // null: the steady clock
    random_source* random = nullptr;       // null: a per-client mt19937_64 seeded from default_random()
    std::size_t max_idle_connections = 4;  // idle keep-alive connections kept for reuse
    std::uint64_t body_limit = 8u << 20;   // the largest response body accepted (bytes)
    // TLS on every connection with this context (its trust and verify mode), null: plain TCP.
    std::shared_ptr<asio::ssl::context> tls{};
    std::string tls_server_name{};  // SNI and the name verified; "" means the host
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
