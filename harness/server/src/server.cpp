#include "faultline/server/server.hpp"
#include "faultline/server/listener.hpp"

#include "server_core.hpp"
#include "session.hpp"

#include <boost/asio/ip/address.hpp>
#include <boost/asio/post.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace faultline::harness {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using server_detail::acceptor_t;
using server_detail::socket_t;
using server_detail::timer_t;

namespace {

// Pause before accepting again after an accept error (e.g. out of descriptors), so the loop cannot spin.
constexpr std::chrono::milliseconds accept_retry{50};

}  // namespace

void server::core::journal_limit_event(server_event_kind kind, std::string peer, std::string detail) {
    const std::int64_t now = since_start_ns();
    const auto skipped = limit_events.admit(kind, now);
    if (!skipped) {
        ++events_not_journaled;
        return;
    }
    if (*skipped > 0) detail += " (and " + std::to_string(*skipped) + " more not journaled)";
    server_event event;
    event.kind = kind;
    event.at_ns = now;
    event.detail = std::move(detail);
    event.peer = std::move(peer);
    context.records.append_event(std::move(event));
}

void server::core::register_session(std::uint64_t id, const std::shared_ptr<server_detail::session>& s) {
    const std::lock_guard lock{sessions_mutex};
    sessions.emplace(id, s);
}

bool server::core::evict_longest_idle(std::size_t cap) {
    // A session may leave its idle spell between the look and the claim; then the next is tried.
    for (int tries = 0; tries < 3; ++tries) {
        std::shared_ptr<server_detail::session> oldest;
        std::int64_t oldest_since = 0;
        for_each_session([&](server_detail::session& s) {
            const auto since = s.idle_since();
            if (since && (!oldest || *since < oldest_since)) {
                oldest = s.shared_from_this();
                oldest_since = *since;
            }
        });
        if (!oldest) return false;
        if (oldest->evict_if_idle_since(oldest_since, cap)) return true;
    }
    return false;
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
            auto retry_timer = std::make_shared<timer_t>(from.get_executor(), accept_retry);
            retry_timer->async_wait([this, &from, control_only, retry_timer](error_code) {
                if (!stopping && from.is_open()) do_accept(from, control_only);
            });
            return;
        }
        on_accept(std::move(socket), control_only);
        do_accept(from, control_only);
    });
}

namespace {

std::string peer_of(const socket_t& socket) {
    error_code ec;
    const tcp::endpoint peer = socket.remote_endpoint(ec);
    if (ec) return {};
    const std::string address = peer.address().to_string();
    return (peer.address().is_v6() ? "[" + address + "]" : address) + ":" + std::to_string(peer.port());
}

}  // namespace

void server::core::on_accept(socket_t socket, bool control_only) {
    error_code ignored;
    // At the cap a kept-alive idle connection makes room (it is closed as it would be by
    // idle_timeout, only sooner); with none, the new connection is closed at once, before it costs a
    // session: the client sees EOF or a reset. Every refusal is counted; the journal gets a
    // rate-limited event.
    std::atomic<std::uint64_t>& open = control_only ? open_control : open_connections;
    const std::size_t cap = control_only ? server_detail::max_control_connections : max_connections;
    if (open.load(std::memory_order_relaxed) >= cap && (control_only || !evict_longest_idle(cap))) {
        ++over_limit;
        journal_limit_event(server_event_kind::connection_refused, peer_of(socket),
                            std::string{control_only ? "control" : "service"} + " connections at the cap of " +
                                std::to_string(cap));
        socket.close(ignored);
        return;
    }
    const std::uint64_t id = ++next_connection;
    const std::int64_t accepted_ns = since_start_ns();
    ++connections;
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
            ++open;
            auto s = std::make_shared<server_detail::session>(self, std::move(socket), id, accepted_ns, false);
            self->register_session(id, s);
            s->start_closed();
            return;
        }
    }
    ++open;  // given back by the session's destructor
    std::make_shared<server_detail::session>(self, std::move(socket), id, accepted_ns, control_only)->start();
}

server::server(server_context& context, server_options options, faultline::clock& time)
    : core_{std::make_shared<core>(context, std::move(options), time)} {}

server::~server() { stop(); }

namespace {

// Raises the soft descriptor limit to the hard one, and returns how many service connections fit
// under it with the reserve kept back: the cap is lowered to that rather than let accept() fail
// with EMFILE, which would lock out the control API too.
std::size_t connections_within_descriptor_limit(std::size_t wanted) {
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return wanted;
    if (limit.rlim_cur < limit.rlim_max) {
        rlimit raised = limit;
        raised.rlim_cur = limit.rlim_max;
        if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
    }
    if (limit.rlim_cur == RLIM_INFINITY) return wanted;
    const auto fds = static_cast<std::size_t>(limit.rlim_cur);
    const std::size_t room = fds > server_detail::descriptor_reserve ? fds - server_detail::descriptor_reserve : 1;
    return std::min(wanted, room);
}

}  // namespace

error_code server::start() {
    core& c = *core_;
    const std::lock_guard lock{c.lifecycle_mutex};
    if (c.started) return asio::error::already_started;
    asio::ip::address address;
    error_code ec = parse_listen_address(c.options.address, c.options.allow_non_loopback, address);
    if (ec) return ec;
    c.max_connections = connections_within_descriptor_limit(c.context.limits.max_connections);
    if ((ec = open_listener(c.acceptor, address, c.options.port))) return ec;
    c.port = c.acceptor.local_endpoint().port();
    if (c.options.control_port) {
        if ((ec = open_listener(c.control_acceptor, address, *c.options.control_port))) {
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
const std::string& server::control_token() const { return core_->control_token; }
std::size_t server::max_connections() const { return core_->max_connections; }
std::string server::url() const { return "http://" + core_->options.address + ":" + std::to_string(core_->port); }
std::string server::control_url() const {
    if (!core_->control_port) return {};
    return "http://" + core_->options.address + ":" + std::to_string(*core_->control_port) +
           std::string{control_prefix};
}
server_counters server::counters() const { return core_->read_counters(); }
faultline::time_point server::run_start() const { return core_->run_start; }

}  // namespace faultline::harness
