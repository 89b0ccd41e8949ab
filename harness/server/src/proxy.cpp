// The fault-injecting reverse proxy (proxy.hpp): acceptor, client sessions, and the upstream
// exchange with its per-worker pool of kept-alive connections.
#include "faultline/server/proxy.hpp"
#include "faultline/server/listener.hpp"

#include "action_executor.hpp"
#include "http_fields.hpp"

#include "faultline/retry/retry_after.hpp"

#include <boost/asio/basic_socket_acceptor.hpp>
#include <boost/asio/basic_stream_socket.hpp>
#include <boost/asio/basic_waitable_timer.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_suffix.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

namespace faultline::harness {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

using executor_t = asio::io_context::executor_type;
using socket_t = asio::basic_stream_socket<tcp, executor_t>;
using acceptor_t = asio::basic_socket_acceptor<tcp, executor_t>;
using timer_t = asio::basic_waitable_timer<std::chrono::steady_clock, asio::wait_traits<std::chrono::steady_clock>,
                                           executor_t>;
using request_t = http::request<http::string_body>;
using upstream_response_t = http::response<http::string_body>;

// How long a closing client connection waits for the client's FIN after ours, so unread bytes do
// not turn the FIN into an RST.
constexpr std::chrono::seconds linger_limit{2};
// Pipelined requests served in a row before yielding to the scheduler (a bounded stack).
constexpr std::size_t max_inline_requests = 8;
// Bytes asked for per read, on either side: one typical message, or a large body in few reads.
constexpr std::size_t read_chunk = 16 * 1024;

using steady = std::chrono::steady_clock;

// Writes what the non-blocking socket takes at once (a small message almost always fits the socket
// buffer, and finishing inline spares a trip through the reactor), then the rest asynchronously.
// `done(ec, bytes)` runs inline or from the write's completion.
template <class Done>
void write_now_or_later(socket_t& socket, const std::array<asio::const_buffer, 2>& buffers, Done done) {
    const std::size_t total = asio::buffer_size(buffers);
    error_code ec;
    const std::size_t sent = socket.write_some(buffers, ec);
    if (ec && ec != asio::error::would_block && ec != asio::error::try_again) return done(ec, sent);
    if (sent == total) return done(error_code{}, sent);
    beast::buffers_suffix<std::array<asio::const_buffer, 2>> rest{buffers};
    rest.consume(sent);
    asio::async_write(socket, rest, [done, sent](error_code ec2, std::size_t n) { done(ec2, sent + n); });
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

using server_detail::fields_source;
using server_detail::header_value;
using server_detail::integer_header;
using server_detail::to_std;

// Does carrying out this plan need the upstream's reply? Kinds that deliver the service's own reply
// do in either phase; the others only in phase `after` (action_executor.hpp).
bool plan_forwards(const faults::fault_plan& plan) {
    if (plan.phase == faults::commit_phase::after) return true;
    return std::holds_alternative<faults::delay_action>(plan.what) ||
           std::holds_alternative<faults::slow_body_action>(plan.what) ||
           std::holds_alternative<faults::truncate_action>(plan.what);
}

std::pair<const std::string&, const std::string&> header_pair(const http_header& h) { return {h.name, h.value}; }
std::pair<const std::string&, const std::string&> header_pair(const std::pair<std::string, std::string>& h) {
    return {h.first, h.second};
}

// What one forward came to.
struct upstream_result {
    std::optional<upstream_response_t> reply;  // a complete reply
    std::string error;                         // else why not: refused, connect_failed, timeout, reset, closed, bad_reply
    std::int64_t elapsed_ns = 0;
};

class proxy_session;

}  // namespace

struct proxy::core : std::enable_shared_from_this<proxy::core> {
    core(server_context& ctx, proxy_options opts, faultline::clock& clk)
        : context{ctx}, options{std::move(opts)}, time{clk}, run_start{clk.now()} {
        for (std::size_t i = 0; i < std::max<std::size_t>(options.threads, 1); ++i) {
            ios.push_back(std::make_unique<asio::io_context>(1));
        }
        pools.resize(ios.size());
        acceptor.emplace(ios.front()->get_executor());
    }

    std::int64_t since_start_ns() const { return (time.now() - run_start).count(); }

    void do_accept();
    void on_accept(socket_t socket, std::size_t worker);

    void register_session(std::uint64_t id, const std::shared_ptr<proxy_session>& s) {
        const std::lock_guard lock{sessions_mutex};
        sessions.emplace(id, s);
    }
    void unregister_session(std::uint64_t id) {
        const std::lock_guard lock{sessions_mutex};
        sessions.erase(id);
        if (sessions.empty()) sessions_gone.notify_all();
    }
    template <class F>
    void for_each_session(F f);

    server_context& context;
    const proxy_options options;
    faultline::clock& time;
    const faultline::time_point run_start;
    tcp::endpoint upstream;

    std::vector<std::unique_ptr<asio::io_context>> ios;
    // Idle kept-alive upstream connections, one pool per worker, touched only on that worker's thread;
    // each keeps its read buffer, so a reused connection reads into memory it already has.
    struct idle_upstream {
        socket_t socket;
        beast::flat_buffer buffer;
    };
    std::vector<std::vector<idle_upstream>> pools;
    std::size_t next_worker = 0;  // the accepting thread only
    std::vector<asio::executor_work_guard<executor_t>> work;
    std::optional<acceptor_t> acceptor;
    std::vector<std::thread> workers;
    std::uint16_t port = 0;

    std::atomic<std::uint64_t> next_connection{0};
    std::atomic<std::uint64_t> connections{0};
    std::atomic<std::uint64_t> refused{0};
    std::atomic<std::uint64_t> attempts{0};
    std::atomic<std::uint64_t> forwarded{0};
    std::atomic<std::uint64_t> upstream_connects{0};
    std::atomic<std::uint64_t> upstream_failures{0};
    std::atomic<bool> stopping{false};

    std::mutex sessions_mutex;
    std::condition_variable sessions_gone;
    std::unordered_map<std::uint64_t, std::weak_ptr<proxy_session>> sessions;

    std::mutex lifecycle_mutex;
    bool started = false;
    bool stop_done = false;
};

namespace {

// One request forwarded: a pooled connection if the worker has one, else a new one; the reply read
// in full; the connection back to the pool if both sides keep it alive. A pooled connection the
// upstream closed meanwhile fails before any reply byte: then the request goes once more on a new
// connection (the upstream read none of it, or it would have answered). The request arrives
// serialised (head and body); the reply is parsed by Beast's parser fed from our own read loop, as
// the server's session reads requests. The exchange has no timer of its own: its session's watchdog
// asks `expire_if_due` (connect within connect_timeout, the whole exchange within upstream_timeout).
class upstream_exchange : public std::enable_shared_from_this<upstream_exchange> {
public:
    using done_fn = std::function<void(upstream_result)>;

    upstream_exchange(std::shared_ptr<proxy::core> core, std::size_t worker, std::string head, std::string body,
                      bool head_request, done_fn done)
        : core_{std::move(core)},
          worker_{worker},
          socket_{core_->ios[worker]->get_executor()},
          head_{std::move(head)},
          body_{std::move(body)},
          head_request_{head_request},
          done_{std::move(done)} {}

    void start() {
        started_ = steady::now();
        deadline_ = started_ + core_->options.upstream_timeout;
        ++core_->forwarded;
        auto& pool = core_->pools[worker_];
        if (!pool.empty()) {
            socket_ = std::move(pool.back().socket);
            buffer_ = std::move(pool.back().buffer);
            pool.pop_back();
            reused_ = true;
            return send();
        }
        connect();
    }

    // When the exchange must end at the latest: connected by connect_timeout, answered by
    // upstream_timeout. Meaningless once finished.
    steady::time_point deadline() const { return connecting_ ? std::min(deadline_, connect_deadline_) : deadline_; }
    bool finished() const { return finished_; }

    // The session's watchdog: past the deadline, the exchange ends as a timeout (its callback runs).
    void expire_if_due(steady::time_point now) {
        if (finished_ || now < deadline()) return;
        (connecting_ && now < deadline_ ? connect_timed_out_ : timed_out_) = true;
        error_code ignored;
        socket_.close(ignored);
    }

    // The proxy is stopping past its drain time: end the exchange now (its callback still runs).
    void cancel() {
        if (finished_) return;
        cancelled_ = true;
        error_code ignored;
        socket_.close(ignored);
    }

private:
    void connect() {
        reused_ = false;
        connecting_ = true;
        connect_deadline_ = steady::now() + core_->options.connect_timeout;
        ++core_->upstream_connects;
        socket_.async_connect(core_->upstream, [self = shared_from_this()](error_code ec) {
            self->connecting_ = false;
            if (const char* why = self->ended_why()) return self->fail(why);
            if (ec) return self->fail(ec == asio::error::connection_refused ? "refused" : "connect_failed");
            error_code ignored;
            self->socket_.set_option(tcp::no_delay{true}, ignored);
            self->socket_.non_blocking(true, ignored);
            self->send();
        });
    }

    // Why the exchange was ended from outside, if it was.
    const char* ended_why() const {
        if (timed_out_) return "timeout";
        if (connect_timed_out_) return "connect_timeout";
        if (cancelled_) return "cancelled";
        return nullptr;
    }

    void send() {
        write_now_or_later(socket_, {asio::buffer(head_), asio::buffer(body_)},
                           [self = shared_from_this()](error_code ec, std::size_t) {
                               if (ec) return self->on_transport_error(ec);
                               self->receive();
                           });
    }

    void receive() {
        parser_.emplace();
        parser_->body_limit(core_->options.upstream_body_limit);
        parser_->eager(true);
        if (head_request_) parser_->skip(true);
        buffer_.clear();
        parse_buffered();
    }

    void parse_buffered() {
        // Each put consumes bytes or asks for more, so this ends within buffer_.size() rounds.
        while (buffer_.size() > 0 && !parser_->is_done()) {
            error_code ec;
            const std::size_t used = parser_->put(buffer_.data(), ec);
            buffer_.consume(used);
            if (ec == http::error::need_more) break;
            if (ec) return on_transport_error(ec);
            if (used == 0) break;
        }
        if (parser_->is_done()) return succeed();
        socket_.async_read_some(buffer_.prepare(read_chunk), [self = shared_from_this()](error_code ec, std::size_t n) {
            self->buffer_.commit(n);
            if (ec == asio::error::eof && self->parser_->got_some()) {
                // A reply delimited by the close (no Content-Length) ends here; any other is cut short.
                error_code eof_ec;
                self->parser_->put_eof(eof_ec);
                if (!eof_ec && self->parser_->is_done()) return self->succeed(/*reusable=*/false);
                return self->on_transport_error(eof_ec ? eof_ec : error_code{http::error::partial_message});
            }
            if (ec) return self->on_transport_error(ec);
            self->parse_buffered();
        });
    }

    void on_transport_error(error_code ec) {
        if (const char* why = ended_why()) return fail(why);
        const bool nothing_back = !parser_ || !parser_->got_some();
        if (reused_ && nothing_back && !core_->stopping) {
            error_code ignored;
            socket_.close(ignored);
            socket_ = socket_t{core_->ios[worker_]->get_executor()};
            buffer_.clear();
            return connect();
        }
        if (ec == http::error::body_limit || ec == http::error::header_limit || ec == http::error::bad_version ||
            ec == http::error::bad_status || ec == http::error::bad_field || ec == http::error::bad_value) {
            return fail("bad_reply");
        }
        if (ec == asio::error::connection_reset) return fail("reset");
        fail("closed");
    }

    void succeed(bool reusable = true) {
        finished_ = true;
        upstream_response_t reply = parser_->release();
        auto& pool = core_->pools[worker_];
        if (reusable && reply.keep_alive() && !core_->stopping &&
            pool.size() < core_->options.idle_upstream_per_thread && buffer_.size() == 0) {
            pool.push_back({std::move(socket_), std::move(buffer_)});
        } else {
            error_code ignored;
            socket_.close(ignored);
        }
        done_({std::move(reply), {}, elapsed()});
    }

    void fail(std::string why) {
        finished_ = true;
        error_code ignored;
        socket_.close(ignored);
        ++core_->upstream_failures;
        done_({std::nullopt, std::move(why), elapsed()});
    }

    std::int64_t elapsed() const {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(steady::now() - started_).count();
    }

    std::shared_ptr<proxy::core> core_;
    const std::size_t worker_;
    socket_t socket_;
    std::string head_;
    std::string body_;
    const bool head_request_;
    done_fn done_;
    beast::flat_buffer buffer_;
    std::optional<http::response_parser<http::string_body>> parser_;
    steady::time_point started_{};
    steady::time_point deadline_{};
    steady::time_point connect_deadline_{};
    bool connecting_ = false;
    bool reused_ = false;
    bool timed_out_ = false;
    bool connect_timed_out_ = false;
    bool cancelled_ = false;
    bool finished_ = false;
};

// One client connection: reads requests, runs each as one attempt (identity, the engine's decision,
// the upstream as the commit point, the plan through action_executor), journals it. All of it on the
// socket's executor, one thread.
class proxy_session : public std::enable_shared_from_this<proxy_session> {
public:
    proxy_session(std::shared_ptr<proxy::core> core, socket_t socket, std::uint64_t id, std::int64_t accepted_ns,
                  std::size_t worker)
        : core_{std::move(core)},
          socket_{std::move(socket)},
          timer_{socket_.get_executor()},
          watchdog_{socket_.get_executor()},
          id_{id},
          accepted_ns_{accepted_ns},
          worker_{worker} {}

    ~proxy_session() {
        if (attempt_open_) finish_attempt(response_started() ? wire_outcome::truncated : wire_outcome::closed);
        core_->unregister_session(id_);
    }

    proxy_session(const proxy_session&) = delete;
    proxy_session& operator=(const proxy_session&) = delete;

    void start() {
        asio::dispatch(socket_.get_executor(), [self = shared_from_this()] {
            self->arm_watchdog(steady::now() + self->watch_period());
            self->do_read();
        });
    }
    void start_closed() {
        asio::dispatch(socket_.get_executor(), [self = shared_from_this()] { self->do_graceful_close(); });
    }

    void on_server_stop() {
        asio::dispatch(socket_.get_executor(), [self = shared_from_this()] {
            self->stopping_ = true;
            if (self->state_ == state::idle || self->state_ == state::closing) return self->close_now();
            if (self->state_ == state::held) return self->decision_.barrier()->release_group();
            if (self->state_ == state::hanging) return self->end_hang();
        });
    }

    void force_close() {
        asio::dispatch(socket_.get_executor(), [self = shared_from_this()] {
            self->stopping_ = true;
            if (self->state_ == state::held) self->decision_.barrier()->release_group();
            if (auto exchange = self->exchange_.lock()) exchange->cancel();
            self->close_now();
        });
    }

private:
    friend class server_detail::action_executor<proxy_session>;
    using executor = server_detail::action_executor<proxy_session>;

    enum class state { idle, busy, held, hanging, closing };

    // ---- reading ----

    // Reads one request: Beast's parser fed from our own buffer and read loop, as the server's session
    // does (what http::async_read does, minus its composed-operation layers).
    void do_read() {
        if (stopping_ || core_->stopping) return close_now();
        state_ = state::idle;
        const server_limits& limits = core_->context.limits;
        read_deadline_ = steady::now() + (requests_read_ == 0 ? limits.header_timeout : limits.idle_timeout);
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

    // ---- the watchdog: read deadlines and the upstream exchange's ----

    // Deadlines move with every request without touching the timer (a timer set and cancelled per
    // request cost a system call each); it wakes at least every period, the shortest timeout, so no
    // deadline set since it was armed can pass unnoticed, and compares.
    steady::duration watch_period() const {
        const server_limits& limits = core_->context.limits;
        const proxy_options& options = core_->options;
        return std::chrono::duration_cast<steady::duration>(
            std::min({std::chrono::duration_cast<std::chrono::nanoseconds>(limits.header_timeout),
                      std::chrono::duration_cast<std::chrono::nanoseconds>(limits.idle_timeout),
                      std::chrono::duration_cast<std::chrono::nanoseconds>(options.upstream_timeout),
                      std::chrono::duration_cast<std::chrono::nanoseconds>(options.connect_timeout)}));
    }

    void arm_watchdog(steady::time_point at) {
        watchdog_.expires_at(at);
        watchdog_.async_wait([self = shared_from_this()](error_code ec) {
            if (!ec) self->on_watchdog();  // cancelled only when the connection closes
        });
    }

    void on_watchdog() {
        if (state_ == state::closing) return;
        const auto now = steady::now();
        const auto next = now + watch_period();
        if (state_ == state::idle) {
            if (now >= read_deadline_) return close_now();
            return arm_watchdog(std::min(read_deadline_, next));
        }
        // A fault's own waits (delay, hang, a barrier) never time out; only the forward does.
        if (auto exchange = exchange_.lock(); exchange && !exchange->finished()) {
            exchange->expire_if_due(now);
            if (!exchange->finished()) return arm_watchdog(std::min(exchange->deadline(), next));
        }
        arm_watchdog(next);
    }

    void on_read(error_code ec) {
        if (state_ == state::closing) return;
        if (ec == http::error::end_of_stream) return do_graceful_close();
        if (ec == http::error::body_limit) return reject(http::status::payload_too_large, "request body over the limit");
        if (ec == http::error::header_limit) return reject(http::status::request_header_fields_too_large, "headers too large");
        if (ec && ec.category() == http::make_error_code(http::error::bad_target).category() &&
            ec != http::error::partial_message) {
            return reject(http::status::bad_request, "bad request: " + ec.message());
        }
        if (ec) return close_now();
        state_ = state::busy;
        ++requests_read_;
        request_ = parser_->release();
        begin_attempt(bytes_in_);
    }

    // Unparseable HTTP: not an attempt, not journaled, not forwarded.
    void reject(http::status status, std::string message) {
        state_ = state::busy;
        keep_alive_override_ = false;
        set_reply(static_cast<int>(status), header_list{{"Content-Type", "text/plain"}}, std::move(message));
        send_response();
    }

    // ---- one attempt ----

    void begin_attempt(std::size_t bytes_in) {
        server_context& ctx = core_->context;
        const http::fields& fields = request_.base();
        attempt_open_ = true;
        keep_alive_override_.reset();
        record_ = journal_record{};
        wire_ = wire_detail{};
        record_.connection = static_cast<std::uint32_t>(id_);  // 32 bits in the journal (journal_record.hpp)
        record_.connection_request = requests_read_;
        wire_.accepted_ns = accepted_ns_;
        record_.request_ns = core_->since_start_ns();
        record_.method = to_std(request_.method_string());
        record_.target = to_std(request_.target());
        wire_.bytes_in = bytes_in;
        record_.attempt_header = header_value(fields, "Faultline-Attempt");
        if (!record_.attempt_header) record_.attempt_header = header_value(fields, "x-envoy-attempt-count");
        record_.previous_attempts = header_value(fields, "grpc-previous-rpc-attempts");
        record_.deadline_ms = integer_header(fields, "Faultline-Deadline-Ms");
        if (!record_.deadline_ms) record_.deadline_ms = integer_header(fields, "x-envoy-expected-rq-timeout-ms");
        wire_.body_hash = hash_bytes(request_.body());
        if (!core_->options.instance.empty()) record_.instance = core_->options.instance;

        const fields_source headers{fields};
        const faults::request_view view{record_.method, record_.target, headers, request_.body()};
        const operation_identity identity = identify(ctx.identity, view);
        record_.operation = identity.value;
        record_.attempt = ctx.attempts.next(record_.operation);
        record_.seq = ctx.records.next_seq();
        record_.identity = identity.source;
        record_.idempotency_key = identity.idempotency_key;

        wall_now_ = core_->time.wall_now();
        decision_ = ctx.engine.on_attempt({view, identity.hash, record_.attempt, record_.seq,
                                           std::chrono::nanoseconds{record_.request_ns}, wall_now_});
        if (!decision_.has_fault()) {
            return forward([](proxy_session& s) {
                s.set_reply(s.run_service());
                s.send_response();
            });
        }
        record_.rule = decision_.rule();
        record_.fault = decision_.kind();
        if (decision_.barrier()) return hold_at_barrier();
        carry_out_plan();
    }

    void carry_out_plan() {
        const faults::fault_plan& plan = *decision_.plan();
        if (!plan_forwards(plan)) return executor::run(*this, plan);
        forward([](proxy_session& s) { executor::run(s, *s.decision_.plan()); });
    }

    void hold_at_barrier() {
        state_ = state::held;
        const faults::barrier_ticket& ticket = *decision_.barrier();
        const auto remaining = ticket.deadline() - std::chrono::nanoseconds{core_->since_start_ns()};
        timer_.expires_after(std::max(remaining, std::chrono::nanoseconds{0}));
        timer_.async_wait([ticket](error_code ec) {
            if (!ec) ticket.release_group();
        });
        ticket.on_release([self = shared_from_this(), ex = socket_.get_executor()] {
            asio::post(ex, [self] {
                if (self->state_ != state::held) return;
                self->state_ = state::busy;
                self->timer_.cancel();
                self->carry_out_plan();
            });
        });
        if (stopping_) ticket.release_group();
    }

    // Sends the request upstream; `next(session)` runs once the upstream's reply (or a gateway error
    // standing for it) is held for run_service().
    template <class Next>
    void forward(Next next) {
        // The request as it goes upstream, serialised here: HTTP/1.1, the client's fields less the
        // hop-by-hop ones, our own framing (Content-Length as Beast's prepare_payload would set it).
        // The body is moved, not copied: the attempt's record already holds its hash.
        const http::verb method = request_.method();
        std::string head;
        head.reserve(256);
        head.append(to_std(request_.method_string())).append(" ").append(to_std(request_.target())).append(" HTTP/1.1\r\n");
        for (const auto& field : request_.base()) {
            if (is_hop_by_hop(field.name())) continue;
            head.append(to_std(field.name_string())).append(": ").append(to_std(field.value())).append("\r\n");
        }
        std::string body = std::move(request_.body());
        if (!body.empty() || method == http::verb::post || method == http::verb::put || method == http::verb::options) {
            head.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n");
        }
        head.append("\r\n");
        const std::int64_t forwarded_at = core_->since_start_ns();
        auto exchange = std::make_shared<upstream_exchange>(
            core_, worker_, std::move(head), std::move(body), method == http::verb::head,
            [self = shared_from_this(), next, forwarded_at](upstream_result result) {
                if (self->state_ == state::closing) return;
                self->take_upstream_result(std::move(result), forwarded_at);
                next(*self);
            });
        exchange_ = exchange;
        exchange->start();
    }

    void take_upstream_result(upstream_result result, std::int64_t forwarded_at) {
        wire_.upstream_ns = result.elapsed_ns;
        upstream_reply_ = service_response{};
        if (!result.reply) {
            wire_.upstream_error = result.error;
            const bool timeout = result.error == "timeout";
            upstream_reply_ = problem(timeout ? 504 : 502, timeout ? "Gateway Timeout" : "Bad Gateway",
                                      "upstream " + result.error);
            return;
        }
        const upstream_response_t& reply = *result.reply;
        wire_.upstream_status = static_cast<int>(reply.result_int());
        upstream_reply_.status = static_cast<int>(reply.result_int());
        for (const auto& field : reply.base()) {
            if (is_hop_by_hop(field.name())) continue;
            upstream_reply_.headers.push_back({std::string{to_std(field.name_string())}, std::string{to_std(field.value())}});
        }
        upstream_reply_.body = std::move(result.reply->body());
        const effect_semantics semantics = core_->context.model.classify(record_.method, record_.target);
        const bool writes = semantics == effect_semantics::non_idempotent || semantics == effect_semantics::idempotent_write;
        if (writes && upstream_reply_.status >= 200 && upstream_reply_.status < 300) {
            upstream_reply_.effect = effect_kind::committed;
            core_->context.effects.record({record_.operation, record_.attempt, record_.seq, id_, forwarded_at,
                                           record_.method, record_.target, semantics,
                                           "upstream " + std::to_string(upstream_reply_.status)});
        }
    }

    // The commit point, for the executor: the upstream's reply, already fetched by forward(). The
    // executor calls it at most once an attempt, so the reply is handed over, not copied.
    service_response run_service() {
        record_.effect = upstream_reply_.effect;
        return std::move(upstream_reply_);
    }

    // ---- the reply ----

    template <class Headers>
    void set_reply(int status, const Headers& headers, std::string body,
                   std::optional<std::size_t> content_length = std::nullopt) {
        status = std::clamp(status, 100, 999);
        record_.status = static_cast<std::uint16_t>(status);
        std::string& head = reply_.head;
        head.assign(request_.version() >= 11 || !attempt_open_ ? "HTTP/1.1 " : "HTTP/1.0 ");
        head.append(std::to_string(status)).push_back(' ');
        const auto reason = http::obsolete_reason(http::int_to_status(static_cast<unsigned>(status)));
        head.append(reason.data(), reason.size()).append("\r\n");
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
        if (!bodiless) head.append("Content-Length: ").append(std::to_string(content_length.value_or(body.size()))).append("\r\n");
        reply_.keep_alive = keep_alive_override_.value_or(request_.keep_alive());
        if (!reply_.keep_alive) head.append("Connection: close\r\n");
        if (reply_.keep_alive && request_.version() < 11) head.append("Connection: keep-alive\r\n");
        head.append("\r\n");
        reply_.body = std::move(body);
    }
    void set_reply(service_response reply) { set_reply(reply.status, reply.headers, std::move(reply.body)); }
    const std::string& reply_head() const { return reply_.head; }
    const std::string& reply_body() const { return reply_.body; }
    bool reply_keep_alive() const { return reply_.keep_alive; }
    std::string& raw() { return raw_; }
    faults::duration max_fault_wait() const { return core_->context.limits.max_fault_wait; }

    // ---- writing ----

    bool response_started() const { return wire_.response_started_ns >= 0; }
    void mark_response_started() {
        if (!response_started()) wire_.response_started_ns = core_->since_start_ns();
    }

    void send_response() {
        if (attempt_open_) mark_response_started();
        write_now_or_later(socket_, {asio::buffer(reply_.head), asio::buffer(reply_.body)},
                           [self = shared_from_this()](error_code ec, std::size_t n) { self->on_sent(ec, n); });
    }

    void on_sent(error_code ec, std::size_t n) {
        if (attempt_open_) {
            wire_.bytes_out += n;
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
    void write_raw(std::size_t offset, std::size_t n, Next next) {
        mark_response_started();
        asio::async_write(socket_, asio::buffer(raw_.data() + offset, n),
                          [self = shared_from_this(), next](error_code ec, std::size_t written) {
                              self->wire_.bytes_out += written;
                              if (ec) {
                                  self->finish_attempt(wire_outcome::client_gone);
                                  return self->close_now();
                              }
                              next(*self);
                          });
    }

    template <class Next>
    void wait_then(faults::duration wait, Next next) {
        timer_.expires_after(std::min(wait, core_->context.limits.max_fault_wait));
        timer_.async_wait([self = shared_from_this(), next](error_code ec) {
            if (ec) return self->close_now();
            next(*self);
        });
    }

    void start_hang(faults::duration limit) {
        state_ = state::hanging;
        if (stopping_) return end_hang();
        timer_.expires_after(std::min(limit, core_->context.limits.max_fault_wait));
        timer_.async_wait([self = shared_from_this()](error_code ec) {
            if (!ec) self->end_hang();
        });
        watch_hang();
    }

    void watch_hang() {
        socket_.async_read_some(asio::buffer(scratch_), [self = shared_from_this()](error_code ec, std::size_t) {
            if (self->state_ != state::hanging) return;
            if (ec) return self->end_hang();
            self->watch_hang();
        });
    }

    void end_hang() {
        if (state_ != state::hanging) return;
        state_ = state::closing;
        timer_.cancel();
        finish_attempt(wire_outcome::hung);
        close_now();
    }

    // ---- ending ----

    void reset_now() {
        state_ = state::closing;
        error_code ignored;
        socket_.set_option(asio::socket_base::linger{true, 0}, ignored);
        socket_.close(ignored);
        timer_.cancel();
        watchdog_.cancel();
    }

    void close_now() {
        state_ = state::closing;
        error_code ignored;
        socket_.close(ignored);
        timer_.cancel();
        watchdog_.cancel();
    }

    void do_graceful_close() {
        state_ = state::closing;
        watchdog_.cancel();
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
        core_->context.records.append(record_, wire_);
        ++core_->attempts;
        decision_ = faults::fault_decision{};
    }

    std::shared_ptr<proxy::core> core_;
    socket_t socket_;
    timer_t timer_;
    timer_t watchdog_;  // read deadlines and the forward's (on_watchdog)
    steady::time_point read_deadline_{};
    const std::uint64_t id_;
    const std::int64_t accepted_ns_;
    const std::size_t worker_;
    state state_ = state::idle;
    bool stopping_ = false;

    beast::flat_buffer buffer_;
    std::optional<http::request_parser<http::string_body>> parser_;
    std::uint32_t requests_read_ = 0;
    std::size_t bytes_in_ = 0;         // of the request being read
    std::size_t inline_requests_ = 0;  // requests served in a row without returning to the scheduler
    request_t request_;
    struct outgoing {
        std::string head;
        std::string body;
        bool keep_alive = true;
    };
    outgoing reply_;
    std::optional<bool> keep_alive_override_;  // false: close after this reply whatever the client asked

    bool attempt_open_ = false;
    journal_record record_;
    wire_detail wire_;
    faults::fault_decision decision_;
    service_response upstream_reply_;
    std::weak_ptr<upstream_exchange> exchange_;  // the forward in progress, for force_close
    wall_time_point wall_now_{};
    std::string raw_;
    std::array<char, 1024> scratch_{};
};

}  // namespace

template <class F>
void proxy::core::for_each_session(F f) {
    std::vector<std::shared_ptr<proxy_session>> live;
    {
        const std::lock_guard lock{sessions_mutex};
        for (const auto& [id, weak] : sessions) {
            if (auto s = weak.lock()) live.push_back(std::move(s));
        }
    }
    for (const auto& s : live) f(*s);
}

void proxy::core::do_accept() {
    const std::size_t worker = next_worker++ % ios.size();
    acceptor->async_accept(*ios[worker], [this, worker](error_code ec, socket_t socket) {
        if (stopping || !acceptor->is_open()) return;
        if (!ec) on_accept(std::move(socket), worker);
        do_accept();
    });
}

void proxy::core::on_accept(socket_t socket, std::size_t worker) {
    error_code ignored;
    const std::uint64_t id = ++next_connection;
    const std::int64_t accepted_ns = since_start_ns();
    ++connections;
    socket.set_option(tcp::no_delay{true}, ignored);
    // Replies are written inline when the socket takes them (write_now_or_later).
    socket.non_blocking(true, ignored);
    const auto verdict = context.engine.on_connection({id, std::chrono::nanoseconds{accepted_ns}}).verdict;
    if (verdict == faults::connection_verdict::reset) {
        ++refused;
        socket.set_option(asio::socket_base::linger{true, 0}, ignored);
        socket.close(ignored);
        return;
    }
    auto s = std::make_shared<proxy_session>(shared_from_this(), std::move(socket), id, accepted_ns, worker);
    register_session(id, s);
    if (verdict == faults::connection_verdict::close) {
        ++refused;
        return s->start_closed();
    }
    s->start();
}

proxy::proxy(server_context& context, proxy_options options, faultline::clock& time)
    : core_{std::make_shared<core>(context, std::move(options), time)} {}

proxy::~proxy() { stop(); }

error_code proxy::start() {
    core& c = *core_;
    const std::lock_guard lock{c.lifecycle_mutex};
    if (c.started) return asio::error::already_started;
    asio::ip::address address;
    error_code ec = parse_listen_address(c.options.address, c.options.allow_non_loopback, address);
    if (ec) return ec;
    const auto upstream = asio::ip::make_address(c.options.upstream_address, ec);
    if (ec) return ec;
    c.upstream = tcp::endpoint{upstream, c.options.upstream_port};
    if ((ec = open_listener(*c.acceptor, address, c.options.port))) return ec;
    c.port = c.acceptor->local_endpoint().port();
    // The journal's wall-clock anchor, so `faultline check` can merge it with other instances'.
    c.context.records.append_event(wall_clock_anchor(c.since_start_ns(), c.time.wall_now(), c.options.instance));
    c.started = true;
    for (auto& io : c.ios) c.work.emplace_back(io->get_executor());
    c.do_accept();
    for (auto& io : c.ios) c.workers.emplace_back([&context = *io] { context.run(); });
    return {};
}

void proxy::stop() {
    core& c = *core_;
    {
        const std::lock_guard lock{c.lifecycle_mutex};
        if (!c.started || c.stop_done) return;
        c.stop_done = true;
    }
    c.stopping = true;
    asio::post(c.acceptor->get_executor(), [&c] {
        error_code ignored;
        c.acceptor->close(ignored);
    });
    c.for_each_session([](proxy_session& s) { s.on_server_stop(); });
    {
        std::unique_lock sessions_lock{c.sessions_mutex};
        const bool drained =
            c.sessions_gone.wait_for(sessions_lock, c.options.drain_timeout, [&c] { return c.sessions.empty(); });
        sessions_lock.unlock();
        if (!drained) c.for_each_session([](proxy_session& s) { s.force_close(); });
    }
    // The idle upstream connections go with their worker's thread: each pool is closed on its own.
    for (std::size_t i = 0; i < c.ios.size(); ++i) {
        asio::post(*c.ios[i], [&pool = c.pools[i]] { pool.clear(); });
    }
    c.work.clear();
    for (auto& worker : c.workers) {
        if (worker.joinable()) worker.join();
    }
    c.context.records.flush();
}

std::uint16_t proxy::port() const { return core_->port; }
std::string proxy::url() const { return "http://" + core_->options.address + ":" + std::to_string(core_->port); }
faultline::time_point proxy::run_start() const { return core_->run_start; }
proxy_counters proxy::counters() const {
    const core& c = *core_;
    return {c.connections.load(), c.refused.load(),           c.attempts.load(),
            c.forwarded.load(),   c.upstream_connects.load(), c.upstream_failures.load()};
}

error_code probe_upstream(const std::string& address, std::uint16_t port, std::chrono::milliseconds timeout) {
    error_code ec;
    const auto ip = asio::ip::make_address(address, ec);
    if (ec) return ec;
    asio::io_context io;
    socket_t socket{io.get_executor()};
    error_code result = asio::error::timed_out;
    socket.async_connect(tcp::endpoint{ip, port}, [&result](error_code e) { result = e; });
    io.run_for(timeout);
    error_code ignored;
    socket.close(ignored);
    return result;
}

}  // namespace faultline::harness
