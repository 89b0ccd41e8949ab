// HTTP/1.1 attempts (Beast): a small pool of idle keep-alive connections, one request at a time on
// each; the per-attempt timeout is Beast's stream expiry over connect, write and read together.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

#include <memory>
#include <vector>

#include "transport.hpp"

namespace faultline::retry::transport_detail {

namespace {

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

attempt_outcome transport_outcome(outcome_kind kind) { return attempt_outcome::transport(kind); }

bool is_cancelled(const asio::cancellation_state& state) {
    return state.cancelled() != asio::cancellation_type::none;
}

class http1_transport final : public transport {
public:
    http1_transport(std::shared_ptr<connector> connections, const http_client_options& options)
        : connections_{std::move(connections)}, options_{options} {}

    asio::awaitable<attempt_outcome> exchange(const attempt_context& ctx, const request_factory& request,
                                              response_message& response, std::string& failure_reason) override;

private:
    std::unique_ptr<connection> take_idle();
    void put_idle(std::unique_ptr<connection> c);

    std::shared_ptr<connector> connections_;
    const http_client_options& options_;
    std::vector<std::unique_ptr<connection>> idle_;
};

std::unique_ptr<connection> http1_transport::take_idle() {
    // Bounded by max_idle_connections: each pass removes one connection.
    while (!idle_.empty()) {
        std::unique_ptr<connection> c = std::move(idle_.back());
        idle_.pop_back();
        if (still_usable(*c)) return c;
    }
    return nullptr;
}

void http1_transport::put_idle(std::unique_ptr<connection> c) {
    if (idle_.size() < options_.max_idle_connections) idle_.push_back(std::move(c));
}

asio::awaitable<attempt_outcome> http1_transport::exchange(const attempt_context& ctx, const request_factory& request,
                                                           response_message& response, std::string& failure_reason) {
    const asio::cancellation_state cancel = co_await asio::this_coro::cancellation_state;
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
        c = connections_->make();
        arm(*c);
        if (auto failure = co_await connections_->open(*c, cancel)) {
            failure_reason = std::move(failure->reason);
            co_return failure->outcome;
        }
    }

    request_message message = request.make();
    auto [write_ec, written] = co_await c->on_stream(
        [&](auto& stream) { return http::async_write(stream, message, asio::as_tuple(asio::use_awaitable)); });
    if (write_ec) {
        if (is_cancelled(cancel)) co_return transport_outcome(outcome_kind::cancelled);
        if (written == 0) co_return transport_outcome(outcome_kind::reset_before_write);
        co_return transport_outcome(write_ec == beast::error::timeout ? outcome_kind::timeout_after_write
                                                                      : outcome_kind::reset_after_write);
    }

    http::response_parser<http::string_body> parser;
    parser.body_limit(options_.body_limit);
    auto [read_ec, read] = co_await c->on_stream([&](auto& stream) {
        return http::async_read(stream, c->buffer, parser, asio::as_tuple(asio::use_awaitable));
    });
    if (read_ec) {
        if (is_cancelled(cancel)) co_return transport_outcome(outcome_kind::cancelled);
        if (read_ec == beast::error::timeout) co_return transport_outcome(outcome_kind::timeout_after_write);
        if (read_ec == http::error::end_of_stream || read_ec == http::error::partial_message ||
            read_ec == asio::error::eof || read_ec == asio::ssl::error::stream_truncated) {
            co_return transport_outcome(outcome_kind::eof_after_write);
        }
        co_return transport_outcome(outcome_kind::reset_after_write);
    }
    response = parser.release();
    // Reusable only if the server keeps it alive and sent nothing beyond this response.
    if (response.keep_alive() && c->buffer.size() == 0) {
        c->stream.expires_never();
        put_idle(std::move(c));
    }
    co_return attempt_outcome::http(static_cast<int>(response.result_int()));
}

}  // namespace

std::unique_ptr<transport> make_http1_transport(std::shared_ptr<connector> connections, const http_client_options& options) {
    return std::make_unique<http1_transport>(std::move(connections), options);
}

}  // namespace faultline::retry::transport_detail
