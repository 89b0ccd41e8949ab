#include "faultline/retry/http_client.hpp"

#include <algorithm>
#include <chrono>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "faultline/core/tls_client.hpp"
#include "faultline/retry/classify.hpp"
#include "faultline/retry/deadline.hpp"
#include "faultline/retry/idempotency.hpp"
#include "faultline/retry/retry_after.hpp"

namespace faultline::retry {

namespace beast = boost::beast;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

namespace {

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

// An idle keep-alive connection may have been closed by the server since its last response. A
// non-blocking peek tells: "would block" means open and silent; EOF, an error or unexpected bytes
// mean it must not carry another request (writing into a closed connection would turn a harmless
// stale connection into an ambiguous "after write" failure).
bool still_usable(connection& c) {
    auto& socket = c.stream.socket();
    error_code ec;
    socket.non_blocking(true, ec);
    if (ec) return false;
    char byte = 0;
    socket.receive(asio::buffer(&byte, 1), tcp::socket::message_peek, ec);
    error_code restore;
    socket.non_blocking(false, restore);
    return ec == asio::error::would_block && !restore;
}

attempt_outcome transport(outcome_kind kind) { return attempt_outcome::transport(kind); }

// A handshake TLS itself refused (a certificate that does not verify, no common protocol) fails
// the same way next time; a reset, EOF or timeout during it is a transport failure like a refused
// connect, and no request byte was sent either way.
bool refused_certificate(const error_code& ec) {
    return ec.category() == asio::error::get_ssl_category() && ec != asio::ssl::error::stream_truncated;
}

bool is_cancelled(const asio::cancellation_state& state) {
    return state.cancelled() != asio::cancellation_type::none;
}

retry_policy validated(retry_policy policy) {
    validate(policy);
    return policy;
}

}  // namespace

class http_client_state {
public:
    http_client_state(asio::any_io_executor executor, std::string host, std::uint16_t port, retry_policy policy,
                      http_client_options options)
        : strand_{asio::make_strand(executor)},
          host_{std::move(host)},
          port_{port},
          policy_{std::move(policy)},
          options_{options},
          clock_{options.clk != nullptr ? *options.clk : steady_clock_source::instance()},
          own_random_{default_random().next()},
          random_{options.random != nullptr ? *options.random : own_random_} {}

    asio::any_io_executor strand() const { return strand_; }
    std::uint64_t connections_opened() const { return opened_.load(std::memory_order_relaxed); }

    asio::awaitable<http_result> run(http_request request, request_options options);

private:
    asio::awaitable<attempt_outcome> attempt(const http_request& request, const attempt_context& ctx,
                                             http::response<http::string_body>& response);
    asio::awaitable<error_code> resolve();
    // TLS on a connected `c`: SNI with the server name (not for an address), the name verified when
    // the context verifies.
    asio::awaitable<error_code> handshake(connection& c);
    std::unique_ptr<connection> take_idle();
    void put_idle(std::unique_ptr<connection> c);
    // `deadline_ms` is the Faultline-Deadline-Ms value as of the moment the request is written.
    http::request<http::string_body> build(const http_request& request, const attempt_context& ctx,
                                           std::optional<std::int64_t> deadline_ms) const;
    attempt_outcome from_response(const http::response<http::string_body>& response) const;

    asio::any_io_executor strand_;
    std::string host_;
    std::uint16_t port_;
    retry_policy policy_;
    http_client_options options_;
    clock& clock_;
    seeded_random own_random_;
    random_source& random_;
    std::optional<tcp::resolver::results_type> endpoints_;
    std::vector<std::unique_ptr<connection>> idle_;
    std::atomic<std::uint64_t> opened_{0};
};

asio::awaitable<error_code> http_client_state::resolve() {
    if (endpoints_) co_return error_code{};
    tcp::resolver resolver{strand_};
    auto [ec, results] =
        co_await resolver.async_resolve(host_, std::to_string(port_), asio::as_tuple(asio::use_awaitable));
    if (!ec) endpoints_ = std::move(results);
    co_return ec;
}

asio::awaitable<error_code> http_client_state::handshake(connection& c) {
    auto& tls = *c.secure;
    const std::string& name = options_.tls_server_name.empty() ? host_ : options_.tls_server_name;
    prepare_tls_client(tls, name, (SSL_CTX_get_verify_mode(options_.tls->native_handle()) & SSL_VERIFY_PEER) != 0);
    auto [ec] = co_await tls.async_handshake(asio::ssl::stream_base::client, asio::as_tuple(asio::use_awaitable));
    co_return ec;
}

std::unique_ptr<connection> http_client_state::take_idle() {
    // Bounded by max_idle_connections: each pass removes one connection.
    while (!idle_.empty()) {
        std::unique_ptr<connection> c = std::move(idle_.back());
        idle_.pop_back();
        if (still_usable(*c)) return c;
    }
    return nullptr;
}

void http_client_state::put_idle(std::unique_ptr<connection> c) {
    if (idle_.size() < options_.max_idle_connections) idle_.push_back(std::move(c));
}

http::request<http::string_body> http_client_state::build(const http_request& request,
                                                          const attempt_context& ctx,
                                                          std::optional<std::int64_t> deadline_ms) const {
    http::request<http::string_body> message{request.method, request.target, 11};
    for (const auto& field : request.headers) message.insert(field.name_string(), field.value());
    if (message.find(http::field::host) == message.end()) message.set(http::field::host, host_);
    message.set(attempt_header, std::to_string(ctx.attempt));
    if (deadline_ms) message.set(deadline_header, std::to_string(*deadline_ms));
    if (!ctx.idempotency_key.empty()) message.set(idempotency_key_header, ctx.idempotency_key);
    message.keep_alive(true);
    message.body() = request.body;
    message.prepare_payload();
    return message;
}

attempt_outcome http_client_state::from_response(const http::response<http::string_body>& response) const {
    attempt_outcome out = attempt_outcome::http(static_cast<int>(response.result_int()));
    if (auto it = response.find(http::field::retry_after); it != response.end()) {
        const auto date = response.find(http::field::date);
        const beast::string_view date_value = date != response.end() ? date->value() : beast::string_view{};
        out.retry_after = parse_retry_after(it->value(), clock_.wall_now(), date_value);
    }
    if (out.status == 409) {
        if (auto it = response.find(idempotency_status_header); it != response.end()) {
            out.idempotency_key_in_use = beast::iequals(it->value(), idempotency_in_flight);
        }
    }
    return out;
}

asio::awaitable<attempt_outcome> http_client_state::attempt(const http_request& request, const attempt_context& ctx,
                                                            http::response<http::string_body>& response) {
    const asio::cancellation_state cancel = co_await asio::this_coro::cancellation_state;
    const time_point planned_at = clock_.now();
    // One expiry covers the whole attempt (connect, write and read together, as Beast applies it to
    // every operation until it is set again); on expiry Beast closes the socket, so a timed-out
    // connection is never reused.
    const auto arm = [&ctx](connection& conn) {
        if (ctx.timeout) {
            conn.stream.expires_after(*ctx.timeout);
        } else {
            conn.stream.expires_never();
        }
    };
    std::unique_ptr<connection> c = take_idle();
    if (c) {
        arm(*c);
    } else {
        if (const error_code ec = co_await resolve(); ec) {
            co_return transport(is_cancelled(cancel) ? outcome_kind::cancelled : outcome_kind::local_error);
        }
        c = std::make_unique<connection>(strand_, options_.tls.get());
        arm(*c);
        auto [ec, endpoint] = co_await c->stream.async_connect(*endpoints_, asio::as_tuple(asio::use_awaitable));
        if (ec) co_return transport(is_cancelled(cancel) ? outcome_kind::cancelled : outcome_kind::connection_refused);
        if (c->secure) {
            if (const error_code tls_ec = co_await handshake(*c); tls_ec) {
                if (is_cancelled(cancel)) co_return transport(outcome_kind::cancelled);
                co_return transport(refused_certificate(tls_ec) ? outcome_kind::local_error
                                                                : outcome_kind::connection_refused);
            }
        }
        opened_.fetch_add(1, std::memory_order_relaxed);
    }

    // The plan's deadline value was computed before connecting; the budget left when the request
    // goes out is smaller by the time that took, and the server must not be promised more.
    std::optional<std::int64_t> deadline_ms = ctx.deadline_ms;
    if (deadline_ms) {
        const auto spent = std::chrono::ceil<std::chrono::milliseconds>(clock_.now() - planned_at).count();
        deadline_ms = std::max<std::int64_t>(1, *deadline_ms - spent);
    }
    http::request<http::string_body> message = build(request, ctx, deadline_ms);
    auto [write_ec, written] = co_await c->on_stream(
        [&](auto& stream) { return http::async_write(stream, message, asio::as_tuple(asio::use_awaitable)); });
    if (write_ec) {
        if (is_cancelled(cancel)) co_return transport(outcome_kind::cancelled);
        if (written == 0) co_return transport(outcome_kind::reset_before_write);
        co_return transport(write_ec == beast::error::timeout ? outcome_kind::timeout_after_write
                                                              : outcome_kind::reset_after_write);
    }

    http::response_parser<http::string_body> parser;
    parser.body_limit(options_.body_limit);
    auto [read_ec, read] = co_await c->on_stream([&](auto& stream) {
        return http::async_read(stream, c->buffer, parser, asio::as_tuple(asio::use_awaitable));
    });
    if (read_ec) {
        if (is_cancelled(cancel)) co_return transport(outcome_kind::cancelled);
        if (read_ec == beast::error::timeout) co_return transport(outcome_kind::timeout_after_write);
        if (read_ec == http::error::end_of_stream || read_ec == http::error::partial_message ||
            read_ec == asio::error::eof || read_ec == asio::ssl::error::stream_truncated) {
            co_return transport(outcome_kind::eof_after_write);
        }
        co_return transport(outcome_kind::reset_after_write);
    }
    response = parser.release();
    // Reusable only if the server keeps it alive and sent nothing beyond this response.
    if (response.keep_alive() && c->buffer.size() == 0) {
        c->stream.expires_never();
        put_idle(std::move(c));
    }
    co_return from_response(response);
}

asio::awaitable<http_result> http_client_state::run(http_request request, request_options options) {
    const time_point start = clock_.now();
    http_result result;

    std::optional<idempotency_key> key;
    bool has_key = false;
    if (auto it = request.headers.find(idempotency_key_header); it != request.headers.end()) {
        has_key = true;
        // A UUID key is adopted (and re-formatted per policy.keys.format); any other value is sent as
        // given, since the request headers are copied onto every attempt.
        key = idempotency_key::parse(idempotency_key_value(it->value()));
        if (key) request.headers.erase(idempotency_key_header);
    }
    const std::string method{http::to_string(request.method)};
    request_safety safety = options.safety.value_or(safety_of(method, has_key));
    // A key of the caller's own format rides in the copied headers: the request is as safe to repeat
    // as an idempotent one, and retry_state must neither add a key nor, finding none, call it unsafe.
    if (safety == request_safety::idempotency_key && !key) safety = request_safety::idempotent;
    execution_env env{&clock_, &random_, safety, options.deadline, key};

    http::response<http::string_body> response;
    bool have_response = false;
    auto op = [&](const attempt_context& ctx) -> asio::awaitable<attempt_outcome> {
        return [](http_client_state& self, const http_request& req, attempt_context c,
                  http::response<http::string_body>& out, bool& have) -> asio::awaitable<attempt_outcome> {
            http::response<http::string_body> fresh;
            const attempt_outcome outcome = co_await self.attempt(req, c, fresh);
            if (outcome.kind == outcome_kind::response) {
                out = std::move(fresh);
                have = true;
            }
            co_return outcome;
        }(*this, request, ctx, response, have_response);
    };
    auto hook = [&](const decision_event& event) {
        if (event.outcome != nullptr) {
            result.history.push_back(attempt_record{event.attempt, *event.outcome, event.verdict, event.delay});
        }
        if (options.on_decision) options.on_decision(event);
    };
    const execution_result loop = co_await async_detail::retry_loop(policy_, op, env, hook);

    result.final_decision = loop.final_decision;
    result.attempts = loop.attempts;
    result.last_outcome = loop.last_outcome;
    if (have_response) {
        result.status = static_cast<int>(response.result_int());
        result.body = std::move(response.body());
        result.headers = std::move(response.base());
    }
    result.total_time = clock_.now() - start;
    co_return result;
}

namespace http_detail {

asio::any_io_executor strand_of(const http_client_state& state) { return state.strand(); }

asio::awaitable<http_result> run_request(std::shared_ptr<http_client_state> state, http_request request,
                                         request_options options) {
    co_return co_await state->run(std::move(request), std::move(options));
}

}  // namespace http_detail

http_client::http_client(asio::any_io_executor executor, std::string host, std::uint16_t port, retry_policy policy,
                         http_client_options options)
    : state_{std::make_shared<http_client_state>(std::move(executor), std::move(host), port,
                                                 validated(std::move(policy)), options)} {}

std::uint64_t http_client::connections_opened() const { return state_->connections_opened(); }

}  // namespace faultline::retry
