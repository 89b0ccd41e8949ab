#include "session.hpp"

#include "action_executor.hpp"
#include "http_fields.hpp"

#include "faultline/retry/retry_after.hpp"
#include "faultline/server/idempotency.hpp"
#include "faultline/server/relay.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_suffix.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include "faultline/config/duration.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <utility>
#include <vector>

namespace faultline::harness::server_detail {

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

// RFC 9112 §6.1 and §6.3: a request's Transfer-Encoding must end in `chunked`, once, and this
// server decodes no other coding; with Content-Length beside it the framing is ambiguous
// (request smuggling). 400 for bad framing, 501 for a coding it does not implement.
// Out of line and cold: most requests have no Transfer-Encoding, and the check's code must not
// crowd the hot path's inlining.
[[gnu::cold, gnu::noinline]] std::optional<std::pair<http::status, std::string>> framing_problem(
    const http::request<http::string_body>& req) {
    const auto [first, last] = req.base().equal_range(http::field::transfer_encoding);
    if (req.base().find(http::field::content_length) != req.base().end()) {
        return std::pair{http::status::bad_request, std::string{"bad request: Transfer-Encoding with Content-Length"}};
    }
    std::vector<std::string> codings;
    for (auto it = first; it != last; ++it) {
        std::string_view list = to_std(it->value());
        while (!list.empty()) {
            const auto comma = list.find(',');
            std::string_view item = list.substr(0, comma);
            const auto begin = item.find_first_not_of(" \t");
            const auto end = item.find_last_not_of(" \t");
            item = begin == std::string_view::npos ? std::string_view{} : item.substr(begin, end - begin + 1);
            if (!item.empty()) {
                std::string lowered{item};
                for (char& c : lowered) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
                codings.push_back(std::move(lowered));
            }
            if (comma == std::string_view::npos) break;
            list.remove_prefix(comma + 1);
        }
    }
    if (codings.empty() || codings.back() != "chunked" ||
        std::count(codings.begin(), codings.end(), "chunked") != 1) {
        return std::pair{http::status::bad_request,
                         std::string{"bad request: Transfer-Encoding must end in chunked, applied once (RFC 9112 6.3)"}};
    }
    if (codings.size() > 1) {
        return std::pair{http::status::not_implemented,
                         "transfer coding '" + codings.front() + "' is not implemented; only chunked is"};
    }
    return std::nullopt;
}

std::string error_json(std::string_view message) {
    return boost::json::serialize(boost::json::object{{"error", message}});
}

std::pair<const std::string&, const std::string&> header_pair(const http_header& h) { return {h.name, h.value}; }
std::pair<const std::string&, const std::string&> header_pair(const std::pair<std::string, std::string>& h) {
    return {h.first, h.second};
}

}  // namespace

session::session(std::shared_ptr<server::core> core, socket_t socket, std::uint64_t id, std::int64_t accepted_ns,
                 bool control_only)
    : core_{std::move(core)},
      socket_{std::move(socket)},
      timer_{socket_.get_executor()},
      read_timer_{socket_.get_executor()},
      id_{id},
      accepted_ns_{accepted_ns},
      control_only_{control_only} {}

session::~session() {
    // Every attempt ends in exactly one journal record, even one cut off by a forced stop.
    if (attempt_open_) finish_attempt(response_started() ? wire_outcome::truncated : wire_outcome::closed);
    --(control_only_ ? core_->open_control : core_->open_connections);
    core_->unregister_session(id_);
}

void session::start() {
    core_->register_session(id_, shared_from_this());
    error_code ignored;
    socket_.non_blocking(true, ignored);
    asio::dispatch(socket_.get_executor(), [self = shared_from_this()] {
        const auto now = steady::now();
        self->set_read_deadline(read_phase::header, now);
        self->arm_read_timer(std::min(self->read_deadline_, now + self->read_check_period()));
        self->do_read();
    });
}

void session::start_closed() {
    asio::dispatch(socket_.get_executor(), [self = shared_from_this()] { self->do_graceful_close(); });
}

void session::on_server_stop() {
    asio::dispatch(socket_.get_executor(), [self = shared_from_this()] {
        self->stopping_ = true;
        if (self->state_ == state::idle) return self->close_now();
        if (self->state_ == state::held) return self->release_barrier_group();
        if (self->state_ == state::hanging) return self->end_hang();
        if (self->state_ == state::closing) return self->close_now();
    });
}

void session::force_close() {
    asio::dispatch(socket_.get_executor(), [self = shared_from_this()] {
        self->stopping_ = true;
        // The rest of the group is not left waiting for this one; this one's wake finds it closed.
        if (self->state_ == state::held) self->release_barrier_group();
        self->close_now();
    });
}

// Reads one request: Beast's parser fed from our own buffer and read loop (what http::async_read
// does, minus its composed-operation layers, which cost more than the parsing on this path).
void session::do_read() {
    if (stopping_ || core_->stopping) return close_now();
    state_ = state::idle;
    // The first request's deadline runs from the accept (set in start()).
    if (requests_read_ > 0) set_read_deadline(buffer_.size() > 0 ? read_phase::header : read_phase::idle, steady::now());
    parser_.emplace();
    parser_->body_limit(core_->options.body_limit);
    parser_->eager(true);
    bytes_in_ = 0;
    parse_buffered();
}

void session::parse_buffered() {
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
    inline_requests_ = 0;
    socket_.async_read_some(buffer_.prepare(read_chunk), [self = shared_from_this()](error_code ec, std::size_t n) {
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

void session::on_eof() {
    if (!parser_->got_some()) return on_read(http::error::end_of_stream);
    error_code ec;
    parser_->put_eof(ec);
    on_read(ec ? ec : error_code{http::error::partial_message});
}

void session::on_read(error_code ec) {
    if (ec == http::error::end_of_stream) return do_graceful_close();
    if (ec == asio::error::operation_aborted) return close_now();
    if (ec && ec.category() == http::make_error_code(http::error::bad_target).category() &&
        ec != http::error::partial_message) {
        return reject(ec);
    }
    if (ec) return close_now();
    state_ = state::busy;
    ++requests_read_;
    request_ = parser_->release();
    if (request_.base().find(http::field::transfer_encoding) != request_.base().end()) {
        if (auto problem = framing_problem(request_)) return reject(problem->first, std::move(problem->second));
    }
    if (control_only_) return serve_control();
    begin_attempt(bytes_in_);
}

// ---- read deadlines ----

void session::set_read_deadline(read_phase phase, steady::time_point from) {
    const server_limits& limits = core_->context.limits;
    read_phase_ = phase;
    // Only service connections make room at the service cap; control ones have their own.
    if (phase == read_phase::idle && !control_only_) {
        idle_since_ns_.store(core_->since_start_ns(), std::memory_order_release);
    }
    const auto timeout = phase == read_phase::idle ? limits.idle_timeout : limits.header_timeout;
    read_deadline_ = from + std::chrono::duration_cast<steady::duration>(timeout);
}

void session::arm_read_timer(steady::time_point at) {
    read_timer_.expires_at(at);
    read_timer_.async_wait([self = shared_from_this()](error_code ec) {
        if (!ec) self->on_read_timer();  // cancelled only when the connection closes
    });
}

bool session::leave_idle() {
    std::int64_t since = idle_since_ns_.load(std::memory_order_acquire);
    while (since >= 0 && !idle_since_ns_.compare_exchange_weak(since, not_idle, std::memory_order_acq_rel)) {
    }
    return since != evicting;
}

std::optional<std::int64_t> session::idle_since() const {
    const std::int64_t since = idle_since_ns_.load(std::memory_order_acquire);
    if (since < 0) return std::nullopt;
    return since;
}

bool session::evict_if_idle_since(std::int64_t since, std::size_t cap) {
    if (!idle_since_ns_.compare_exchange_strong(since, evicting, std::memory_order_acq_rel)) return false;
    asio::post(socket_.get_executor(), [self = shared_from_this(), cap] {
        if (self->state_ == state::closing) return;
        ++self->core_->idle_evicted;
        self->core_->journal_limit_event(server_event_kind::idle_evicted, self->peer(),
                                         "idle kept-alive connection closed after " +
                                             std::to_string(self->requests_read_) +
                                             " requests, to make room at the cap of " + std::to_string(cap));
        self->close_now();
    });
    return true;
}

// Deadlines move with every request without touching the timer; it wakes at most every check
// period (min of the timeouts, so no deadline set since it was armed can pass unnoticed) and
// compares. An attempt in progress (a delay, a hang, a barrier) is not reading and never times
// out; only a write the client does not take does (write_timeout).
session::steady::duration session::read_check_period() const {
    const server_limits& limits = core_->context.limits;
    return std::chrono::duration_cast<steady::duration>(
        std::min({limits.header_timeout, limits.idle_timeout, limits.write_timeout}));
}

void session::on_read_timer() {
    if (state_ == state::closing) return;
    const auto period = read_check_period();
    const auto now = steady::now();
    if (state_ != state::idle) {
        if (!write_deadline_) return arm_read_timer(now + period);
        if (now < *write_deadline_) return arm_read_timer(std::min(*write_deadline_, now + period));
        return on_write_deadline_passed();
    }
    if (now < read_deadline_) return arm_read_timer(std::min(read_deadline_, now + period));
    on_read_deadline_passed();
}

void session::on_write_deadline_passed() {
    ++core_->write_timeouts;
    core_->journal_limit_event(server_event_kind::write_timeout, peer(),
                               "a write of " + std::to_string(waiting_write_bytes_) + " bytes not taken within " +
                                   config::format_duration(core_->context.limits.write_timeout) +
                                   "; connection reset");
    // The write's handler then ends the attempt (client_gone).
    reset_now();
}

void session::on_read_deadline_passed() {
    const server_limits& limits = core_->context.limits;
    if (read_phase_ == read_phase::idle) {
        if (!leave_idle()) return;  // evicted meanwhile: the eviction closes it
        ++core_->idle_timeouts;
        core_->journal_limit_event(server_event_kind::idle_timeout, peer(),
                                   "idle for " + config::format_duration(limits.idle_timeout) + " after " +
                                       std::to_string(requests_read_) + " requests");
        return do_graceful_close();
    }
    ++core_->header_timeouts;
    core_->journal_limit_event(server_event_kind::header_timeout, peer(),
                               "request not complete within " + config::format_duration(limits.header_timeout) +
                                   " (" + std::to_string(buffer_.size() + bytes_in_) + " bytes received)");
    close_now();
}

std::string session::peer() const {
    error_code ec;
    const auto endpoint = socket_.remote_endpoint(ec);
    if (ec) return {};
    const std::string address = endpoint.address().to_string();
    return (endpoint.address().is_v6() ? "[" + address + "]" : address) + ":" + std::to_string(endpoint.port());
}

// Unparseable HTTP: 400 (413 / 431 for the limits) and close. Not an attempt: not journaled.
void session::reject(error_code ec) {
    http::status status = http::status::bad_request;
    if (ec == http::error::body_limit) status = http::status::payload_too_large;
    if (ec == http::error::header_limit) status = http::status::request_header_fields_too_large;
    reject(status, "bad request: " + ec.message());
}

void session::reject(http::status status, std::string message) {
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

void session::serve_control() {
    ++core_->control_requests;
    response_t res = core_->control.handle(request_, peer());
    if (!is_control_target(to_std(request_.target()))) {
        res = {http::status::not_found, request_.version()};
        res.set(http::field::content_type, "application/json");
        res.body() = error_json("this port serves only the control API under /__faultline/");
        res.keep_alive(request_.keep_alive());
        res.prepare_payload();
    }
    set_reply(std::move(res));
    send_response();
}

// ---- one attempt ----

void session::begin_attempt(std::size_t bytes_in) {
    server_context& ctx = core_->context;
    const http::fields& fields = request_.base();
    attempt_open_ = true;
    record_ = journal_record{};
    wire_ = wire_detail{};
    record_.connection = static_cast<std::uint32_t>(id_);  // 32 bits in the journal (journal_record.hpp)
    record_.connection_request = requests_read_;
    wire_.accepted_ns = accepted_ns_;
    record_.request_ns = core_->since_start_ns();
    // The record's strings are interned here, once per attempt (symbol.hpp): the journal keeps ids.
    record_.method = to_std(request_.method_string());
    record_.target = to_std(request_.target());
    wire_.bytes_in = bytes_in;
    record_.attempt_header = header_value(fields, "Faultline-Attempt");
    if (!record_.attempt_header) record_.attempt_header = header_value(fields, "x-envoy-attempt-count");
    record_.previous_attempts = header_value(fields, "grpc-previous-rpc-attempts");
    record_.deadline_ms = integer_header(fields, "Faultline-Deadline-Ms");
    if (!record_.deadline_ms) record_.deadline_ms = integer_header(fields, "x-envoy-expected-rq-timeout-ms");
    wire_.body_hash = hash_bytes(request_.body());

    const fields_source headers{fields};
    const faults::request_view request{record_.method, record_.target, headers, request_.body()};
    identity_ = identify(ctx.identity, request);
    record_.operation = identity_.value;
    record_.attempt = ctx.attempts.next(record_.operation);
    record_.seq = ctx.records.next_seq();
    record_.identity = identity_.source;
    record_.idempotency_key = identity_.idempotency_key;

    wall_now_ = core_->time.wall_now();
    const faults::attempt_context attempt{
        request,
        identity_.hash,
        record_.attempt,
        record_.seq,
        std::chrono::nanoseconds{record_.request_ns},
        wall_now_,
    };
    decision_ = ctx.engine.on_attempt(attempt);
    if (!decision_.has_fault()) {
        set_reply(run_service());
        return send_response();
    }
    record_.rule = decision_.rule();
    record_.fault = decision_.kind();
    if (decision_.barrier()) return hold_at_barrier();
    action_executor<session>::run(*this, *decision_.plan());
}

// Nothing is read or written while held: the client sees a slow server, the journal a gap between
// t_request and t_response. Every held attempt arms its own timer at the group's deadline and the
// first to fire releases them all, so a group never outlives its deadline.
void session::hold_at_barrier() {
    state_ = state::held;
    const faults::barrier_ticket& ticket = *decision_.barrier();
    const auto remaining = ticket.deadline() - std::chrono::nanoseconds{core_->since_start_ns()};
    timer_.expires_after(std::max(remaining, std::chrono::nanoseconds{0}));
    // The handler names its own group: by the time it runs, this connection may hold a later attempt.
    timer_.async_wait([ticket](error_code ec) {
        if (!ec) ticket.release_group();
    });
    // The wake may run on whichever thread releases the group; the attempt goes on on its own. It
    // holds the session until then, which the group's release (count, deadline or stop) bounds.
    ticket.on_release([self = shared_from_this(), executor = socket_.get_executor()] {
        asio::post(executor, [self] { self->on_barrier_released(); });
    });
    if (stopping_) release_barrier_group();
}

void session::on_barrier_released() {
    if (state_ != state::held) return;  // closed by a forced stop meanwhile
    state_ = state::busy;
    timer_.cancel();
    action_executor<session>::run(*this, *decision_.plan());
}

void session::release_barrier_group() { decision_.barrier()->release_group(); }

// The commit point: the idempotency layer first, then the service.
service_response session::run_service() {
    server_context& ctx = core_->context;
    const std::string_view method = record_.method;
    const std::string_view target = record_.target;
    const std::string& body = request_.body();
    auto begun = ctx.idempotency.begin(record_.idempotency_key, ctx.model.classify(method, target),
                                       request_fingerprint(method, target, body));
    if (begun.decision != idempotency_decision::proceed) {
        record_.effect = begun.response.effect;
        return std::move(begun.response);
    }
    // Neither the body nor the identity's text is read again once the service has them.
    service_request call{std::string{method},
                         std::string{target},
                         std::move(request_.body()),
                         std::move(identity_.value),
                         record_.attempt,
                         record_.seq,
                         id_,
                         core_->since_start_ns()};
    service_response reply = ctx.next_tier != nullptr ? ctx.next_tier->forward(call) : ctx.model.handle(call);
    ctx.idempotency.complete(record_.idempotency_key, reply);
    record_.effect = reply.effect;
    return reply;
}

// The reply's head is written here directly (status line, Server, Date, the reply's own headers,
// Content-Length, Connection): building a Beast fields container for it cost more than the rest
// of a small request's handling. `content_length` overrides the body's size (a truncated reply's
// promise). No Content-Length and no body where HTTP allows none (1xx, 204, 304).
template <class Headers>
void session::set_reply(int status, const Headers& headers, std::string body,
                        std::optional<std::size_t> content_length) {
    status = std::clamp(status, 100, 999);
    record_.status = static_cast<std::uint16_t>(status);
    std::string& head = reply_.head;
    head.assign(request_.version() >= 11 ? "HTTP/1.1 " : "HTTP/1.0 ");
    head.append(std::to_string(status)).push_back(' ');
    const auto reason = http::obsolete_reason(http::int_to_status(static_cast<unsigned>(status)));
    head.append(reason.data(), reason.size()).append("\r\nServer: ").append(server_name);
    head.append("\r\nDate: ").append(date_header(wall_now_)).append("\r\n");
    for (const auto& h : headers) {
        const auto& [name, value] = header_pair(h);
        head.append(name).append(": ").append(value).append("\r\n");
        if (beast::iequals(beast::string_view{name}, "Retry-After")) {
            if (const auto wait = retry::parse_retry_after(value, wall_now_)) {
                record_.retry_after_ms = std::chrono::duration_cast<std::chrono::milliseconds>(*wait).count();
            }
        }
    }
    const bool bodiless = status < 200 || status == 204 || status == 304;
    if (bodiless) body.clear();
    if (!bodiless) head.append("Content-Length: ").append(std::to_string(content_length.value_or(body.size())));
    if (!bodiless) head.append("\r\n");
    reply_.keep_alive = request_.keep_alive();
    if (!reply_.keep_alive && request_.version() >= 11) head.append("Connection: close\r\n");
    if (reply_.keep_alive && request_.version() < 11) head.append("Connection: keep-alive\r\n");
    head.append("\r\n");
    reply_.body = std::move(body);
}

// A reply built as a Beast message (the control API, bad requests).
void session::set_reply(response_t res) {
    reply_.head = serialize_head(res);
    reply_.keep_alive = res.keep_alive();
    reply_.body = std::move(res.body());
}

void session::set_reply(service_response reply) { set_reply(reply.status, reply.headers, std::move(reply.body)); }

// ---- writing ----

void session::mark_response_started() {
    if (!response_started()) wire_.response_started_ns = core_->since_start_ns();
}

// The head comes from Beast's field writer; head and body then go out in one gathered write. The
// write is tried at once on the non-blocking socket: a small response almost always fits the
// socket buffer, and finishing inline spares a trip through the scheduler (a reactor poll, a
// syscall that dominates on loopback). Only what does not fit waits for the reactor.
void session::send_response() {
    if (attempt_open_) mark_response_started();
    const std::array<asio::const_buffer, 2> buffers{asio::buffer(reply_.head), asio::buffer(reply_.body)};
    const std::size_t total = asio::buffer_size(buffers);
    error_code ec;
    const std::size_t sent = socket_.write_some(buffers, ec);
    if (ec && ec != asio::error::would_block && ec != asio::error::try_again) return on_write(ec, sent);
    if (sent == total) return on_write({}, sent);
    beast::buffers_suffix<std::array<asio::const_buffer, 2>> rest{buffers};
    rest.consume(sent);
    begin_waiting_write(total - sent);
    asio::async_write(socket_, rest, [self = shared_from_this(), sent](error_code ec2, std::size_t n) {
        self->write_deadline_.reset();
        self->on_write(ec2, sent + n);
    });
}

void session::begin_waiting_write(std::size_t bytes) {
    waiting_write_bytes_ = bytes;
    write_deadline_ =
        steady::now() + std::chrono::duration_cast<steady::duration>(core_->context.limits.write_timeout);
}

void session::on_write(error_code ec, std::size_t bytes) {
    if (attempt_open_) {
        wire_.bytes_out += bytes;
        finish_attempt(ec ? wire_outcome::client_gone : wire_outcome::responded);
    }
    if (ec) return close_now();
    if (!reply_.keep_alive) return do_graceful_close();
    // Pipelined requests may already be buffered: after a few served inline, go through the
    // scheduler so the stack stays bounded and other connections get their turn.
    if (++inline_requests_ < max_inline_requests) return do_read();
    inline_requests_ = 0;
    asio::post(socket_.get_executor(), [self = shared_from_this()] { self->do_read(); });
}

// raw_[offset, offset + n), counted as bytes out; a client gone is the attempt's end.
template <class Next>
void session::write_raw(std::size_t offset, std::size_t n, Next next) {
    mark_response_started();
    begin_waiting_write(n);
    asio::async_write(socket_, asio::buffer(raw_.data() + offset, n),
                      [self = shared_from_this(), next](error_code ec, std::size_t written) {
                          self->write_deadline_.reset();
                          self->wire_.bytes_out += written;
                          if (ec) {
                              self->finish_attempt(wire_outcome::client_gone);
                              return self->close_now();
                          }
                          next(*self);
                      });
}

template <class Next>
void session::wait_then(faults::duration wait, Next next) {
    // Rules are checked against max_fault_wait at load; a drawn wait (a normal delay without max) is
    // clamped here.
    timer_.expires_after(std::min(wait, core_->context.limits.max_fault_wait));
    timer_.async_wait([self = shared_from_this(), next](error_code ec) {
        if (ec) return self->close_now();  // forced stop during the delay
        next(*self);
    });
}

// ---- hanging: say nothing until the client goes away or the limit passes ----

void session::start_hang(faults::duration limit) {
    state_ = state::hanging;
    if (stopping_) return end_hang();
    timer_.expires_after(std::min(limit, core_->context.limits.max_fault_wait));
    timer_.async_wait([self = shared_from_this()](error_code ec) {
        if (!ec) self->end_hang();
    });
    watch_hang();
}

void session::watch_hang() {
    socket_.async_read_some(asio::buffer(scratch_), [self = shared_from_this()](error_code ec, std::size_t) {
        if (self->state_ != state::hanging) return;
        if (ec) return self->end_hang();
        self->watch_hang();  // the client may send more; keep ignoring it
    });
}

void session::end_hang() {
    if (state_ != state::hanging) return;
    state_ = state::closing;
    timer_.cancel();
    finish_attempt(wire_outcome::hung);
    close_now();
}

// ---- ending connections ----

void session::reset_now() {
    state_ = state::closing;
    error_code ignored;
    socket_.set_option(asio::socket_base::linger{true, 0}, ignored);
    socket_.close(ignored);
    timer_.cancel();
    read_timer_.cancel();
}

void session::close_now() {
    state_ = state::closing;
    error_code ignored;
    socket_.close(ignored);
    timer_.cancel();
    read_timer_.cancel();
}

// FIN, then wait (bounded) for the client's FIN, so unread bytes do not turn the close into an RST.
void session::do_graceful_close() {
    state_ = state::closing;
    read_timer_.cancel();
    error_code ignored;
    socket_.shutdown(socket_t::shutdown_send, ignored);
    if (stopping_) return close_now();
    timer_.expires_after(linger_limit);
    timer_.async_wait([self = shared_from_this()](error_code ec) {
        if (!ec) self->close_now();
    });
    drain();
}

void session::drain() {
    socket_.async_read_some(asio::buffer(scratch_), [self = shared_from_this()](error_code ec, std::size_t) {
        if (ec) return self->close_now();
        self->drain();
    });
}

void session::finish_attempt(wire_outcome outcome) {
    if (!attempt_open_) return;
    attempt_open_ = false;
    record_.outcome = outcome;
    if (outcome != wire_outcome::responded && outcome != wire_outcome::client_gone &&
        outcome != wire_outcome::truncated) {
        record_.status = 0;
        record_.retry_after_ms.reset();
    }
    record_.finished_ns = core_->since_start_ns();
    core_->context.records.append(record_, wire_);
    ++core_->attempts;
    decision_ = faults::fault_decision{};  // releases the active-fault and overload slots
}

}  // namespace faultline::harness::server_detail
