#include "http_connection.hpp"

#include "action_executor.hpp"
#include "framing.hpp"
#include "h2_session.hpp"
#include "http_fields.hpp"
#include "write_now.hpp"

#include "faultline/retry/retry_after.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/stream_base.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include "faultline/config/duration.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <utility>

namespace faultline::server::detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace {

// How long a closing connection waits for the client's FIN after ours, so that unread client bytes
// do not turn our FIN into an RST. Bounds every close.
constexpr std::chrono::seconds linger_limit{2};
// Pipelined requests served in a row before yielding to the scheduler.
constexpr std::size_t max_inline_requests = 8;
// Bytes asked for per read: one typical request, or a large body in few reads.
constexpr std::size_t read_chunk = 16 * 1024;
// The interim reply a client that sent `Expect: 100-continue` waits for before it sends the body.
constexpr std::string_view continue_reply = "HTTP/1.1 100 Continue\r\n\r\n";

constexpr std::string_view server_name = "faultline";

// The Date header, formatted at most once per second per thread.
const std::string& date_header(wall_time_point now) {
    thread_local std::int64_t cached_second = -1;
    thread_local std::string cached;
    const auto second = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
    if (second != cached_second) {
        cached = retry::format_http_date(now);
        cached_second = second;
    }
    return cached;
}

// The bytes of a Beast response's head (status line, fields, blank line).
std::string serialize_head(const http::response<http::string_body>& res) {
    http::fields::writer writer{res.base(), res.version(), res.result_int()};
    const auto buffers = writer.get();
    std::string out(asio::buffer_size(buffers), '\0');
    asio::buffer_copy(asio::buffer(out), buffers);
    return out;
}

std::string error_json(std::string_view message) {
    return boost::json::serialize(boost::json::object{{"error", message}});
}

std::pair<const std::string&, const std::string&> header_pair(const http_header& h) { return {h.name, h.value}; }
std::pair<const std::string&, const std::string&> header_pair(const std::pair<std::string, std::string>& h) {
    return {h.first, h.second};
}

}  // namespace

http_connection::http_connection(std::shared_ptr<http_core> core, listener_socket socket, std::uint64_t id,
                                 std::size_t worker, std::int64_t accepted_ns, bool control_only, bool closed_at_start,
                                 tls_fault fault)
    : core_{std::move(core)},
      stream_{std::move(socket), fault.context != nullptr ? fault.context : core_->settings.tls.served.get()},
      timer_{stream_.socket().get_executor()},
      watchdog_{stream_.socket().get_executor()},
      channel_{control_only ? nullptr : core_->behind->open_channel(worker, stream_.socket().get_executor())},
      id_{id},
      worker_{worker},
      accepted_ns_{accepted_ns},
      control_only_{control_only},
      closed_at_start_{closed_at_start},
      stamps_replies_{core_->behind && core_->behind->stamps_replies()},
      tls_fault_{std::move(fault)} {
    attempt_.connection_id = id_;
    attempt_.socket = &stream_.socket();
    attempt_.core = core_.get();
}

http_connection::~http_connection() {
    // Every attempt ends in exactly one journal record, even one cut off by a forced stop (the
    // HTTP/2 session's streams' too, as it goes).
    h2_.reset();
    if (attempt_.open) finish_attempt(response_started() ? record::wire_outcome::truncated : record::wire_outcome::closed);
    core_->listen.remove(control_only_ ? *core_->control_port : core_->service_port, id_);
}

void http_connection::start() {
    error_code ignored;
    stream_.socket().non_blocking(true, ignored);
    asio::dispatch(stream_.socket().get_executor(), [self = shared_from_this()] {
        if (self->closed_at_start_) return self->do_graceful_close();
        const auto now = steady::now();
        self->set_read_deadline(read_phase::header, now);
        self->arm_watchdog(std::min(self->read_deadline_, now + self->watch_period()));
        if (self->tls_fault_.verdict == faults::connection_verdict::tls_abort_handshake ||
            self->tls_fault_.verdict == faults::connection_verdict::tls_stall_handshake) {
            return self->read_hello();
        }
        if (self->stream_.secure()) return self->do_handshake();
        self->do_read();
    });
}

void http_connection::read_hello() {
    buffer_.clear();
    stream_.socket().async_read_some(buffer_.prepare(4096), [self = shared_from_this()](error_code ec, std::size_t) {
        if (self->state_ == state::closing) return;
        if (ec) return self->close_now();  // the client left first
        const bool abort = self->tls_fault_.verdict == faults::connection_verdict::tls_abort_handshake;
        record::server_event event;
        event.kind = record::server_event_kind::tls_handshake_failed;
        event.at_ns = self->core_->since_start_ns();
        event.rule = self->tls_fault_.rule;
        event.peer = self->peer();
        event.detail = abort ? "abort_handshake: reset after the client's hello"
                             : "stall_handshake: the client's hello is not answered (closed at header_timeout)";
        self->core_->context.records.append_event(std::move(event));
        if (abort) return self->reset_now();
        self->read_hello();  // swallow whatever else it sends; the header deadline ends the stall
    });
}

// The client refused the certificate it had to refuse: the rule's evidence, never rate-limited.
void http_connection::journal_certificate_refused(const std::string& how) {
    if (certificate_refusal_journaled_) return;
    certificate_refusal_journaled_ = true;
    record::server_event event;
    event.kind = record::server_event_kind::certificate_refused;
    event.at_ns = core_->since_start_ns();
    event.rule = tls_fault_.rule;
    event.peer = peer();
    event.detail = std::string{faults::connection_verdict_names(tls_fault_.verdict)} + ": " + how;
    core_->context.records.append_event(std::move(event));
}

// A connection over a bad certificate that ends having carried no request: its client refused the
// certificate, though not in the handshake — clients that check it after (curl's name check, GnuTLS)
// close before their first request, and a run stops its server right after its client exits, maybe
// before that close is read. Either way nothing was sent over it.
void http_connection::note_unused_bad_certificate() {
    const bool carried = requests_read_ > 0 || (h2_ && h2_->requests() > 0);
    if (!carried) journal_certificate_refused("the connection ended with no request over it");
}

std::string_view http_connection::bad_certificate_rule() const {
    return presents_bad_certificate() ? std::string_view{tls_fault_.rule} : std::string_view{};
}

bool http_connection::presents_bad_certificate() const {
    using v = faults::connection_verdict;
    return tls_fault_.verdict == v::tls_expired_certificate || tls_fault_.verdict == v::tls_wrong_name ||
           tls_fault_.verdict == v::tls_untrusted_issuer;
}

// TLS: the handshake runs under the first request's header_timeout (a client that connects and never
// says hello holds a connection as a slowloris does). One that fails is journaled with OpenSSL's
// reason (a client that rejected the certificate, plain HTTP sent to the TLS port), not as an attempt.
void http_connection::do_handshake() {
    stream_.tls().async_handshake(asio::ssl::stream_base::server,
                                  [self = shared_from_this()](error_code ec) { self->on_handshake(ec); });
}

void http_connection::on_handshake(error_code ec) {
    if (state_ == state::closing) return;  // past its deadline, or stopped
    if (ec) {
        ++core_->tls_handshake_failures;
        if (presents_bad_certificate()) {
            journal_certificate_refused(ec.message());
            return close_now();
        }
        core_->journal_limit_event(record::server_event_kind::tls_handshake_failed, peer(), ec.message());
        return close_now();
    }
    tls_established_ = true;
    // ALPN (tls::server_context) chose the protocol; a client that offered none speaks HTTP/1.1.
    const unsigned char* alpn = nullptr;
    unsigned int alpn_size = 0;
    SSL_get0_alpn_selected(stream_.tls().native_handle(), &alpn, &alpn_size);
    if (std::string_view{reinterpret_cast<const char*>(alpn), alpn_size} == "h2") return start_h2("h2");
    do_read();
}

void http_connection::start_h2(std::string_view protocol) {
    state_ = state::multiplexed;
    h2_ = std::make_unique<h2_session>(*this, protocol);
    h2_->start(buffer_);
}

void http_connection::enter(attempt_phase phase) {
    switch (phase) {
        case attempt_phase::running: state_ = state::busy; return;
        case attempt_phase::held: state_ = state::held; return;
        case attempt_phase::fetching: state_ = state::fetching; return;
        case attempt_phase::other: return;
    }
}

attempt_phase http_connection::phase() const {
    switch (state_) {
        case state::busy: return attempt_phase::running;
        case state::held: return attempt_phase::held;
        case state::fetching: return attempt_phase::fetching;
        default: return attempt_phase::other;
    }
}

void http_connection::on_listener_stop() {
    asio::dispatch(stream_.socket().get_executor(), [self = shared_from_this()] {
        self->stopping_ = true;
        if (self->state_ == state::idle) return self->close_now();
        if (self->state_ == state::multiplexed) return self->h2_->on_listener_stop();
        if (self->state_ == state::held) return lifecycle::release_barrier_group(*self);
        if (self->state_ == state::hanging) return self->end_hang();
        if (self->state_ == state::closing) return self->close_now();
    });
}

void http_connection::force_close() {
    asio::dispatch(stream_.socket().get_executor(), [self = shared_from_this()] {
        self->stopping_ = true;
        // The rest of the group is not left waiting for this one; this one's wake finds it closed.
        if (self->state_ == state::held) lifecycle::release_barrier_group(*self);
        if (self->channel_) self->channel_->cancel();
        if (self->h2_) self->h2_->cancel_streams();
        self->close_now();
    });
}

// Reads one request: Beast's parser fed from our own buffer and read loop (what http::async_read
// does, minus its composed-operation layers, which cost more than the parsing on this path).
void http_connection::do_read() {
    if (stopping_ || core_->listen.stopping()) return close_now();
    state_ = state::idle;
    continue_sent_ = false;
    // The first request's deadline runs from the accept (set in start()).
    if (requests_read_ > 0) set_read_deadline(buffer_.size() > 0 ? read_phase::header : read_phase::idle, steady::now());
    parser_.emplace();
    parser_->body_limit(core_->settings.body_limit);
    parser_->eager(true);
    bytes_in_ = 0;
    parse_buffered();
}

void http_connection::parse_buffered() {
    // A plain connection that opens with HTTP/2's preface speaks h2c (RFC 9113 3.3, prior
    // knowledge); until the first bytes tell, a prefix of the preface is only a reason to read on.
    if (requests_read_ == 0 && !stream_.secure() && buffer_.size() > 0 && !parser_->got_some()) {
        const std::string_view got{static_cast<const char*>(buffer_.data().data()), buffer_.size()};
        const std::string_view preface = h2_session::client_preface;
        if (got.substr(0, preface.size()) == preface.substr(0, got.size())) {
            if (got.size() >= preface.size()) return start_h2("h2c");
            return read_more();
        }
    }
    // Each put consumes bytes or asks for more, so this ends within buffer_.size() rounds.
    while (buffer_.size() > 0 && !parser_->is_done()) {
        error_code ec;
        const std::size_t used = parser_->put(buffer_.data(), ec);
        buffer_.consume(used);
        bytes_in_ += used;
        if (ec == http::error::need_more) break;
        if (ec) return on_read(ec);
        if (used == 0) break;
    }
    if (parser_->is_done()) return on_read({});
    // A client that asked to be told before it sends the body is told now (RFC 9110 10.1.1).
    if (parser_->is_header_done() && !continue_sent_) {
        const auto expect = parser_->get().find(http::field::expect);
        if (expect != parser_->get().end() && beast::iequals(expect->value(), "100-continue") &&
            parser_->get().version() >= 11) {
            return send_continue();
        }
    }
    read_more();
}

void http_connection::read_more() {
    inline_requests_ = 0;
    stream_.async_read_some(buffer_.prepare(read_chunk), [self = shared_from_this()](error_code ec, std::size_t n) {
        self->buffer_.commit(n);
        // The next request has begun: from now on it has header_timeout to arrive in full.
        if (n > 0 && self->read_phase_ == read_phase::idle) {
            if (!self->leave_idle()) return;  // evicted: it closes without reading this request
            self->set_read_deadline(read_phase::header, steady::now());
        }
        if (ec == asio::error::eof) return self->on_eof();
        if (ec) return self->on_read(ec);
        self->parse_buffered();
    });
}

// Written before the body is read, outside any attempt: the client's wait is not a response. A
// request refused at its head (a body over the limit) never gets here.
void http_connection::send_continue() {
    continue_sent_ = true;
    stream_.async_write(asio::buffer(continue_reply), [self = shared_from_this()](error_code ec, std::size_t) {
        if (ec) return self->close_now();
        self->parse_buffered();
    });
}

void http_connection::on_eof() {
    if (!parser_->got_some()) return on_read(http::error::end_of_stream);
    error_code ec;
    parser_->put_eof(ec);
    on_read(ec ? ec : error_code{http::error::partial_message});
}

void http_connection::on_read(error_code ec) {
    if (ec == http::error::end_of_stream) return do_graceful_close();
    if (ec == asio::error::operation_aborted) return close_now();
    if (ec && ec.category() == http::make_error_code(http::error::bad_target).category() &&
        ec != http::error::partial_message) {
        return reject(ec);
    }
    if (ec) return close_now();
    state_ = state::busy;
    ++requests_read_;
    attempt_.request = parser_->release();
    if (auto problem = framing_problem(attempt_.request)) return reject(problem->status, std::move(problem->message));
    if (control_only_) return serve_control();
    lifecycle::begin(*this, {requests_read_, accepted_ns_, bytes_in_, {}, {}, bad_certificate_rule()});
}

// ---- read deadlines ----

void http_connection::set_read_deadline(read_phase phase, steady::time_point from) {
    const server_limits& limits = core_->context.limits;
    read_phase_ = phase;
    // Only service connections make room at the service cap; control ones have their own.
    if (phase == read_phase::idle && !control_only_) {
        idle_since_ns_.store(core_->since_start_ns(), std::memory_order_release);
    }
    const auto timeout = phase == read_phase::idle ? limits.idle_timeout : limits.header_timeout;
    read_deadline_ = from + std::chrono::duration_cast<steady::duration>(timeout);
}

void http_connection::arm_watchdog(steady::time_point at) {
    watchdog_.expires_at(at);
    watchdog_.async_wait([self = shared_from_this()](error_code ec) {
        if (!ec) self->on_watchdog();  // cancelled only when the connection closes
    });
}

bool http_connection::leave_idle() {
    std::int64_t since = idle_since_ns_.load(std::memory_order_acquire);
    while (since >= 0 && !idle_since_ns_.compare_exchange_weak(since, not_idle, std::memory_order_acq_rel)) {
    }
    return since != evicting;
}

std::optional<std::int64_t> http_connection::idle_since() const {
    const std::int64_t since = idle_since_ns_.load(std::memory_order_acquire);
    if (since < 0) return std::nullopt;
    return since;
}

bool http_connection::evict_if_idle_since(std::int64_t since, std::size_t cap) {
    if (!idle_since_ns_.compare_exchange_strong(since, evicting, std::memory_order_acq_rel)) return false;
    asio::post(stream_.socket().get_executor(), [self = shared_from_this(), cap] {
        if (self->state_ == state::closing) return;
        ++self->core_->idle_evicted;
        self->core_->journal_limit_event(record::server_event_kind::idle_evicted, self->peer(),
                                         "idle kept-alive connection closed after " +
                                             std::to_string(self->requests_read_) +
                                             " requests, to make room at the cap of " + std::to_string(cap));
        self->close_now();
    });
    return true;
}

// Deadlines move with every request without touching the timer; it wakes at most every period
// (the shortest timeout, the backend's included, so no deadline set since it was armed can pass
// unnoticed) and compares. A fault's own waits (a delay, a hang, a barrier) are not reading and
// never time out; only a write the client does not take does (write_timeout), and a fetch from the
// backend past its own deadlines.
http_connection::steady::duration http_connection::watch_period() const {
    const server_limits& limits = core_->context.limits;
    auto period = std::min({limits.header_timeout, limits.idle_timeout, limits.write_timeout});
    if (const auto backend_period = core_->behind ? core_->behind->watch_period() : std::nullopt) period = std::min(period, *backend_period);
    return std::chrono::duration_cast<steady::duration>(period);
}

void http_connection::on_watchdog() {
    if (state_ == state::closing) return;
    const auto now = steady::now();
    const auto next = now + watch_period();
    if (state_ == state::multiplexed) {
        if (write_deadline_ && now >= *write_deadline_) return on_write_deadline_passed();
        const auto due = h2_->on_watchdog(now);
        if (state_ != state::multiplexed) return;  // it ended the connection
        auto at = due ? std::min(*due, next) : next;
        if (write_deadline_) at = std::min(at, *write_deadline_);
        return arm_watchdog(at);
    }
    if (state_ == state::fetching) {
        const auto due = channel_->expire_if_due(now);
        return arm_watchdog(due ? std::min(*due, next) : next);
    }
    if (state_ != state::idle) {
        if (!write_deadline_) return arm_watchdog(next);
        if (now < *write_deadline_) return arm_watchdog(std::min(*write_deadline_, next));
        return on_write_deadline_passed();
    }
    if (now < read_deadline_) return arm_watchdog(std::min(read_deadline_, next));
    on_read_deadline_passed();
}

void http_connection::on_write_deadline_passed() {
    ++core_->write_timeouts;
    core_->journal_limit_event(record::server_event_kind::write_timeout, peer(),
                               "a write of " + std::to_string(waiting_write_bytes_) + " bytes not taken within " +
                                   config::format_duration(core_->context.limits.write_timeout) +
                                   "; connection reset");
    // The write's handler then ends the attempt (client_gone).
    reset_now();
}

void http_connection::on_read_deadline_passed() {
    const server_limits& limits = core_->context.limits;
    if (read_phase_ == read_phase::idle) {
        if (!leave_idle()) return;  // evicted meanwhile: the eviction closes it
        ++core_->idle_timeouts;
        core_->journal_limit_event(record::server_event_kind::idle_timeout, peer(),
                                   "idle for " + config::format_duration(limits.idle_timeout) + " after " +
                                       std::to_string(requests_read_) + " requests");
        return do_graceful_close();
    }
    ++core_->header_timeouts;
    const bool in_handshake = stream_.secure() && !tls_established_;
    core_->journal_limit_event(record::server_event_kind::header_timeout, peer(),
                               (in_handshake ? "TLS handshake not complete within " : "request not complete within ") +
                                   config::format_duration(limits.header_timeout) + " (" +
                                   std::to_string(buffer_.size() + bytes_in_) + " bytes received)");
    close_now();
}

std::string http_connection::peer() const {
    error_code ec;
    const auto endpoint = stream_.socket().remote_endpoint(ec);
    if (ec) return {};
    const std::string address = endpoint.address().to_string();
    return (endpoint.address().is_v6() ? "[" + address + "]" : address) + ":" + std::to_string(endpoint.port());
}

// Unparseable HTTP: 400 (413 / 431 for the limits) and close. Not an attempt: not journaled.
void http_connection::reject(error_code ec) {
    http::status status = http::status::bad_request;
    if (ec == http::error::body_limit) status = http::status::payload_too_large;
    if (ec == http::error::header_limit) status = http::status::request_header_fields_too_large;
    reject(status, "bad request: " + ec.message());
}

void http_connection::reject(http::status status, std::string message) {
    state_ = state::busy;
    ++core_->bad_requests;
    response_t res{status, 11};
    res.set(http::field::server, server_name);
    res.set(http::field::content_type, "application/json");
    res.body() = error_json(message);
    res.keep_alive(false);
    res.prepare_payload();
    set_reply(std::move(res));
    send_response();
}

void http_connection::serve_control() {
    ++core_->control_requests;
    const request_t& request = attempt_.request;
    response_t res = core_->control(request, peer());
    if (!is_control_target(to_std(request.target()))) {
        res = {http::status::not_found, request.version()};
        res.set(http::field::content_type, "application/json");
        res.body() = error_json("this port serves only the control API under /__faultline/");
        res.keep_alive(request.keep_alive());
        res.prepare_payload();
    }
    set_reply(std::move(res));
    send_response();
}

// ---- one attempt: attempt_lifecycle.hpp ----

void http_connection::on_fetched() { lifecycle::on_fetched(*this); }

// The reply's head is written here directly (status line, Server and Date for a service's reply,
// the reply's own headers, Content-Length, Connection): building a Beast fields container for it
// cost more than the rest of a small request's handling. `content_length` overrides the body's size (a truncated reply's
// promise); `framed_by_close` leaves it out, so the body ends with the connection. No Content-Length and no body
// where HTTP allows none (1xx, 204, 304).
template <class Headers>
void http_connection::compose_reply(int status, const Headers& headers, std::string body,
                                    std::optional<std::size_t> content_length, bool framed_by_close) {
    using namespace std::string_view_literals;  // literals with their length: no strlen per piece
    status = std::clamp(status, 100, 999);
    const request_t& request = attempt_.request;
    attempt_.record.status = static_cast<std::uint16_t>(status);
    std::string& head = reply_.head;
    head.assign(request.version() >= 11 ? "HTTP/1.1 "sv : "HTTP/1.0 "sv);
    char digits[24];
    head.append(digits, static_cast<std::size_t>(std::to_chars(digits, digits + sizeof digits, status).ptr - digits));
    head.push_back(' ');
    const auto reason = http::obsolete_reason(http::int_to_status(static_cast<unsigned>(status)));
    head.append(reason.data(), reason.size()).append("\r\n"sv);
    if (stamps_replies_) {
        head.append("Server: "sv).append(server_name).append("\r\nDate: "sv).append(date_header(attempt_.wall_now)).append("\r\n"sv);
    }
    for (const auto& h : headers) {
        const auto& [name, value] = header_pair(h);
        head.append(name).append(": "sv).append(value).append("\r\n"sv);
        note_reply_field(attempt_, name, value);
    }
    const bool bodiless = status < 200 || status == 204 || status == 304;
    if (bodiless) body.clear();
    if (!bodiless && !framed_by_close) {
        const std::size_t length = content_length.value_or(body.size());
        head.append("Content-Length: "sv);
        head.append(digits, static_cast<std::size_t>(std::to_chars(digits, digits + sizeof digits, length).ptr - digits));
        head.append("\r\n"sv);
    }
    reply_.keep_alive = request.keep_alive() && !framed_by_close;
    if (!reply_.keep_alive && request.version() >= 11) head.append("Connection: close\r\n"sv);
    if (reply_.keep_alive && request.version() < 11) head.append("Connection: keep-alive\r\n"sv);
    head.append("\r\n"sv);
    reply_.body = std::move(body);
}

template <class Headers>
void http_connection::set_reply_framed_by_close(int status, const Headers& headers, std::string body) {
    compose_reply(status, headers, std::move(body), std::nullopt, true);
}

// A reply built as a Beast message (the control API, bad requests).
void http_connection::set_reply(response_t res) {
    reply_.head = serialize_head(res);
    reply_.keep_alive = res.keep_alive();
    reply_.body = std::move(res.body());
}

// The backend's interim replies (an upstream's 103 Early Hints) go ahead of its final one, to a client
// that can take them (HTTP/1.1).
void http_connection::set_reply(service_response reply) {
    set_reply(reply.status, reply.headers, std::move(reply.body));
    if (!reply.interim.empty() && attempt_.request.version() >= 11) reply_.head.insert(0, reply.interim);
}

// ---- writing ----

void http_connection::mark_response_started() {
    if (!response_started()) attempt_.record.response_ns = core_->since_start_ns();
}

// Head and body go out in one gathered write, inline when the socket takes it (write_now.hpp).
void http_connection::send_response() {
    if (attempt_.open) mark_response_started();
    const head_and_body buffers{asio::buffer(reply_.head), asio::buffer(reply_.body)};
    error_code ec;
    std::size_t sent = 0;
    if (stream_.write_now(buffers, ec, sent)) return on_write(ec, sent);
    begin_waiting_write(asio::buffer_size(buffers) - sent);
    stream_.async_write(rest_of(buffers, sent), [self = shared_from_this(), sent](error_code ec2, std::size_t n) {
        self->write_deadline_.reset();
        self->on_write(ec2, sent + n);
    });
}

void http_connection::begin_waiting_write(std::size_t bytes) {
    waiting_write_bytes_ = bytes;
    write_deadline_ =
        steady::now() + std::chrono::duration_cast<steady::duration>(core_->context.limits.write_timeout);
}

void http_connection::on_write(error_code ec, std::size_t bytes) {
    if (attempt_.open) {
        attempt_.wire.bytes_out += bytes;
        finish_attempt(ec || reply_refused_unread() ? record::wire_outcome::client_gone
                                                    : record::wire_outcome::responded);
    }
    if (ec) return close_now();
    if (!reply_.keep_alive) return do_graceful_close();
    // Pipelined requests may already be buffered: after a few served inline, go through the
    // scheduler so the stack stays bounded and other connections get their turn.
    if (++inline_requests_ < max_inline_requests) return do_read();
    inline_requests_ = 0;
    asio::post(stream_.socket().get_executor(), [self = shared_from_this()] { self->do_read(); });
}

// A reply that asks the client to wait (Retry-After) written to a client that had already closed the
// connection (an attempt timeout that ran out first): it never read what was asked, and checks must
// not hold it to the wait. A closed socket answers the reply's bytes with a reset, which on loopback
// is back before the write returns (SO_ERROR EPIPE); a half-closed client still reads and does not.
// One getsockopt, for such replies only.
bool http_connection::reply_refused_unread() {
    if (!attempt_.record.retry_after_ms) return false;
    int error = 0;
    socklen_t length = sizeof error;
    if (::getsockopt(stream_.socket().native_handle(), SOL_SOCKET, SO_ERROR, &error, &length) != 0) return false;
    return error == EPIPE || error == ECONNRESET;
}

// raw_[offset, offset + n), counted as bytes out; a client gone is the attempt's end.
template <class Next>
void http_connection::write_raw(std::size_t offset, std::size_t n, Next next) {
    mark_response_started();
    begin_waiting_write(n);
    stream_.async_write(asio::buffer(raw_.data() + offset, n),
                      [self = shared_from_this(), next](error_code ec, std::size_t written) {
                          self->write_deadline_.reset();
                          self->attempt_.wire.bytes_out += written;
                          if (ec) {
                              self->finish_attempt(record::wire_outcome::client_gone);
                              return self->close_now();
                          }
                          next(*self);
                      });
}

template <class Next>
void http_connection::wait_then(faults::duration wait, Next next) {
    // Rules are checked against max_fault_wait at load; a drawn wait (a normal delay without max) is
    // clamped here.
    timer_.expires_after(std::min(wait, core_->context.limits.max_fault_wait));
    timer_.async_wait([self = shared_from_this(), next](error_code ec) {
        if (ec) return self->close_now();  // forced stop during the delay
        next(*self);
    });
}

// ---- hanging: say nothing until the client goes away or the limit passes ----

void http_connection::start_hang(faults::duration limit) {
    state_ = state::hanging;
    if (stopping_) return end_hang();
    timer_.expires_after(std::min(limit, core_->context.limits.max_fault_wait));
    timer_.async_wait([self = shared_from_this()](error_code ec) {
        if (!ec) self->end_hang();
    });
    watch_hang();
}

void http_connection::watch_hang() {
    stream_.async_read_some(asio::buffer(scratch_), [self = shared_from_this()](error_code ec, std::size_t) {
        if (self->state_ != state::hanging) return;
        if (ec) return self->end_hang();
        self->watch_hang();  // the client may send more; keep ignoring it
    });
}

void http_connection::end_hang() {
    if (state_ != state::hanging) return;
    state_ = state::closing;
    timer_.cancel();
    finish_attempt(record::wire_outcome::hung);
    close_now();
}

void http_connection::refuse_stream() {
    not_mapped("refused_stream has no HTTP/1.1 form: the connection was closed with no reply");
    finish_attempt(record::wire_outcome::closed);
    do_graceful_close();
}

void http_connection::go_away(bool processed) {
    if (!processed) not_mapped("goaway has no HTTP/1.1 form: the connection was closed with no reply");
    finish_attempt(record::wire_outcome::closed);
    do_graceful_close();
}

void http_connection::not_mapped(std::string detail) {
    core_->journal_limit_event(record::server_event_kind::fault_not_mapped, peer(), std::move(detail),
                               std::string{attempt_.record.rule});
}

// ---- ending connections ----

void http_connection::reset_now() {
    state_ = state::closing;
    if (h2_) h2_->cancel_streams();
    error_code ignored;
    stream_.socket().set_option(asio::socket_base::linger{true, 0}, ignored);
    stream_.socket().close(ignored);
    timer_.cancel();
    watchdog_.cancel();
}

void http_connection::close_now() {
    if (presents_bad_certificate()) [[unlikely]] note_unused_bad_certificate();
    state_ = state::closing;
    if (h2_) h2_->cancel_streams();
    error_code ignored;
    stream_.socket().close(ignored);
    timer_.cancel();
    watchdog_.cancel();
}

// FIN, then wait (bounded) for the client's FIN, so unread bytes do not turn the close into an RST.
void http_connection::do_graceful_close() {
    if (presents_bad_certificate()) [[unlikely]] note_unused_bad_certificate();
    if (tls_established_) {
        state_ = state::closing;
        watchdog_.cancel();
        return close_tls();
    }
    fin_and_linger();
}

// A TCP FIN (under TLS: with no close_notify, which tls_truncate wants), then the linger.
void http_connection::fin_and_linger() {
    state_ = state::closing;
    watchdog_.cancel();
    error_code ignored;
    stream_.socket().shutdown(listener_socket::shutdown_send, ignored);
    if (stopping_) return close_now();
    timer_.expires_after(linger_limit);
    timer_.async_wait([self = shared_from_this()](error_code ec) {
        if (!ec) self->close_now();
    });
    drain();
}

// TLS ends with close_notify, so the client can tell a complete exchange from a cut one (a close
// without it is what a fault's close or reset leaves), waiting at most the linger limit for the
// client's own.
void http_connection::close_tls() {
    if (stopping_) return close_now();
    timer_.expires_after(linger_limit);
    timer_.async_wait([self = shared_from_this()](error_code ec) {
        if (!ec) self->close_now();
    });
    stream_.tls().async_shutdown([self = shared_from_this()](error_code) { self->close_now(); });
}

void http_connection::drain() {
    stream_.async_read_some(asio::buffer(scratch_), [self = shared_from_this()](error_code ec, std::size_t) {
        if (ec) return self->close_now();
        self->drain();
    });
}

}  // namespace faultline::server::detail
