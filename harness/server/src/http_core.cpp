#include "http_core.hpp"

#include "http_connection.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/socket_base.hpp>

#include <utility>

namespace faultline::harness::server_detail {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

std::string peer_of(const listener_socket& socket) {
    error_code ec;
    const tcp::endpoint peer = socket.remote_endpoint(ec);
    if (ec) return {};
    const std::string address = peer.address().to_string();
    return (peer.address().is_v6() ? "[" + address + "]" : address) + ":" + std::to_string(peer.port());
}

http_core::http_core(server_context& ctx, faultline::clock& clk, http_settings s, std::unique_ptr<backend> be)
    : context{ctx},
      time{clk},
      run_start{clk.now()},
      settings{std::move(s)},
      listen{settings.threads, settings.drain_timeout},
      behind{std::move(be)} {}

server_counters http_core::read_counters() const {
    return {connections.load(),     refused.load(),
            attempts.load(),        control_requests.load(),
            bad_requests.load(),    listen.open_connections(service_port),
            over_limit.load(),      header_timeouts.load(),
            idle_timeouts.load(),   write_timeouts.load(),
            idle_evicted.load(),    events_not_journaled.load()};
}

error_code http_core::open_service_port(port_options options) {
    // At the cap a kept-alive idle connection makes room (it is closed as it would be by
    // idle_timeout, only sooner), as nginx does.
    options.make_room = true;
    return listen.add_port(
        options, [this](accepted_connection accepted) { return accept(std::move(accepted), false); },
        [this](const listener_socket& socket, std::uint64_t, std::size_t cap) { refuse(socket, cap, false); }, service_port);
}

error_code http_core::open_control_port(port_options options, std::string token) {
    control_token = std::move(token);
    control.emplace(context, control_api::options{control_token, [this] { return read_counters(); },
                                                  [this] { return since_start_ns(); }});
    // Its own room, apart from the service's: a full service side never locks the control API out.
    options.max_connections = max_control_connections;
    options.descriptors_per_connection = 0;
    std::size_t index = 0;
    const error_code ec = listen.add_port(
        options, [this](accepted_connection accepted) { return accept(std::move(accepted), true); },
        [this](const listener_socket& socket, std::uint64_t, std::size_t cap) { refuse(socket, cap, true); }, index);
    if (!ec) control_port = index;
    return ec;
}

std::shared_ptr<listened_connection> http_core::accept(accepted_connection accepted, bool control_only) {
    error_code ignored;
    const std::int64_t accepted_ns = since_start_ns();
    ++connections;
    accepted.socket.set_option(tcp::no_delay{true}, ignored);
    bool closed_at_start = false;
    if (!control_only) {
        const auto verdict = context.engine.on_connection({accepted.id, std::chrono::nanoseconds{accepted_ns}}).verdict;
        if (verdict == faults::connection_verdict::reset) {
            ++refused;
            accepted.socket.set_option(asio::socket_base::linger{true, 0}, ignored);
            accepted.socket.close(ignored);
            return nullptr;
        }
        if (verdict == faults::connection_verdict::close) {
            ++refused;
            closed_at_start = true;
        }
    }
    // Connections keep the core alive through this shared_ptr; the server object owns the other one.
    return std::make_shared<http_connection>(shared_from_this(), std::move(accepted.socket), accepted.id,
                                             accepted.worker, accepted_ns, control_only, closed_at_start);
}

// Closed at once by the listener, before it costs a connection: the client sees EOF or a reset.
// Every refusal is counted; the journal gets a rate-limited event.
void http_core::refuse(const listener_socket& socket, std::size_t cap, bool control_only) {
    ++over_limit;
    journal_limit_event(server_event_kind::connection_refused, peer_of(socket),
                        std::string{control_only ? "control" : "service"} + " connections at the cap of " +
                            std::to_string(cap));
}

void http_core::journal_limit_event(server_event_kind kind, std::string peer, std::string detail) {
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

}  // namespace faultline::harness::server_detail
