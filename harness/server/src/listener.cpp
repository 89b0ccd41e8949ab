#include "faultline/server/listener.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/socket_base.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

namespace faultline::harness {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

// Pause before accepting again after an accept error (out of descriptors, say), so the loop cannot spin.
constexpr std::chrono::milliseconds accept_retry{50};

using acceptor_t = asio::basic_socket_acceptor<tcp, listener_executor>;

}  // namespace

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
    std::size_t cap = 0;
    std::uint16_t bound = 0;
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
        }
    }
    state(const state&) = delete;
    state& operator=(const state&) = delete;

    void do_accept(listening_port& port);
    void on_accepted(listening_port& port, listener_socket socket, std::size_t worker);
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

    mutable std::mutex mutex;  // guards each port's `open`
    std::condition_variable all_gone;

    std::mutex lifecycle;
    bool started = false;
    bool stop_begun = false;
    bool stop_done = false;
};

void listener::state::do_accept(listening_port& port) {
    const std::size_t worker = next_worker++ % ios.size();
    port.acceptor->async_accept(*ios[worker], [this, &port, worker](error_code ec, listener_socket socket) {
        if (stopping.load() || !port.acceptor->is_open()) return;
        if (ec) {
            port.retry->expires_after(accept_retry);
            port.retry->async_wait([this, &port](error_code wait_ec) {
                if (!wait_ec && !stopping.load() && port.acceptor->is_open()) do_accept(port);
            });
            return;
        }
        on_accepted(port, std::move(socket), worker);
        do_accept(port);
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
    const tcp::endpoint endpoint{address, options.port};
    acceptor_t& acceptor = *port.acceptor;
    acceptor.open(endpoint.protocol(), ec);
    if (!ec) acceptor.set_option(asio::socket_base::reuse_address{true}, ec);
    if (!ec) acceptor.bind(endpoint, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
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
    for (listening_port& port : s.ports) s.do_accept(port);
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

}  // namespace faultline::harness
