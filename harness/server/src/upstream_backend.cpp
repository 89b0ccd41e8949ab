#include "upstream_backend.hpp"

#include "connection_stream.hpp"
#include "http_core.hpp"
#include "http_fields.hpp"

#include "faultline/core/tls_client.hpp"
#include "faultline/server/upstream.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <variant>

namespace faultline::server::detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using steady = std::chrono::steady_clock;

namespace {

// Bytes asked for per read: one typical reply, or a large body in few reads.
constexpr std::size_t read_chunk = 16 * 1024;
// Interim replies taken before the final one; more is an upstream stuck in a loop (a broken reply).
constexpr unsigned max_interim_replies = 16;

// A service that honours idempotency keys answers a retry of a key it already executed with the
// stored reply; Stripe's `Idempotent-Replayed: true` says so. Such a 2xx committed nothing new, so
// with a keyed retry that went to another instance of the service it is no second commit.
bool replayed_by_upstream(const http::response<http::string_body>& reply) {
    const auto replayed = reply.find("Idempotent-Replayed");
    return replayed != reply.end() && beast::iequals(replayed->value(), "true");
}

// RFC 9110 §7.6.1: connection-specific fields are not forwarded; framing is the proxy's own.
bool is_hop_by_hop(http::field f) {
    switch (f) {
        case http::field::connection:
        case http::field::keep_alive:
        case http::field::proxy_connection:
        case http::field::te:
        case http::field::trailer:
        case http::field::transfer_encoding:
        case http::field::upgrade:
        case http::field::content_length:
            return true;
        default:
            return false;
    }
}

// Does carrying out this plan need the upstream's reply? Kinds that deliver the service's own reply
// do in either phase; the others only in phase `after` (action_executor.hpp).
bool plan_forwards(const faults::fault_plan& plan) {
    if (plan.phase == faults::commit_phase::after) return true;
    return std::holds_alternative<faults::delay_action>(plan.what) ||
           std::holds_alternative<faults::slow_body_action>(plan.what) ||
           std::holds_alternative<faults::truncate_action>(plan.what);
}

// A pooled connection the upstream closed (or wrote to unasked) while it was idle is dead before
// anything is sent on it: then it may be replaced. One peek, no wait.
bool still_open(listener_socket& socket) {
    char byte = 0;
    const ssize_t n = ::recv(socket.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

}  // namespace

// One connection's exchanges with the upstream, one at a time, on the connection's thread. While a
// fetch runs its handlers hold the connection (which owns the channel), so neither goes away under
// them; the fetch ends by handing the connection back (on_fetched).
class upstream_channel final : public backend_channel {
public:
    upstream_channel(upstream_backend& backend, std::size_t worker, listener_executor executor)
        : backend_{backend}, worker_{worker}, executor_{executor} {}

    bool fetches_first(const faults::fault_plan* plan) const override { return plan == nullptr || plan_forwards(*plan); }

    void fetch(exchange& c, std::shared_ptr<fetch_waiter> waiter) override {
        attempt_ = &c;
        owner_ = std::move(waiter);
        started_ = steady::now();
        deadline_ = started_ + backend_.settings_.upstream_timeout;
        forwarded_at_ = c.core->since_start_ns();
        timed_out_ = connect_timed_out_ = cancelled_ = connecting_ = finished_ = false;
        interim_.clear();
        interim_count_ = 0;
        serialize(c.request);
        ++backend_.forwarded_;
        if (take_pooled()) return send();
        connect();
    }

    service_response commit(exchange& c) override {
        c.record.effect = held_.effect;
        // At most once an attempt (action_executor.hpp): the reply is handed over, not copied.
        return std::move(held_);
    }

    std::optional<steady::time_point> expire_if_due(steady::time_point now) override {
        if (finished_) return std::nullopt;
        const auto due = connecting_ ? std::min(deadline_, connect_deadline_) : deadline_;
        if (now < due) return due;
        (connecting_ && now < deadline_ ? connect_timed_out_ : timed_out_) = true;
        close();  // the pending operation ends; its handler fails the fetch
        return std::nullopt;
    }

    void cancel() override {
        if (finished_ || !owner_) return;
        cancelled_ = true;
        close();
    }

private:
    // The request as it goes upstream: HTTP/1.1, the client's fields less the hop-by-hop ones and
    // Expect, exactly one Host, our own framing (Content-Length as Beast's prepare_payload sets it).
    // The body is moved, not copied: the record already holds its hash.
    void serialize(request_t& request) {
        const http::verb method = request.method();
        head_request_ = method == http::verb::head;
        head_.clear();
        head_.append(to_std(request.method_string())).append(" ").append(to_std(request.target())).append(" HTTP/1.1\r\n");
        bool host = false;
        for (const auto& field : request.base()) {
            if (is_hop_by_hop(field.name()) || field.name() == http::field::expect) continue;
            host = host || field.name() == http::field::host;
            head_.append(to_std(field.name_string())).append(": ").append(to_std(field.value())).append("\r\n");
        }
        // Framing (framing.hpp) lets a request without Host through only from an HTTP/1.0 client.
        if (!host) head_.append("Host: ").append(backend_.settings_.host).append("\r\n");
        body_ = std::move(request.body());
        if (!body_.empty() || method == http::verb::post || method == http::verb::put || method == http::verb::options) {
            head_.append("Content-Length: ").append(std::to_string(body_.size())).append("\r\n");
        }
        head_.append("\r\n");
    }

    bool take_pooled() {
        auto& pool = backend_.pools_[worker_];
        // Each round takes one connection out of the pool, so this ends within its size.
        while (!pool.empty()) {
            upstream_backend::idle_connection idle = std::move(pool.back());
            pool.pop_back();
            if (!still_open(idle.stream->socket())) continue;  // closed as it leaves scope
            stream_ = std::move(idle.stream);
            buffer_ = std::move(idle.buffer);
            return true;
        }
        return false;
    }

    void connect() {
        connecting_ = true;
        connect_deadline_ = steady::now() + backend_.settings_.connect_timeout;
        ++backend_.connects_;
        stream_ = std::make_unique<connection_stream>(listener_socket{executor_}, backend_.tls_.get());
        buffer_.clear();
        asio::async_connect(stream_->socket(), backend_.endpoints_, [this, hold = owner_](error_code ec, const tcp::endpoint&) {
            if (const char* why = ended_why()) return fail(why);
            if (ec) return fail(ec == asio::error::connection_refused ? "refused" : "connect_failed");
            error_code ignored;
            stream_->socket().set_option(tcp::no_delay{true}, ignored);
            stream_->socket().non_blocking(true, ignored);
            if (stream_->secure()) return handshake();
            connecting_ = false;
            send();
        });
    }

    // TLS to the upstream, within the connect timeout: SNI with the upstream's name, and (unless
    // verification is off) its chain checked against the CA and the name against the certificate.
    // A failure is the attempt's outcome (502, upstream_error "tls_handshake_failed"): nothing was sent.
    void handshake() {
        auto& tls = stream_->tls();
        prepare_tls_client(tls, backend_.settings_.host, backend_.settings_.tls->verify);
        tls.async_handshake(asio::ssl::stream_base::client, [this, hold = owner_](error_code ec) {
            connecting_ = false;
            if (const char* why = ended_why()) return fail(why);
            if (ec) return fail("tls_handshake_failed");
            send();
        });
    }

    void close() {
        if (!stream_) return;
        error_code ignored;
        stream_->socket().close(ignored);
    }

    // Why the exchange was ended from outside, if it was.
    const char* ended_why() const {
        if (timed_out_) return "timeout";
        if (connect_timed_out_) return "connect_timeout";
        if (cancelled_) return "cancelled";
        return nullptr;
    }

    void send() {
        const head_and_body buffers{asio::buffer(head_), asio::buffer(body_)};
        error_code ec;
        std::size_t sent = 0;
        if (stream_->write_now(buffers, ec, sent)) return ec ? on_transport_error(ec) : receive();
        stream_->async_write(rest_of(buffers, sent), [this, hold = owner_](error_code ec2, std::size_t) {
            if (ec2) return on_transport_error(ec2);
            receive();
        });
    }

    void receive() {
        new_parser();
        parse_buffered();
    }

    void new_parser() {
        parser_.emplace();
        parser_->body_limit(backend_.settings_.body_limit);
        parser_->eager(true);
        if (head_request_) parser_->skip(true);
    }

    // Replies are parsed by Beast's parser fed from our own read loop, as the connection reads
    // requests. Each put consumes bytes or asks for more, and each interim reply starts a parser
    // on what is left, at most max_interim_replies times: this ends within buffer_.size() rounds.
    void parse_buffered() {
        for (;;) {
            while (buffer_.size() > 0 && !parser_->is_done()) {
                error_code ec;
                const std::size_t used = parser_->put(buffer_.data(), ec);
                buffer_.consume(used);
                if (ec == http::error::need_more) break;
                if (ec) return on_transport_error(ec);
                if (used == 0) break;
            }
            if (!parser_->is_done()) break;
            const unsigned status = parser_->get().result_int();
            if (status >= 200) return succeed(true);
            // 101: the proxy forwards no Upgrade, so nothing asked to switch protocols.
            if (status == 101 || ++interim_count_ > max_interim_replies) return fail("bad_reply");
            if (status != 100) keep_interim(parser_->get());
            new_parser();
        }
        stream_->async_read_some(buffer_.prepare(read_chunk), [this, hold = owner_](error_code ec, std::size_t n) {
            buffer_.commit(n);
            // Over TLS a close without close_notify reads as stream_truncated: as common as a FIN after
            // a reply delimited by the close, and judged the same (complete only if the parser says so).
            const bool ended = ec == asio::error::eof || ec == asio::ssl::error::stream_truncated;
            if (ended && parser_->got_some()) {
                // A reply delimited by the close (no Content-Length) ends here; any other is cut short.
                error_code eof_ec;
                parser_->put_eof(eof_ec);
                if (!eof_ec && parser_->is_done()) return succeed(false);
                return on_transport_error(eof_ec ? eof_ec : error_code{http::error::partial_message});
            }
            if (ec) return on_transport_error(ec);
            parse_buffered();
        });
    }

    // An interim reply as it goes to the client: its status line and fields, as received.
    void keep_interim(const http::response<http::string_body>& reply) {
        interim_.append("HTTP/1.1 ").append(std::to_string(reply.result_int())).append(" ");
        interim_.append(to_std(reply.reason())).append("\r\n");
        for (const auto& field : reply.base()) {
            interim_.append(to_std(field.name_string())).append(": ").append(to_std(field.value())).append("\r\n");
        }
        interim_.append("\r\n");
    }

    // A transport error ends the exchange; nothing is sent again (the upstream may have read it).
    void on_transport_error(error_code ec) {
        if (const char* why = ended_why()) return fail(why);
        if (ec == http::error::body_limit || ec == http::error::header_limit || ec == http::error::bad_version ||
            ec == http::error::bad_status || ec == http::error::bad_field || ec == http::error::bad_value ||
            ec == http::error::bad_reason || ec == http::error::bad_line_ending || ec == http::error::bad_chunk ||
            ec == http::error::bad_content_length || ec == http::error::bad_transfer_encoding) {
            return fail("bad_reply");
        }
        if (ec == asio::error::connection_reset) return fail("reset");
        fail("closed");
    }

    void succeed(bool reusable) {
        http::response<http::string_body> reply = parser_->release();
        auto& pool = backend_.pools_[worker_];
        if (reusable && reply.keep_alive() && pool.size() < backend_.settings_.idle_per_worker && buffer_.size() == 0) {
            pool.push_back({std::move(stream_), std::move(buffer_)});
        } else {
            close();
        }
        take_reply(reply);
        finish();
    }

    // The upstream's reply as the attempt's: its status, fields less the hop-by-hop ones, body and
    // interim replies; a commit when the route writes and the upstream said 2xx, unless it said the
    // reply is a replay of a key it already executed (below).
    void take_reply(http::response<http::string_body>& reply) {
        exchange& c = *attempt_;
        record::wire_detail& wire = c.wire;
        const record::journal_record& record = c.record;
        wire.upstream_ns = elapsed();
        wire.upstream_status = static_cast<int>(reply.result_int());
        held_ = service_response{};
        held_.status = static_cast<int>(reply.result_int());
        for (const auto& field : reply.base()) {
            if (is_hop_by_hop(field.name())) continue;
            held_.headers.push_back({std::string{to_std(field.name_string())}, std::string{to_std(field.value())}});
        }
        held_.body = std::move(reply.body());
        held_.interim = std::move(interim_);
        server_context& context = backend_.context_;
        const effect_semantics semantics = context.model.classify(record.method, record.target);
        const bool writes = semantics == effect_semantics::non_idempotent || semantics == effect_semantics::idempotent_write;
        if (!writes || held_.status < 200 || held_.status >= 300) return;
        if (replayed_by_upstream(reply)) {
            held_.effect = record::effect_kind::replayed;
            return;
        }
        held_.effect = record::effect_kind::committed;
        context.effects.record({record.operation, record.attempt, record.seq, c.connection_id, forwarded_at_, record.method,
                                record.target, semantics, "upstream " + std::to_string(held_.status)});
    }

    void fail(const char* why) {
        close();
        ++backend_.failures_;
        record::wire_detail& wire = attempt_->wire;
        wire.upstream_ns = elapsed();
        wire.upstream_error = why;
        const bool timeout = std::string_view{why} == "timeout";
        held_ = problem(timeout ? 504 : 502, timeout ? "Gateway Timeout" : "Bad Gateway", std::string{"upstream "} + why);
        finish();
    }

    void finish() {
        finished_ = true;
        const std::shared_ptr<fetch_waiter> owner = std::move(owner_);
        attempt_ = nullptr;
        owner->on_fetched();
    }

    std::int64_t elapsed() const {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(steady::now() - started_).count();
    }

    upstream_backend& backend_;
    const std::size_t worker_;
    const listener_executor executor_;
    std::unique_ptr<connection_stream> stream_;  // TCP, or TLS over it; pooled between exchanges
    beast::flat_buffer buffer_;
    std::optional<http::response_parser<http::string_body>> parser_;
    std::shared_ptr<fetch_waiter> owner_;  // while a fetch is in progress
    exchange* attempt_ = nullptr;          // the attempt it is for, which owner_ keeps alive
    std::string head_;
    std::string body_;
    std::string interim_;
    unsigned interim_count_ = 0;
    service_response held_;
    std::int64_t forwarded_at_ = 0;
    steady::time_point started_{};
    steady::time_point deadline_{};
    steady::time_point connect_deadline_{};
    bool head_request_ = false;
    bool connecting_ = false;
    bool timed_out_ = false;
    bool connect_timed_out_ = false;
    bool cancelled_ = false;
    bool finished_ = true;
};

upstream_backend::upstream_backend(server_context& context, upstream_settings settings)
    : context_{context},
      settings_{std::move(settings)},
      tls_{settings_.tls ? tls::client_context(*settings_.tls) : nullptr},
      pools_(std::max<std::size_t>(settings_.workers, 1)) {}

upstream_backend::~upstream_backend() = default;

error_code upstream_backend::resolve() {
    error_code ec;
    endpoints_ = resolve_upstream(settings_.host, settings_.port, ec);
    return ec;
}

std::unique_ptr<backend_channel> upstream_backend::open_channel(std::size_t worker, listener_executor executor) {
    return std::make_unique<upstream_channel>(*this, worker, executor);
}

std::optional<std::chrono::nanoseconds> upstream_backend::watch_period() const {
    return std::chrono::nanoseconds{std::min(settings_.connect_timeout, settings_.upstream_timeout)};
}

void upstream_backend::close_idle() {
    for (auto& pool : pools_) pool.clear();
}

}  // namespace faultline::server::detail
