#include "faultline/server/listener.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/socket_base.hpp>

#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

namespace faultline::server {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

// Pause before accepting again after an accept error (out of descriptors, say), so the loop cannot spin.
constexpr std::chrono::milliseconds accept_retry{50};
// At most this many connections taken off a listen queue at one switch: more than any backlog holds
// (somaxconn is at most 65535), so the queue is emptied, and the loop is bounded all the same.
constexpr std::size_t queue_drain_limit = 65536;

using acceptor_t = asio::basic_socket_acceptor<tcp, listener_executor>;

// Where the filler connection of an `unanswered` port connects: the port's own address, loopback
// for a wildcard one.
tcp::endpoint reachable(const tcp::endpoint& bound) {
    if (!bound.address().is_unspecified()) return bound;
    if (bound.address().is_v6()) return {asio::ip::address_v6::loopback(), bound.port()};
    return {asio::ip::address_v4::loopback(), bound.port()};
}

}  // namespace

std::string endpoint_text(const tcp::endpoint& endpoint) {
    const std::string address = endpoint.address().to_string();
    return (endpoint.address().is_v6() ? "[" + address + "]" : address) + ":" + std::to_string(endpoint.port());
}

bool is_loopback_address(const std::string& text) {
    error_code ec;
    const asio::ip::address address = asio::ip::make_address(text, ec);
    return !ec && address.is_loopback();
}

std::string url_host(const std::string& address) {
    error_code ec;
    const asio::ip::address parsed = asio::ip::make_address(address, ec);
    if (ec) return address;  // a name
    if (parsed.is_unspecified()) return parsed.is_v6() ? "[::1]" : "127.0.0.1";
    return parsed.is_v6() ? "[" + address + "]" : address;
}

error_code parse_listen_address(const std::string& text, bool allow_non_loopback, asio::ip::address& address) {
    error_code ec;
    address = asio::ip::make_address(text, ec);
    if (!ec && !address.is_loopback() && !allow_non_loopback) ec = asio::error::access_denied;
    return ec;
}

std::size_t connections_within_descriptor_limit(std::size_t wanted, std::size_t descriptors_each,
                                                std::size_t reserve) {
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return wanted;
    if (limit.rlim_cur < limit.rlim_max) {
        rlimit raised = limit;
        raised.rlim_cur = limit.rlim_max;
        if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
    }
    if (limit.rlim_cur == RLIM_INFINITY || descriptors_each == 0) return wanted;
    const auto fds = static_cast<std::size_t>(limit.rlim_cur);
    const std::size_t room = fds > reserve ? (fds - reserve) / descriptors_each : 0;
    return std::max<std::size_t>(std::min(wanted, room), 1);
}

// One listening port: its acceptor (on worker 0), its cap and its open connections.
struct listening_port {
    listening_port(asio::io_context& io, port_options opts, listener::accept_handler accept,
                   listener::refusal_handler refuse)
        : options{std::move(opts)},
          on_accept{std::move(accept)},
          on_refusal{std::move(refuse)},
          acceptor{std::in_place, io.get_executor()},
          retry{std::in_place, io.get_executor()} {}

    const port_options options;
    const listener::accept_handler on_accept;
    const listener::refusal_handler on_refusal;
    // Destroyed before the io_context they are registered with (listener::state's destructor).
    std::optional<acceptor_t> acceptor;
    std::optional<listener_timer> retry;
    // While `unanswered`: the listener's own connection that holds the listen queue full.
    std::optional<listener_socket> filler;
    std::size_t cap = 0;
    std::uint16_t bound = 0;
    // The accepting thread only. An accept (or its retry) begun under another generation does not
    // continue the loop: the port left `open` meanwhile, and perhaps came back with a loop of its own.
    port_state mode = port_state::open;
    std::uint64_t accept_generation = 0;
    tcp::endpoint filler_end;  // the filler's own address, to tell it apart in the queue
    // Guarded by listener::state::mutex.
    std::unordered_map<std::uint64_t, std::weak_ptr<listened_connection>> open;
};

struct listener::state {
    state(std::size_t threads, std::chrono::milliseconds drain) : drain_timeout{drain} {
        for (std::size_t i = 0; i < std::max<std::size_t>(threads, 1); ++i) {
            ios.push_back(std::make_unique<asio::io_context>(1));
        }
    }
    ~state() {
        for (listening_port& port : ports) {
            port.acceptor.reset();
            port.retry.reset();
            port.filler.reset();
        }
    }
    state(const state&) = delete;
    state& operator=(const state&) = delete;

    void do_accept(listening_port& port);
    void on_accepted(listening_port& port, listener_socket socket, std::size_t worker);
    // The steps of listener::switch_port, on the accepting thread.
    port_switch switch_port(listening_port& port, port_state to);
    void stop_accepting(listening_port& port, port_switch& result);
    void reset_held_queue(listening_port& port, port_switch& result);
    error_code listen_again(listening_port& port, int backlog);
    error_code stop_listening(listening_port& port);
    error_code hold_queue_full(listening_port& port);
    // Claims the longest-idle kept-alive connection of `port` to be closed; false when none is idle.
    bool make_room(listening_port& port);
    std::vector<std::shared_ptr<listened_connection>> live(const listening_port* only = nullptr);
    bool empty() const;

    const std::chrono::milliseconds drain_timeout;
    std::atomic<bool> stopping{false};
    // Ports before contexts: destroying a context destroys the handlers it still holds, and with
    // them connections, which remove themselves from their port.
    std::deque<listening_port> ports;
    std::vector<std::unique_ptr<asio::io_context>> ios;
    std::vector<asio::executor_work_guard<listener_executor>> work;
    std::vector<std::thread> workers;
    std::size_t next_worker = 0;  // the accepting thread only
    std::uint64_t next_id = 0;    // the accepting thread only
    bool accepting = false;       // start() has begun the accept loops; set before the workers run

    mutable std::mutex mutex;  // guards each port's `open`
    std::condition_variable all_gone;

    std::mutex lifecycle;
    bool started = false;
    bool stop_begun = false;
    bool stop_done = false;
};

void listener::state::do_accept(listening_port& port) {
    const std::size_t worker = next_worker++ % ios.size();
    const std::uint64_t generation = port.accept_generation;
    port.acceptor->async_accept(*ios[worker], [this, &port, worker, generation](error_code ec, listener_socket socket) {
        if (stopping.load() || !port.acceptor->is_open()) return;
        const bool current = generation == port.accept_generation;
        if (ec) {
            // Cancelled: the port left `open`; its switch took the queue.
            if (ec == asio::error::operation_aborted || !current) return;
            port.retry->expires_after(accept_retry);
            port.retry->async_wait([this, &port, generation](error_code wait_ec) {
                if (!wait_ec && !stopping.load() && port.acceptor->is_open() && generation == port.accept_generation) {
                    do_accept(port);
                }
            });
            return;
        }
        // Accepted before the port left `open` (the completion was queued already): served as usual.
        on_accepted(port, std::move(socket), worker);
        if (current) do_accept(port);
    });
}

void listener::state::on_accepted(listening_port& port, listener_socket socket, std::size_t worker) {
    std::size_t open_now = 0;
    {
        const std::lock_guard lock{mutex};
        open_now = port.open.size();
    }
    const std::uint64_t id = ++next_id;
    if (open_now >= port.cap && !(port.options.make_room && make_room(port))) {
        if (port.on_refusal) port.on_refusal(socket, id, port.cap);
        error_code ignored;
        if (socket.is_open()) socket.close(ignored);
        return;
    }
    std::shared_ptr<listened_connection> connection = port.on_accept({std::move(socket), id, worker});
    if (!connection) return;
    {
        // Registered before it starts: it may end (and remove itself) at once on its own thread.
        const std::lock_guard lock{mutex};
        port.open.emplace(id, connection);
    }
    connection->start();
}

port_switch listener::state::switch_port(listening_port& port, port_state to) {
    port_switch result;
    if (to == port.mode) return result;
    const port_state from = port.mode;
    if (from == port_state::open) stop_accepting(port, result);
    if (from == port_state::unanswered) reset_held_queue(port, result);
    error_code ec;
    switch (to) {
        case port_state::open: ec = listen_again(port, asio::socket_base::max_listen_connections); break;
        case port_state::refusing: ec = stop_listening(port); break;
        case port_state::unanswered: ec = hold_queue_full(port); break;
    }
    port.mode = to;
    if (ec && to != port_state::open) {
        // Not carried out: the port goes back to listening, so the server keeps serving.
        if (port.filler) {
            error_code ignored;
            port.filler->close(ignored);
            port.filler.reset();
        }
        port.mode = port_state::open;
        listen_again(port, asio::socket_base::max_listen_connections);
    }
    result.error = ec;
    // Before start() the port only changes state: start() begins accepting on the open ports.
    if (port.mode == port_state::open && accepting) {
        ++port.accept_generation;
        do_accept(port);
    }
    return result;
}

void listener::state::stop_accepting(listening_port& port, port_switch& result) {
    // The pending accept (and any retry) ends; what its completion brings is still served, and the
    // loop does not continue (do_accept's generation).
    ++port.accept_generation;
    error_code ignored;
    port.acceptor->cancel(ignored);
    port.retry->cancel();
    // What connected before the switch is served as usual. The acceptor is non-blocking (add_port),
    // so an empty queue ends the loop with would_block.
    for (std::size_t taken = 0; taken < queue_drain_limit; ++taken) {
        const std::size_t worker = next_worker++ % ios.size();
        error_code ec;
        listener_socket socket = port.acceptor->accept(*ios[worker], ec);
        if (ec) break;
        ++result.accepted_from_queue;
        on_accepted(port, std::move(socket), worker);
    }
}

void listener::state::reset_held_queue(listening_port& port, port_switch& result) {
    for (std::size_t taken = 0; taken < queue_drain_limit; ++taken) {
        error_code ec;
        listener_socket socket = port.acceptor->accept(*ios.front(), ec);
        if (ec) break;
        const tcp::endpoint peer = socket.remote_endpoint(ec);
        error_code ignored;
        // The filler is still connected, so a peer that cannot be named is a client that gave up.
        if (ec || peer != port.filler_end) {
            result.reset_unread.push_back(ec ? std::string{"a peer already gone"} : endpoint_text(peer));
            socket.set_option(asio::socket_base::linger{true, 0}, ignored);
        }
        socket.close(ignored);
    }
    if (port.filler) {
        error_code ignored;
        port.filler->close(ignored);
        port.filler.reset();
    }
}

error_code listener::state::listen_again(listening_port& port, int backlog) {
    error_code ec;
    port.acceptor->set_option(asio::socket_base::reuse_address{true}, ec);
    // listen() on a listening socket only sets its backlog; on a shut-down one it listens again on
    // the port it kept bound.
    if (!ec) port.acceptor->listen(backlog, ec);
    return ec;
}

error_code listener::state::stop_listening(listening_port& port) {
    // On Linux, shutting a listening socket down ends listening (the queue's connections are reset)
    // and keeps the socket bound to its port, which add_port bound explicitly (a port the kernel
    // picked would be released). Without SO_REUSEADDR no other socket can bind the port meanwhile,
    // and none can listen on it.
    if (::shutdown(port.acceptor->native_handle(), SHUT_RD) != 0) {
        return {errno, boost::system::system_category()};
    }
    error_code ec;
    port.acceptor->set_option(asio::socket_base::reuse_address{false}, ec);
    return ec;
}

error_code listener::state::hold_queue_full(listening_port& port) {
    // Linux drops a SYN while the accept queue holds more than the backlog: at a backlog of 0, one
    // connection not accepted holds it full. The filler connects to the port itself; with the default
    // net.ipv4.tcp_syncookies = 1 it gets in by a syncookie, and with 0 a backlog of 0 drops every SYN
    // already. A client whose SYN beats the filler's holds the queue instead (reset_held_queue).
    error_code ec = listen_again(port, 0);
    if (ec) return ec;
    const tcp::endpoint target = reachable(port.acceptor->local_endpoint(ec));
    if (ec) return ec;
    listener_socket& filler = port.filler.emplace(ios.front()->get_executor());
    filler.open(target.protocol(), ec);
    if (!ec) filler.bind({target.address(), 0}, ec);
    if (!ec) port.filler_end = filler.local_endpoint(ec);
    if (ec) return ec;
    // Completes at once on loopback, or never if a client took the place first: either holds the queue.
    filler.async_connect(target, [](error_code) {});
    return {};
}

bool listener::state::make_room(listening_port& port) {
    // A connection may leave its idle spell between the look and the claim; then the next is tried.
    for (int tries = 0; tries < 3; ++tries) {
        std::shared_ptr<listened_connection> oldest;
        std::int64_t oldest_since = 0;
        for (const auto& c : live(&port)) {
            const auto since = c->idle_since();
            if (since && (!oldest || *since < oldest_since)) {
                oldest = c;
                oldest_since = *since;
            }
        }
        if (!oldest) return false;
        if (oldest->evict_if_idle_since(oldest_since, port.cap)) return true;
    }
    return false;
}

std::vector<std::shared_ptr<listened_connection>> listener::state::live(const listening_port* only) {
    std::vector<std::shared_ptr<listened_connection>> out;
    const std::lock_guard lock{mutex};
    for (const listening_port& port : ports) {
        if (only != nullptr && only != &port) continue;
        for (const auto& [id, weak] : port.open) {
            if (auto c = weak.lock()) out.push_back(std::move(c));
        }
    }
    return out;
}

bool listener::state::empty() const {
    return std::all_of(ports.begin(), ports.end(), [](const listening_port& p) { return p.open.empty(); });
}

listener::listener(std::size_t threads, std::chrono::milliseconds drain_timeout)
    : state_{std::make_unique<state>(threads, drain_timeout)} {}

listener::~listener() { stop(); }

error_code listener::add_port(const port_options& options, accept_handler on_accept, refusal_handler on_refusal,
                              std::size_t& index) {
    state& s = *state_;
    asio::ip::address address;
    error_code ec = parse_listen_address(options.address, options.allow_non_loopback, address);
    if (ec) return ec;
    listening_port& port = s.ports.emplace_back(*s.ios.front(), options, std::move(on_accept), std::move(on_refusal));
    tcp::endpoint endpoint{address, options.port};
    acceptor_t& acceptor = *port.acceptor;
    // The port is bound by its number, never as "any port", so that it stays bound while its socket
    // stops listening (port_state::refusing): for an ephemeral one a stand-in takes the port first,
    // and both hold it (SO_REUSEADDR, neither listening) until the acceptor has it.
    std::optional<acceptor_t> stand_in;
    if (options.port == 0) {
        stand_in.emplace(s.ios.front()->get_executor());
        stand_in->open(endpoint.protocol(), ec);
        if (!ec) stand_in->set_option(asio::socket_base::reuse_address{true}, ec);
        if (!ec) stand_in->bind(endpoint, ec);
        if (!ec) endpoint.port(stand_in->local_endpoint(ec).port());
    }
    if (!ec) acceptor.open(endpoint.protocol(), ec);
    if (!ec) acceptor.set_option(asio::socket_base::reuse_address{true}, ec);
    if (!ec) acceptor.bind(endpoint, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    // A switch out of `open` takes the queue with accepts that end at would_block (switch_port); the
    // asynchronous accepts work alike either way.
    if (!ec) acceptor.non_blocking(true, ec);
    if (ec) {
        s.ports.pop_back();
        return ec;
    }
    port.bound = acceptor.local_endpoint().port();
    port.cap = options.descriptors_per_connection == 0
                   ? options.max_connections
                   : connections_within_descriptor_limit(options.max_connections, options.descriptors_per_connection,
                                                         options.descriptor_reserve);
    index = s.ports.size() - 1;
    return {};
}

void listener::start() {
    state& s = *state_;
    const std::lock_guard lock{s.lifecycle};
    if (s.started) return;
    s.started = true;
    for (auto& io : s.ios) s.work.emplace_back(io->get_executor());
    s.accepting = true;
    for (listening_port& port : s.ports) {
        if (port.mode == port_state::open) s.do_accept(port);
    }
    s.workers.reserve(s.ios.size());
    for (auto& io : s.ios) s.workers.emplace_back([&context = *io] { context.run(); });
}

bool listener::stop() {
    state& s = *state_;
    std::unique_lock lock{s.lifecycle};
    if (!s.started) return true;
    if (s.stop_done) return true;
    const auto self = std::this_thread::get_id();
    const bool on_worker =
        std::any_of(s.workers.begin(), s.workers.end(), [self](const std::thread& t) { return t.get_id() == self; });
    if (!s.stop_begun) {
        s.stop_begun = true;
        s.stopping = true;
        // Acceptors live on worker 0's context: closed there, so no accept handler races the close.
        asio::post(*s.ios.front(), [&s] {
            for (listening_port& port : s.ports) {
                error_code ignored;
                port.acceptor->close(ignored);
                port.retry->cancel();
                if (port.filler) port.filler->close(ignored);
            }
        });
        for (const auto& c : s.live()) c->on_listener_stop();
    }
    // A worker cannot join itself: the stop is completed by a later call from another thread.
    if (on_worker) return false;
    s.stop_done = true;
    lock.unlock();

    {
        std::unique_lock open_lock{s.mutex};
        const bool drained = s.all_gone.wait_for(open_lock, s.drain_timeout, [&s] { return s.empty(); });
        open_lock.unlock();
        if (!drained) {
            for (const auto& c : s.live()) c->force_close();
        }
    }
    s.work.clear();
    for (auto& worker : s.workers) {
        if (worker.joinable()) worker.join();
    }
    return true;
}

void listener::remove(std::size_t index, std::uint64_t id) {
    state& s = *state_;
    const std::lock_guard lock{s.mutex};
    s.ports[index].open.erase(id);
    if (s.empty()) s.all_gone.notify_all();
}

port_switch listener::switch_port(std::size_t index, port_state to) {
    state& s = *state_;
    if (s.stopping.load()) return {asio::error::operation_aborted, 0, {}};
    return s.switch_port(s.ports.at(index), to);
}

port_state listener::state_of(std::size_t index) const { return state_->ports.at(index).mode; }

bool listener::stopping() const { return state_->stopping.load(std::memory_order_relaxed); }
std::uint16_t listener::port(std::size_t index) const {
    return index < state_->ports.size() ? state_->ports[index].bound : 0;
}
std::size_t listener::max_connections(std::size_t index) const {
    return index < state_->ports.size() ? state_->ports[index].cap : 0;
}
std::size_t listener::open_connections(std::size_t index) const {
    const std::lock_guard lock{state_->mutex};
    return index < state_->ports.size() ? state_->ports[index].open.size() : 0;
}
std::size_t listener::workers() const { return state_->ios.size(); }
asio::io_context& listener::context(std::size_t worker) { return *state_->ios[worker]; }

}  // namespace faultline::server
