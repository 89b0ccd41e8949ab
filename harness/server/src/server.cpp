#include "faultline/server/server.hpp"

#include "faultline/core/random.hpp"
#include "faultline/server/control_api.hpp"
#include "faultline/retry/retry_after.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_suffix.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <variant>

namespace faultline::harness {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

// Each worker thread runs its own io_context and owns the connections accepted onto it, so a
// connection's handlers never hop threads and need no strand; the I/O objects name the concrete
// executor type, which spares the hot path any_io_executor's type erasure.
using executor_t = asio::io_context::executor_type;
using socket_t = asio::basic_stream_socket<tcp, executor_t>;
using acceptor_t = asio::basic_socket_acceptor<tcp, executor_t>;
using timer_t = asio::basic_waitable_timer<std::chrono::steady_clock, asio::wait_traits<std::chrono::steady_clock>,
                                           executor_t>;

namespace server_detail {

class session;

// How long a closing connection waits for the client's FIN after ours, so that unread client bytes
// do not turn our FIN into an RST. Bounds every close.
constexpr std::chrono::seconds linger_limit{2};
// Pipelined requests served in a row before yielding to the scheduler.
constexpr std::size_t max_inline_requests = 8;
// Bytes asked for per read: one typical request, or a large body in few reads.
constexpr std::size_t read_chunk = 16 * 1024;
// Pause before accepting again after an accept error (e.g. out of descriptors), so the loop cannot spin.
constexpr std::chrono::milliseconds accept_retry{50};

constexpr std::string_view server_name = "faultline";

std::string_view to_std(beast::string_view s) { return {s.data(), s.size()}; }

// The engine's view of a parsed request's headers.
class fields_source final : public faults::header_source {
public:
    explicit fields_source(const http::fields& fields) : fields_{fields} {}
    std::optional<std::string_view> find(std::string_view name) const override {
        const auto it = fields_.find(beast::string_view{name.data(), name.size()});
        if (it == fields_.end()) return std::nullopt;
        return to_std(it->value());
    }

private:
    const http::fields& fields_;
};

std::optional<std::string> header_value(const http::fields& fields, std::string_view name) {
    const auto it = fields.find(beast::string_view{name.data(), name.size()});
    if (it == fields.end()) return std::nullopt;
    return std::string{to_std(it->value())};
}

std::optional<std::int64_t> integer_header(const http::fields& fields, std::string_view name) {
    const auto it = fields.find(beast::string_view{name.data(), name.size()});
    if (it == fields.end()) return std::nullopt;
    const std::string_view text = to_std(it->value());
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
    return value;
}

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

}  // namespace server_detail

// State shared by the server object, its acceptors and its connections. Connections hold it through
// a shared_ptr, so it outlives the last handler.
struct server::core : std::enable_shared_from_this<server::core> {
    core(server_context& ctx, server_options opts, faultline::clock& clk)
        : context{ctx},
          options{std::move(opts)},
          time{clk},
          run_start{clk.now()},
          ios{make_contexts(options.threads)},
          acceptor{ios.front()->get_executor()},
          control_acceptor{ios.front()->get_executor()} {}

    static std::vector<std::unique_ptr<asio::io_context>> make_contexts(std::size_t threads) {
        std::vector<std::unique_ptr<asio::io_context>> out;
        for (std::size_t i = 0; i < std::max<std::size_t>(threads, 1); ++i) {
            out.push_back(std::make_unique<asio::io_context>(1));
        }
        return out;
    }

    // Connections are spread over the threads' contexts round-robin.
    asio::io_context& next_context() { return *ios[next_context_index++ % ios.size()]; }

    std::int64_t since_start_ns() const { return (time.now() - run_start).count(); }

    server_counters read_counters() const {
        return {connections.load(), refused.load(), attempts.load(), control_requests.load(), bad_requests.load()};
    }

    void do_accept(acceptor_t& from, bool control_only);
    void on_accept(socket_t socket, bool control_only);
    void register_session(std::uint64_t id, const std::shared_ptr<server_detail::session>& s);
    void unregister_session(std::uint64_t id);
    template <class F>
    void for_each_session(F f);

    server_context& context;
    const server_options options;
    faultline::clock& time;
    const faultline::time_point run_start;
    control_api control{context, [this] { return read_counters(); }};

    std::vector<std::unique_ptr<asio::io_context>> ios;  // one per worker thread
    std::size_t next_context_index = 0;                  // used by the accepting thread only
    std::vector<asio::executor_work_guard<executor_t>> work;
    acceptor_t acceptor;          // on ios[0]
    acceptor_t control_acceptor;  // on ios[0]; open only with options.control_port
    std::vector<std::thread> workers;
    std::uint16_t port = 0;
    std::optional<std::uint16_t> control_port;

    std::atomic<std::uint64_t> next_connection{0};
    std::atomic<std::uint64_t> connections{0};
    std::atomic<std::uint64_t> refused{0};
    std::atomic<std::uint64_t> attempts{0};
    std::atomic<std::uint64_t> control_requests{0};
    std::atomic<std::uint64_t> bad_requests{0};
    std::atomic<bool> stopping{false};

    std::mutex sessions_mutex;
    std::condition_variable sessions_gone;
    std::unordered_map<std::uint64_t, std::weak_ptr<server_detail::session>> sessions;

    std::mutex lifecycle_mutex;
    bool started = false;
    bool stop_begun = false;
    bool stop_done = false;
};

namespace server_detail {

using request_t = http::request<http::string_body>;
using response_t = http::response<http::string_body>;

// One connection. Owns its socket, buffers, the attempt in progress (its journal record and the
// engine's decision, which holds fault capacity until the attempt ends) and one timer. Every step runs
// on the connection's strand (the socket's executor), as a do_x / on_x pair bound to shared_from_this.
class session : public std::enable_shared_from_this<session> {
public:
    session(std::shared_ptr<server::core> core, socket_t socket, std::uint64_t id, std::int64_t accepted_ns,
            bool control_only)
        : core_{std::move(core)},
          socket_{std::move(socket)},
          timer_{socket_.get_executor()},
          id_{id},
          accepted_ns_{accepted_ns},
          control_only_{control_only} {}

    ~session() {
        // Every attempt ends in exactly one journal record, even one cut off by a forced stop.
        if (attempt_open_) finish_attempt(response_started() ? wire_outcome::truncated : wire_outcome::closed);
        core_->unregister_session(id_);
    }

    session(const session&) = delete;
    session& operator=(const session&) = delete;

    void start() {
        core_->register_session(id_, shared_from_this());
        error_code ignored;
        socket_.non_blocking(true, ignored);
        asio::dispatch(socket_.get_executor(), [self = shared_from_this()] { self->do_read(); });
    }

    // A connection the engine told us to close (FIN) before reading anything.
    void start_closed() {
        asio::dispatch(socket_.get_executor(), [self = shared_from_this()] { self->do_graceful_close(); });
    }

    // The server is stopping: idle connections close now, hangs end now, the rest finish their attempt.
    void on_server_stop() {
        asio::dispatch(socket_.get_executor(), [self = shared_from_this()] {
            self->stopping_ = true;
            if (self->state_ == state::idle) return self->close_now();
            if (self->state_ == state::hanging) return self->end_hang();
            if (self->state_ == state::closing) return self->close_now();
        });
    }

    // The drain time is over: close whatever is left.
    void force_close() {
        asio::dispatch(socket_.get_executor(), [self = shared_from_this()] {
            self->stopping_ = true;
            self->close_now();
        });
    }

private:
    enum class state { idle, busy, hanging, closing };

    // ---- reading a request ----

    // Reads one request: Beast's parser fed from our own buffer and read loop (what http::async_read
    // does, minus its composed-operation layers, which cost more than the parsing on this path).
    void do_read() {
        if (stopping_ || core_->stopping) return close_now();
        state_ = state::idle;
        parser_.emplace();
        parser_->body_limit(core_->options.body_limit);
        parser_->eager(true);
        bytes_in_ = 0;
        parse_buffered();
    }

    void parse_buffered() {
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
            if (ec == asio::error::eof) return self->on_eof();
            if (ec) return self->on_read(ec);
            self->parse_buffered();
        });
    }

    void on_eof() {
        if (!parser_->got_some()) return on_read(http::error::end_of_stream);
        error_code ec;
        parser_->put_eof(ec);
        on_read(ec ? ec : error_code{http::error::partial_message});
    }

    void on_read(error_code ec) {
        if (ec == http::error::end_of_stream) return do_graceful_close();
        if (ec == asio::error::operation_aborted) return close_now();
        if (ec && ec.category() == http::make_error_code(http::error::bad_target).category() &&
            ec != http::error::partial_message) {
            return reject(ec);
        }
        if (ec) return close_now();
        state_ = state::busy;
        request_ = parser_->release();
        if (control_only_ || is_control_target(to_std(request_.target()))) return serve_control();
        begin_attempt(bytes_in_);
    }

    // Unparseable HTTP: 400 (413 / 431 for the limits) and close. Not an attempt: not journaled.
    void reject(error_code ec) {
        state_ = state::busy;
        ++core_->bad_requests;
        http::status status = http::status::bad_request;
        if (ec == http::error::body_limit) status = http::status::payload_too_large;
        if (ec == http::error::header_limit) status = http::status::request_header_fields_too_large;
        response_t res{status, 11};
        res.set(http::field::server, server_name);
        res.set(http::field::content_type, "application/json");
        res.body() = error_json("bad request: " + ec.message());
        res.keep_alive(false);
        res.prepare_payload();
        set_reply(std::move(res));
        send_response();
    }

    void serve_control() {
        ++core_->control_requests;
        response_t res = core_->control.handle(request_);
        if (control_only_ && !is_control_target(to_std(request_.target()))) {
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

    void begin_attempt(std::size_t bytes_in) {
        server_context& ctx = core_->context;
        const http::fields& fields = request_.base();
        attempt_open_ = true;
        record_ = journal_record{};
        record_.connection = id_;
        record_.accepted_ns = accepted_ns_;
        record_.request_ns = core_->since_start_ns();
        record_.method = std::string{to_std(request_.method_string())};
        record_.target = std::string{to_std(request_.target())};
        record_.bytes_in = bytes_in;
        record_.attempt_header = header_value(fields, "Faultline-Attempt");
        if (!record_.attempt_header) record_.attempt_header = header_value(fields, "x-envoy-attempt-count");
        record_.previous_attempts = header_value(fields, "grpc-previous-rpc-attempts");
        record_.deadline_ms = integer_header(fields, "Faultline-Deadline-Ms");
        if (!record_.deadline_ms) record_.deadline_ms = integer_header(fields, "x-envoy-expected-rq-timeout-ms");
        record_.body_hash = hash_bytes(request_.body());

        const fields_source headers{fields};
        const faults::request_view request{record_.method, record_.target, headers, request_.body()};
        identity_ = identify(ctx.identity, request);
        record_.attempt = ctx.attempts.next(identity_);
        record_.seq = ctx.records.next_seq();
        record_.operation = std::move(identity_.value);
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
        execute(*decision_.plan());
    }

    // The commit point: the idempotency layer first, then the service.
    service_response run_service() {
        server_context& ctx = core_->context;
        const std::string_view method = record_.method;
        const std::string_view target = record_.target;
        const std::string& body = request_.body();
        auto begun = ctx.idempotency.begin(identity_.idempotency_key, ctx.model.classify(method, target),
                                           request_fingerprint(method, target, body));
        if (begun.decision != idempotency_decision::proceed) {
            record_.effect = begun.response.effect;
            return std::move(begun.response);
        }
        // The body is not read again once the service has it; the operation is lent and taken back.
        service_request call{record_.method,
                             record_.target,
                             std::move(request_.body()),
                             std::move(record_.operation),
                             record_.attempt,
                             record_.seq,
                             id_,
                             core_->since_start_ns()};
        service_response reply = ctx.model.handle(call);
        record_.operation = std::move(call.operation);
        ctx.idempotency.complete(identity_.idempotency_key, reply);
        record_.effect = reply.effect;
        return reply;
    }

    // The reply's head is written here directly (status line, Server, Date, the reply's own headers,
    // Content-Length, Connection): building a Beast fields container for it cost more than the rest
    // of a small request's handling. `content_length` overrides the body's size (a truncated reply's
    // promise). No Content-Length and no body where HTTP allows none (1xx, 204, 304).
    template <class Headers>
    void set_reply(int status, const Headers& headers, std::string body,
                   std::optional<std::size_t> content_length = std::nullopt) {
        status = std::clamp(status, 100, 999);
        record_.status = status;
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
    void set_reply(response_t res) {
        reply_.head = serialize_head(res);
        reply_.keep_alive = res.keep_alive();
        reply_.body = std::move(res.body());
    }

    static std::pair<const std::string&, const std::string&> header_pair(const http_header& h) { return {h.name, h.value}; }
    static std::pair<const std::string&, const std::string&> header_pair(const std::pair<std::string, std::string>& h) {
        return {h.first, h.second};
    }

    void set_reply(service_response reply) { set_reply(reply.status, reply.headers, std::move(reply.body)); }

    // Carries out a fault plan. Kinds that deliver the service's reply (delay, slow_body, truncate)
    // run the service whatever the phase; the others run it only in phase `after`.
    void execute(const faults::fault_plan& plan) {
        const bool after = plan.phase == faults::commit_phase::after;
        std::visit(
            [&](const auto& action) {
                using A = std::decay_t<decltype(action)>;
                if constexpr (std::is_same_v<A, faults::respond_action>) {
                    if (after) run_service();
                    set_reply(action.status, action.headers, action.body);
                    send_response();
                } else if constexpr (std::is_same_v<A, faults::delay_action>) {
                    if (after) set_reply(run_service());
                    wait_then(action.wait, [after](session& s) {
                        if (!after) s.set_reply(s.run_service());
                        s.send_response();
                    });
                } else if constexpr (std::is_same_v<A, faults::drop_action>) {
                    if (after) run_service();
                    drop(action);
                } else if constexpr (std::is_same_v<A, faults::slow_body_action>) {
                    set_reply(run_service());
                    dribble_ = action;
                    raw_ = reply_.head + reply_.body;
                    raw_sent_ = 0;
                    do_dribble();
                } else if constexpr (std::is_same_v<A, faults::truncate_action>) {
                    service_response reply = run_service();
                    // An empty body cannot be cut short: the head then promises one byte that never comes.
                    const std::size_t promised = std::max<std::size_t>(reply.body.size(), 1);
                    set_reply(reply.status, reply.headers, std::move(reply.body), promised);
                    truncate(action);
                } else if constexpr (std::is_same_v<A, faults::malformed_action>) {
                    if (after) run_service();
                    raw_ = action.bytes;
                    write_raw_then([](session& s) {
                        s.finish_attempt(wire_outcome::malformed);
                        s.do_graceful_close();
                    });
                }
            },
            plan.what);
    }

    template <class Next>
    void wait_then(faults::duration wait, Next next) {
        timer_.expires_after(wait);
        timer_.async_wait([self = shared_from_this(), next](error_code ec) {
            if (ec) return self->close_now();  // forced stop during the delay
            next(*self);
        });
    }

    // ---- writing ----

    bool response_started() const { return record_.response_started_ns >= 0; }
    void mark_response_started() {
        if (!response_started()) record_.response_started_ns = core_->since_start_ns();
    }

    // The head comes from Beast's field writer; head and body then go out in one gathered write. The
    // write is tried at once on the non-blocking socket: a small response almost always fits the
    // socket buffer, and finishing inline spares a trip through the scheduler (a reactor poll, a
    // syscall that dominates on loopback). Only what does not fit waits for the reactor.
    void send_response() {
        if (attempt_open_) mark_response_started();
        const std::array<asio::const_buffer, 2> buffers{asio::buffer(reply_.head), asio::buffer(reply_.body)};
        const std::size_t total = asio::buffer_size(buffers);
        error_code ec;
        const std::size_t sent = socket_.write_some(buffers, ec);
        if (ec && ec != asio::error::would_block && ec != asio::error::try_again) return on_write(ec, sent);
        if (sent == total) return on_write({}, sent);
        beast::buffers_suffix<std::array<asio::const_buffer, 2>> rest{buffers};
        rest.consume(sent);
        asio::async_write(socket_, rest, [self = shared_from_this(), sent](error_code ec2, std::size_t n) {
            self->on_write(ec2, sent + n);
        });
    }

    void on_write(error_code ec, std::size_t bytes) {
        if (attempt_open_) {
            record_.bytes_out += bytes;
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

    template <class Next>
    void write_raw_then(Next next) {
        mark_response_started();
        asio::async_write(socket_, asio::buffer(raw_), [self = shared_from_this(), next](error_code ec, std::size_t n) {
            self->record_.bytes_out += n;
            if (ec) {
                self->finish_attempt(wire_outcome::client_gone);
                return self->close_now();
            }
            next(*self);
        });
    }

    void do_dribble() {
        const std::size_t chunk = std::max<std::size_t>(dribble_.chunk_bytes, 1);
        const std::size_t n = std::min(chunk, raw_.size() - raw_sent_);
        mark_response_started();
        asio::async_write(socket_, asio::buffer(raw_.data() + raw_sent_, n),
                          [self = shared_from_this()](error_code ec, std::size_t written) {
                              self->on_dribble(ec, written);
                          });
    }

    void on_dribble(error_code ec, std::size_t written) {
        raw_sent_ += written;
        record_.bytes_out += written;
        if (ec) {
            finish_attempt(wire_outcome::client_gone);
            return close_now();
        }
        if (raw_sent_ >= raw_.size()) {
            finish_attempt(wire_outcome::responded);
            if (!reply_.keep_alive) return do_graceful_close();
            return do_read();
        }
        // One chunk per chunk_bytes / bytes_per_second; a zero rate is treated as one byte per second.
        const auto rate = std::max<std::size_t>(dribble_.bytes_per_second, 1);
        const auto chunk = std::max<std::size_t>(dribble_.chunk_bytes, 1);
        const auto interval = std::chrono::nanoseconds{
            static_cast<std::int64_t>(std::min<std::size_t>(chunk * 1'000'000'000ULL / rate, 3'600'000'000'000ULL))};
        wait_then(interval, [](session& s) { s.do_dribble(); });
    }

    // The head promises the whole body; fewer bytes follow.
    void truncate(const faults::truncate_action& action) {
        const std::string& body = reply_.body;
        std::size_t keep = std::min(action.body_bytes, body.size());
        if (!body.empty() && keep == body.size()) keep = body.size() - 1;
        raw_ = reply_.head;
        raw_.append(body, 0, keep);
        const bool reset = action.reset;
        write_raw_then([reset](session& s) {
            s.finish_attempt(wire_outcome::truncated);
            if (reset) return s.reset_now();
            s.do_graceful_close();
        });
    }

    void drop(const faults::drop_action& action) {
        switch (action.mode) {
            case faults::drop_mode::reset:
                finish_attempt(wire_outcome::reset);
                return reset_now();
            case faults::drop_mode::close:
                finish_attempt(wire_outcome::closed);
                return do_graceful_close();
            case faults::drop_mode::hang:
                return start_hang(action.hang_limit);
        }
    }

    // ---- hanging: say nothing until the client goes away or the limit passes ----

    void start_hang(faults::duration limit) {
        state_ = state::hanging;
        if (stopping_) return end_hang();
        timer_.expires_after(limit);
        timer_.async_wait([self = shared_from_this()](error_code ec) {
            if (!ec) self->end_hang();
        });
        watch_hang();
    }

    void watch_hang() {
        socket_.async_read_some(asio::buffer(scratch_), [self = shared_from_this()](error_code ec, std::size_t) {
            if (self->state_ != state::hanging) return;
            if (ec) return self->end_hang();
            self->watch_hang();  // the client may send more; keep ignoring it
        });
    }

    void end_hang() {
        if (state_ != state::hanging) return;
        state_ = state::closing;
        timer_.cancel();
        finish_attempt(wire_outcome::hung);
        close_now();
    }

    // ---- ending connections ----

    void reset_now() {
        state_ = state::closing;
        error_code ignored;
        socket_.set_option(asio::socket_base::linger{true, 0}, ignored);
        socket_.close(ignored);
        timer_.cancel();
    }

    void close_now() {
        state_ = state::closing;
        error_code ignored;
        socket_.close(ignored);
        timer_.cancel();
    }

    // FIN, then wait (bounded) for the client's FIN, so unread bytes do not turn the close into an RST.
    void do_graceful_close() {
        state_ = state::closing;
        error_code ignored;
        socket_.shutdown(socket_t::shutdown_send, ignored);
        if (stopping_) return close_now();
        timer_.expires_after(linger_limit);
        timer_.async_wait([self = shared_from_this()](error_code ec) {
            if (!ec) self->close_now();
        });
        drain();
    }

    void drain() {
        socket_.async_read_some(asio::buffer(scratch_), [self = shared_from_this()](error_code ec, std::size_t) {
            if (ec) return self->close_now();
            self->drain();
        });
    }

    void finish_attempt(wire_outcome outcome) {
        if (!attempt_open_) return;
        attempt_open_ = false;
        record_.outcome = outcome;
        if (outcome != wire_outcome::responded && outcome != wire_outcome::client_gone &&
            outcome != wire_outcome::truncated) {
            record_.status = 0;
            record_.retry_after_ms.reset();
        }
        record_.finished_ns = core_->since_start_ns();
        core_->context.records.append(std::move(record_));
        ++core_->attempts;
        decision_ = faults::fault_decision{};  // releases the active-fault and overload slots
    }

    std::shared_ptr<server::core> core_;
    socket_t socket_;
    timer_t timer_;
    const std::uint64_t id_;
    const std::int64_t accepted_ns_;
    const bool control_only_;
    state state_ = state::idle;
    bool stopping_ = false;

    beast::flat_buffer buffer_;
    std::optional<http::request_parser<http::string_body>> parser_;
    std::size_t bytes_in_ = 0;  // request bytes the parser consumed
    request_t request_;
    struct outgoing {
        std::string head;  // status line and fields, serialized, ending in the blank line
        std::string body;
        bool keep_alive = true;
    };
    outgoing reply_;  // what the attempt (or control request) sends
    std::size_t inline_requests_ = 0;  // requests served in a row without returning to the scheduler

    bool attempt_open_ = false;
    journal_record record_;
    operation_identity identity_;
    faults::fault_decision decision_;
    wall_time_point wall_now_{};

    std::string raw_;  // bytes of a damaged reply (slow, truncated, malformed)
    std::size_t raw_sent_ = 0;
    faults::slow_body_action dribble_;
    std::array<char, 1024> scratch_{};
};

}  // namespace server_detail

void server::core::register_session(std::uint64_t id, const std::shared_ptr<server_detail::session>& s) {
    const std::lock_guard lock{sessions_mutex};
    sessions.emplace(id, s);
}

void server::core::unregister_session(std::uint64_t id) {
    const std::lock_guard lock{sessions_mutex};
    sessions.erase(id);
    if (sessions.empty()) sessions_gone.notify_all();
}

template <class F>
void server::core::for_each_session(F f) {
    std::vector<std::shared_ptr<server_detail::session>> live;
    {
        const std::lock_guard lock{sessions_mutex};
        live.reserve(sessions.size());
        for (const auto& [id, weak] : sessions) {
            if (auto s = weak.lock()) live.push_back(std::move(s));
        }
    }
    for (const auto& s : live) f(*s);
}

void server::core::do_accept(acceptor_t& from, bool control_only) {
    from.async_accept(next_context(), [this, &from, control_only](error_code ec, socket_t socket) {
        if (stopping || !from.is_open()) return;
        if (ec) {
            auto retry_timer = std::make_shared<timer_t>(from.get_executor(), server_detail::accept_retry);
            retry_timer->async_wait([this, &from, control_only, retry_timer](error_code) {
                if (!stopping && from.is_open()) do_accept(from, control_only);
            });
            return;
        }
        on_accept(std::move(socket), control_only);
        do_accept(from, control_only);
    });
}

void server::core::on_accept(socket_t socket, bool control_only) {
    const std::uint64_t id = ++next_connection;
    const std::int64_t accepted_ns = since_start_ns();
    ++connections;
    error_code ignored;
    socket.set_option(tcp::no_delay{true}, ignored);
    // Sessions keep the core alive through this shared_ptr; the server object owns the other one.
    auto self = shared_from_this();
    if (!control_only) {
        const auto verdict =
            context.engine.on_connection({id, std::chrono::nanoseconds{accepted_ns}}).verdict;
        if (verdict == faults::connection_verdict::reset) {
            ++refused;
            socket.set_option(asio::socket_base::linger{true, 0}, ignored);
            socket.close(ignored);
            return;
        }
        if (verdict == faults::connection_verdict::close) {
            ++refused;
            auto s = std::make_shared<server_detail::session>(self, std::move(socket), id, accepted_ns, false);
            self->register_session(id, s);
            s->start_closed();
            return;
        }
    }
    std::make_shared<server_detail::session>(self, std::move(socket), id, accepted_ns, control_only)->start();
}

}  // namespace faultline::harness

namespace faultline::harness {

server::server(server_context& context, server_options options, faultline::clock& time)
    : core_{std::make_shared<core>(context, std::move(options), time)} {}

server::~server() { stop(); }

namespace {

bool is_loopback(const asio::ip::address& a) { return a.is_loopback(); }

error_code open_acceptor(acceptor_t& acceptor, const asio::ip::address& address, std::uint16_t port) {
    error_code ec;
    const tcp::endpoint endpoint{address, port};
    acceptor.open(endpoint.protocol(), ec);
    if (!ec) acceptor.set_option(asio::socket_base::reuse_address{true}, ec);
    if (!ec) acceptor.bind(endpoint, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
        error_code ignored;
        acceptor.close(ignored);
    }
    return ec;
}

}  // namespace

error_code server::start() {
    core& c = *core_;
    const std::lock_guard lock{c.lifecycle_mutex};
    if (c.started) return asio::error::already_started;
    error_code ec;
    const auto address = asio::ip::make_address(c.options.address, ec);
    if (ec) return ec;
    if (!is_loopback(address) && !c.options.allow_non_loopback) return asio::error::access_denied;
    if ((ec = open_acceptor(c.acceptor, address, c.options.port))) return ec;
    c.port = c.acceptor.local_endpoint().port();
    if (c.options.control_port) {
        if ((ec = open_acceptor(c.control_acceptor, address, *c.options.control_port))) {
            error_code ignored;
            c.acceptor.close(ignored);
            return ec;
        }
        c.control_port = c.control_acceptor.local_endpoint().port();
    }
    c.started = true;
    for (auto& io : c.ios) c.work.emplace_back(io->get_executor());
    c.do_accept(c.acceptor, false);
    if (c.control_port) c.do_accept(c.control_acceptor, true);
    c.workers.reserve(c.ios.size());
    for (auto& io : c.ios) {
        c.workers.emplace_back([&context = *io] { context.run(); });
    }
    return {};
}

void server::stop() {
    core& c = *core_;
    std::unique_lock lock{c.lifecycle_mutex};
    if (!c.started || c.stop_done) return;
    const auto self_id = std::this_thread::get_id();
    const bool on_worker = std::any_of(c.workers.begin(), c.workers.end(),
                                       [self_id](const std::thread& t) { return t.get_id() == self_id; });
    if (!c.stop_begun) {
        c.stop_begun = true;
        c.stopping = true;
        asio::post(c.acceptor.get_executor(), [&c] {
            error_code ignored;
            c.acceptor.close(ignored);
            c.control_acceptor.close(ignored);
        });
        c.for_each_session([](server_detail::session& s) { s.on_server_stop(); });
    }
    // A worker cannot join itself: the shutdown is completed by a later stop() or the destructor.
    if (on_worker) return;
    c.stop_done = true;
    lock.unlock();

    {
        std::unique_lock sessions_lock{c.sessions_mutex};
        const bool drained =
            c.sessions_gone.wait_for(sessions_lock, c.options.drain_timeout, [&c] { return c.sessions.empty(); });
        sessions_lock.unlock();
        if (!drained) c.for_each_session([](server_detail::session& s) { s.force_close(); });
    }
    c.work.clear();
    for (auto& worker : c.workers) {
        if (worker.joinable()) worker.join();
    }
    c.context.records.flush();
}

std::uint16_t server::port() const { return core_->port; }
std::optional<std::uint16_t> server::control_port() const { return core_->control_port; }
std::string server::url() const { return "http://" + core_->options.address + ":" + std::to_string(core_->port); }
std::string server::control_url() const {
    const std::uint16_t p = core_->control_port.value_or(core_->port);
    return "http://" + core_->options.address + ":" + std::to_string(p) + std::string{control_prefix};
}
server_counters server::counters() const { return core_->read_counters(); }
faultline::time_point server::run_start() const { return core_->run_start; }

}  // namespace faultline::harness
