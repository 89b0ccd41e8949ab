#include "faultline/tcp/tcp_proxy.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include "faultline/faults/decision_random.hpp"
#include "faultline/server/listener.hpp"
#include "faultline/server/upstream.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <deque>
#include <mutex>
#include <optional>
#include <vector>

namespace faultline::tcp {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;
using std::chrono::nanoseconds;

namespace {

class session;

}  // namespace

namespace {

// Descriptors kept back from the connection cap: the listener, the journal file, stdio.
constexpr std::size_t descriptor_reserve = 64;
// How long stop() waits for the connections it ended to be journaled before closing what is left.
constexpr std::chrono::milliseconds stop_drain{1000};

}  // namespace

struct tcp_proxy::core {
    core(std::shared_ptr<const toxic_set> t, tcp_proxy_options o, record_sink s, faultline::clock& c)
        : toxics{std::move(t)}, options{std::move(o)}, sink{std::move(s)}, time{c}, started_at{c.now()} {}

    std::int64_t since_start_ns() const {
        return std::chrono::duration_cast<nanoseconds>(time.now() - started_at).count();
    }
    void finished(const connection_record& record);

    std::shared_ptr<const toxic_set> current_toxics() const {
        const std::lock_guard lock{toxics_mutex};
        return toxics;
    }

    mutable std::mutex toxics_mutex;
    std::shared_ptr<const toxic_set> toxics;  // replaced whole, never changed in place
    const tcp_proxy_options options;
    const record_sink sink;
    faultline::clock& time;
    const faultline::time_point started_at;

    std::atomic<std::uint64_t> connections{0};
    std::atomic<std::uint64_t> toxic_connections{0};
    std::atomic<std::uint64_t> upstream_failures{0};
    std::atomic<std::uint64_t> bytes_up{0};
    std::atomic<std::uint64_t> bytes_down{0};

    std::mutex lifecycle;
    bool started = false;

    std::vector<tcp::endpoint> upstream;  // what the upstream's name resolved to, tried in turn
    std::size_t port = 0;                 // the listener's index of the proxy's port

    // Declared after everything a session touches: destroying the listener destroys any handler
    // still queued, and with it the session, which journals itself. One worker: sessions need no locks.
    server::listener listen{1, stop_drain};
};

namespace {

// A toxic acting on one connection, with its private random stream.
struct active_toxic {
    const configured_toxic* config;
    faults::decision_random random;
};

// One connection: the client's socket, the upstream's, and a direction (buffer, timer, toxics) each way.
class session final : public server::listened_connection, public std::enable_shared_from_this<session> {
public:
    session(tcp_proxy::core& core, tcp::socket client, std::uint64_t conn, bool registered)
        : core_{core},
          client_{std::move(client)},
          upstream_{client_.get_executor()},
          connect_timer_{client_.get_executor()},
          lifetime_timer_{client_.get_executor()},
          up_{stream_direction::upstream, client_, upstream_, client_.get_executor()},
          down_{stream_direction::downstream, upstream_, client_, client_.get_executor()},
          registered_{registered} {
        record_.conn = conn;
        record_.t_accept = core.since_start_ns();
        record_.instance = core.options.instance;
    }

    // The record goes out when the last handler let go of the session, so the bytes of writes that
    // completed while the connection was being ended are in it.
    ~session() override {
        core_.finished(record_);
        if (registered_) core_.listen.remove(core_.port, record_.conn);
    }
    session(const session&) = delete;
    session& operator=(const session&) = delete;

    void start() override {
        asio::dispatch(client_.get_executor(), [self = shared_from_this()] { self->begin(); });
    }

    // The proxy is stopping, or its drain time is over: end at once.
    void on_listener_stop() override { stop(); }
    void force_close() override { stop(); }

    // Too many connections are open: reset this one before any toxic or the upstream sees it.
    void refuse_over_capacity() { end(connection_outcome::over_capacity, link_end::reset, {}, {}); }

private:
    void stop() {
        asio::dispatch(client_.get_executor(),
                       [self = shared_from_this()] { self->end(connection_outcome::stopped, link_end::close, {}, {}); });
    }

    void begin() {
        const nanoseconds since_start{record_.t_accept};
        toxics_ = core_.current_toxics();
        for (const configured_toxic& t : toxics_->toxics) {
            if (!toxic_applies(t, core_.options.seed, record_.conn, since_start)) continue;
            record_.toxics.push_back(t.name);
            active_toxic active{&t, faults::decision_random{toxic_stream_key(core_.options.seed, t.name, record_.conn)}};
            if (!t.stream) {
                connection_toxics_.push_back(active);
            } else {
                (*t.stream == stream_direction::upstream ? up_ : down_).toxics.push_back(active);
            }
        }
        if (!record_.toxics.empty()) core_.toxic_connections.fetch_add(1, std::memory_order_relaxed);
        for (const auto& list : {&connection_toxics_, &up_.toxics, &down_.toxics}) {
            for (const active_toxic& t : *list) {
                if (const auto verdict = t.config->behaviour->on_accept()) {
                    return end(connection_outcome::refused, *verdict, t.config->name, {});
                }
            }
        }
        arm_lifetime();
        do_connect();
    }

    // A chunk read from a direction's source, waiting to be written to its sink.
    struct chunk {
        std::array<char, tcp_proxy::read_buffer_size> bytes;  // not zeroed: only `size` bytes are read
        std::size_t size = 0;
        faultline::time_point read_at;
        chunk_plan plan;
        std::string ended_by;  // the toxic that set plan.end
    };

    // One way through the proxy. A reader reads chunks and has the toxics plan them; a writer writes
    // them in order, waiting as planned. While the writer waits (a latency, a bandwidth or slicer
    // pause) the reader runs ahead by at most max_chunks_per_direction chunks, so a latency holds
    // several chunks at once instead of throttling the stream; otherwise it reads the next chunk when
    // the writer is done with the last one (reading while a write is in flight costs smaller reads,
    // 10-15 % more CPU per byte on loopback). Bounded memory, and a slow sink slows the source.
    struct direction {
        direction(stream_direction w, tcp::socket& from, tcp::socket& to, const asio::any_io_executor& executor)
            : which{w}, source{from}, sink{to}, timer{executor} {}

        stream_direction which;
        tcp::socket& source;
        tcp::socket& sink;
        asio::steady_timer timer;  // the writer's waits
        std::vector<active_toxic> toxics;
        std::unique_ptr<chunk> reading;                 // the chunk a read is outstanding into
        std::deque<std::unique_ptr<chunk>> queue;       // read, not yet written; the front is being written
        std::vector<std::unique_ptr<chunk>> spare;      // allocated, free
        std::size_t chunks = 0;                         // allocated, at most max_chunks_per_direction
        std::uint64_t planned = 0;    // bytes the toxics let through so far (what limit_data counts)
        std::uint64_t forwarded = 0;  // bytes written
        std::size_t written = 0;      // of the front chunk's plan.forward
        bool first_piece = true;
        bool writing = false;        // the front chunk is being written or waited for
        bool holding = false;        // ... waited for: a timer, not the socket, holds the writer
        bool read_stopped = false;   // EOF read, or a planned end: read no more
        bool eof = false;            // EOF read ...
        bool done = false;           // ... and handled, after every chunk before it was written
        bool eof_swallowed = false;  // ... and not passed on (a black hole)
    };

    static constexpr std::size_t max_chunks_per_direction = 4;

    // A `timeout` toxic ends the connection a fixed time after accept, whatever flows.
    void arm_lifetime() {
        std::optional<nanoseconds> shortest;
        std::string by;
        for (const auto& list : {&up_.toxics, &down_.toxics, &connection_toxics_}) {
            for (const active_toxic& t : *list) {
                auto life = t.config->behaviour->lifetime();
                if (!life) continue;
                if (life->count() == 0 || *life > core_.options.max_hold) life = core_.options.max_hold;
                if (!shortest || *life < *shortest) {
                    shortest = life;
                    by = t.config->name;
                }
            }
        }
        if (!shortest) return;
        const auto deadline = core_.started_at + nanoseconds{record_.t_accept} + *shortest;
        lifetime_timer_.expires_after(deadline - core_.time.now());
        lifetime_timer_.async_wait([self = shared_from_this(), by](const error_code& ec) {
            if (ec) return;
            self->end(connection_outcome::timeout, link_end::close, by, {});
        });
    }

    void do_connect() {
        connect_timer_.expires_after(core_.options.connect_timeout);
        connect_timer_.async_wait([self = shared_from_this()](const error_code& ec) {
            if (ec) return;
            self->connect_timed_out_ = true;
            error_code ignored;
            self->upstream_.close(ignored);
        });
        asio::async_connect(upstream_, core_.upstream, [self = shared_from_this()](const error_code& ec, const tcp::endpoint&) {
            self->on_connect(ec);
        });
    }

    void on_connect(const error_code& ec) {
        connect_timer_.cancel();
        if (ended_) return;
        if (connect_timed_out_) {
            return end(connection_outcome::upstream_unreachable, link_end::reset, {}, "upstream connect: timed out");
        }
        if (ec == asio::error::connection_refused) {
            return end(connection_outcome::upstream_refused, link_end::reset, {}, "upstream connect: " + ec.message());
        }
        if (ec) return end(connection_outcome::upstream_unreachable, link_end::reset, {}, "upstream connect: " + ec.message());
        error_code ignored;
        client_.set_option(tcp::no_delay{true}, ignored);
        upstream_.set_option(tcp::no_delay{true}, ignored);
        do_read(up_);
        do_read(down_);
    }

    void do_read(direction& d) {
        if (ended_ || d.read_stopped || d.reading || (d.writing && !d.holding)) return;
        if (!d.spare.empty()) {
            d.reading = std::move(d.spare.back());
            d.spare.pop_back();
        } else if (d.chunks < max_chunks_per_direction) {
            d.reading = std::make_unique_for_overwrite<chunk>();
            ++d.chunks;
        } else {
            return;  // every chunk is queued: the writer resumes the reader when one is written
        }
        d.source.async_read_some(asio::buffer(d.reading->bytes),
                                 [self = shared_from_this(), &d](const error_code& ec, std::size_t n) {
                                     self->on_read(d, ec, n);
                                 });
    }

    void on_read(direction& d, const error_code& ec, std::size_t n) {
        std::unique_ptr<chunk> c = std::move(d.reading);
        if (ended_) return;
        if (ec == asio::error::eof) {
            d.spare.push_back(std::move(c));
            d.read_stopped = true;
            d.eof = true;
            return finish_eof(d);
        }
        if (ec) return end(connection_outcome::reset, link_end::reset, {}, read_error(d, ec));
        c->size = n;
        c->read_at = core_.time.now();
        c->plan = chunk_plan{};
        c->plan.forward = n;
        c->ended_by.clear();
        for (active_toxic& t : d.toxics) {
            t.config->behaviour->on_chunk(c->plan, stream_state{d.planned}, t.random);
            if (c->plan.end && c->ended_by.empty()) c->ended_by = t.config->name;
        }
        c->plan.forward = std::min(c->plan.forward, n);
        d.planned += c->plan.forward;
        if (c->plan.end) d.read_stopped = true;  // nothing after this chunk is forwarded
        d.queue.push_back(std::move(c));
        if (!d.writing) do_write_front(d);
        do_read(d);
    }

    // Starts writing the oldest queued chunk, after its delay (counted from its read).
    void do_write_front(direction& d) {
        if (ended_) return;
        if (d.queue.empty()) {
            d.writing = false;
            return finish_eof(d);
        }
        d.writing = true;
        d.written = 0;
        d.first_piece = true;
        const chunk& c = *d.queue.front();
        if (c.plan.delay.count() > 0) {
            d.timer.expires_after(c.read_at + c.plan.delay - core_.time.now());
            d.timer.async_wait([self = shared_from_this(), &d](const error_code& wait_ec) {
                d.holding = false;
                if (!wait_ec) self->do_write_piece(d);
            });
            return hold(d);
        }
        do_write_piece(d);
    }

    void do_write_piece(direction& d) {
        if (ended_) return;
        const chunk& c = *d.queue.front();
        if (d.written == c.plan.forward) return on_chunk_written(d);
        std::size_t size = c.plan.forward - d.written;
        for (active_toxic& t : d.toxics) size = std::min(size, t.config->behaviour->piece_limit(t.random));
        size = std::max<std::size_t>(size, 1);
        nanoseconds wait{0};
        for (const active_toxic& t : d.toxics) wait += t.config->behaviour->piece_wait(size, d.first_piece);
        d.first_piece = false;
        if (wait.count() > 0) {
            d.timer.expires_after(wait);
            d.timer.async_wait([self = shared_from_this(), &d, size](const error_code& ec) {
                d.holding = false;
                if (!ec) self->write_piece(d, size);
            });
            return hold(d);
        }
        write_piece(d, size);
    }

    // The writer waits on its timer: the reader may run ahead meanwhile.
    void hold(direction& d) {
        d.holding = true;
        do_read(d);
    }

    void write_piece(direction& d, std::size_t size) {
        asio::async_write(d.sink, asio::buffer(d.queue.front()->bytes.data() + d.written, size),
                          [self = shared_from_this(), &d](const error_code& ec, std::size_t n) {
                              self->on_write(d, ec, n);
                          });
    }

    void on_write(direction& d, const error_code& ec, std::size_t n) {
        // What the kernel took was forwarded, even when the connection ended while this handler waited.
        d.forwarded += n;
        (d.which == stream_direction::upstream ? record_.bytes_up : record_.bytes_down) += n;
        if (ended_) return;
        if (ec) return end(connection_outcome::reset, link_end::reset, {}, write_error(d, ec));
        d.written += n;
        do_write_piece(d);
    }

    void on_chunk_written(direction& d) {
        std::unique_ptr<chunk> c = std::move(d.queue.front());
        d.queue.pop_front();
        if (c->plan.end) {
            const link_end how = *c->plan.end;
            if (c->plan.end_after.count() == 0) return end(ended_outcome(how), how, c->ended_by, {});
            d.timer.expires_after(c->plan.end_after);
            d.timer.async_wait([self = shared_from_this(), how, by = c->ended_by](const error_code& ec) {
                if (!ec) self->end(ended_outcome(how), how, by, {});
            });
            return;
        }
        d.spare.push_back(std::move(c));
        do_write_front(d);
        do_read(d);  // the writer is idle now, or holding, or the reader is already reading
    }

    // An EOF is passed on only once every chunk read before it is written.
    void finish_eof(direction& d) {
        if (!d.eof || d.done || d.writing || !d.queue.empty()) return;
        d.done = true;
        const bool passes = std::all_of(d.toxics.begin(), d.toxics.end(),
                                        [](const active_toxic& t) { return t.config->behaviour->passes_eof(); });
        if (passes) {
            // A half-close: the other peer may still answer.
            error_code ignored;
            d.sink.shutdown(tcp::socket::shutdown_send, ignored);
        } else {
            d.eof_swallowed = true;
        }
        // A swallowed EOF leaves its receiver waiting: the black hole's lifetime ends the connection.
        if (up_.done && down_.done && !up_.eof_swallowed && !down_.eof_swallowed) {
            end(connection_outcome::closed, link_end::close, {}, {});
        }
    }

    static connection_outcome ended_outcome(link_end how) {
        return how == link_end::reset ? connection_outcome::reset : connection_outcome::closed;
    }

    static std::string read_error(const direction& d, const error_code& ec) {
        return std::string{d.which == stream_direction::upstream ? "client" : "upstream"} + " read: " + ec.message();
    }
    static std::string write_error(const direction& d, const error_code& ec) {
        return std::string{d.which == stream_direction::upstream ? "upstream" : "client"} + " write: " + ec.message();
    }

    // Ends the connection once: cancels every wait, closes or resets both sockets; the destructor
    // journals it.
    void end(connection_outcome outcome, link_end how, const std::string& ended_by, const std::string& error) {
        if (ended_) return;
        ended_ = true;
        connect_timer_.cancel();
        lifetime_timer_.cancel();
        up_.timer.cancel();
        down_.timer.cancel();
        for (tcp::socket* s : {&client_, &upstream_}) {
            error_code ignored;
            if (!s->is_open()) continue;
            if (how == link_end::reset) {
                s->set_option(asio::socket_base::linger{true, 0}, ignored);
            } else {
                s->shutdown(tcp::socket::shutdown_both, ignored);
            }
            s->close(ignored);
        }
        record_.t_end = core_.since_start_ns();
        record_.outcome = outcome;
        record_.ended_by = ended_by;
        record_.error = error;
    }

    tcp_proxy::core& core_;
    // The list as it was at accept: the active toxics point into it.
    std::shared_ptr<const toxic_set> toxics_;
    tcp::socket client_;
    tcp::socket upstream_;
    asio::steady_timer connect_timer_;
    asio::steady_timer lifetime_timer_;
    direction up_;
    direction down_;
    std::vector<active_toxic> connection_toxics_;
    connection_record record_;
    const bool registered_;  // counted by the listener (not one refused over capacity)
    bool connect_timed_out_ = false;
    bool ended_ = false;
};

}  // namespace

void tcp_proxy::core::finished(const connection_record& record) {
    if (record.outcome == connection_outcome::upstream_refused ||
        record.outcome == connection_outcome::upstream_unreachable) {
        upstream_failures.fetch_add(1, std::memory_order_relaxed);
    }
    bytes_up.fetch_add(record.bytes_up, std::memory_order_relaxed);
    bytes_down.fetch_add(record.bytes_down, std::memory_order_relaxed);
    if (sink) sink(record);
}

tcp_proxy::tcp_proxy(std::shared_ptr<const toxic_set> toxics, tcp_proxy_options options, record_sink sink,
                     faultline::clock& time)
    : core_{std::make_shared<core>(std::move(toxics), std::move(options), std::move(sink), time)} {}

void tcp_proxy::replace_toxics(std::shared_ptr<const toxic_set> toxics) {
    const std::lock_guard lock{core_->toxics_mutex};
    core_->toxics = std::move(toxics);
}

std::shared_ptr<const toxic_set> tcp_proxy::toxics() const { return core_->current_toxics(); }

tcp_proxy::~tcp_proxy() { stop(); }

error_code tcp_proxy::start() {
    core& c = *core_;
    const std::lock_guard lock{c.lifecycle};
    if (c.started) return asio::error::already_started;
    error_code ec;
    c.upstream = server::resolve_upstream(c.options.upstream_address, c.options.upstream_port, ec);
    if (ec) return ec;
    server::port_options listen;
    listen.address = c.options.address;
    listen.port = c.options.port;
    listen.allow_non_loopback = c.options.allow_non_loopback;
    listen.max_connections = c.options.max_connections;
    // The client's socket and the upstream's.
    listen.descriptors_per_connection = 2;
    listen.descriptor_reserve = descriptor_reserve;
    ec = c.listen.add_port(
        listen,
        [&c](server::accepted_connection accepted) -> std::shared_ptr<server::listened_connection> {
            c.connections.fetch_add(1, std::memory_order_relaxed);
            return std::make_shared<session>(c, tcp::socket{std::move(accepted.socket)}, accepted.id, true);
        },
        // Past the cap: journaled as a connection of its own (over_capacity), reset at once.
        [&c](server::listener_socket& socket, std::uint64_t id, std::size_t) {
            c.connections.fetch_add(1, std::memory_order_relaxed);
            std::make_shared<session>(c, tcp::socket{std::move(socket)}, id, false)->refuse_over_capacity();
        },
        c.port);
    if (ec) return ec;
    c.started = true;
    c.listen.start();
    return {};
}

void tcp_proxy::stop() { core_->listen.stop(); }

std::uint16_t tcp_proxy::port() const { return core_->listen.port(core_->port); }
std::size_t tcp_proxy::max_connections() const { return core_->listen.max_connections(core_->port); }

tcp_proxy_counters tcp_proxy::counters() const {
    const core& c = *core_;
    return {c.connections.load(), c.toxic_connections.load(), c.upstream_failures.load(), c.bytes_up.load(),
            c.bytes_down.load()};
}

faultline::time_point tcp_proxy::run_start() const { return core_->started_at; }

}  // namespace faultline::tcp
