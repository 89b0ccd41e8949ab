#include "http_core.hpp"

#include "http_connection.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/socket_base.hpp>

#include <utility>

namespace faultline::server::detail {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

std::string peer_of(const listener_socket& socket) {
    error_code ec;
    const tcp::endpoint peer = socket.remote_endpoint(ec);
    if (ec) return {};
    return endpoint_text(peer);
}

namespace {

port_state port_state_of(std::optional<faults::listener_verdict> verdict) {
    if (!verdict) return port_state::open;
    return *verdict == faults::listener_verdict::closed_port ? port_state::refusing : port_state::unanswered;
}

// "; 2 connections that completed the handshake in the held listen queue during the window were reset
// unread: 127.0.0.1:40112, 127.0.0.1:40114" ("" when none).
std::string reset_note(const std::vector<std::string>& peers) {
    if (peers.empty()) return {};
    std::string out = "; " + std::to_string(peers.size()) +
                      (peers.size() == 1 ? " connection that" : " connections that") +
                      " completed the handshake in the held listen queue during the window " +
                      (peers.size() == 1 ? "was" : "were") + " reset unread:";
    for (std::size_t i = 0; i < peers.size(); ++i) out += (i == 0 ? " " : ", ") + peers[i];
    return out;
}

}  // namespace

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
            idle_evicted.load(),    events_not_journaled.load(),
            tls_handshake_failures.load()};
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
    // Shared by the handler's copies; it refers to this core, which outlives its connections.
    auto api = std::make_shared<const control_api>(
        context, control_api::options{{control_token, !is_loopback_address(options.address)},
                                      [this] { return read_counters(); },
                                      [this] { return since_start_ns(); }});
    return open_control_port(std::move(options),
                             [api](const control_request& req, std::string_view peer) { return api->handle(req, peer); });
}

error_code http_core::open_control_port(port_options options, control_handler handler) {
    control = std::move(handler);
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

void http_core::start() {
    listener_schedule_.emplace(listen.context(0).get_executor());
    following_rules_ = true;
    // Before the listener starts: a window from the start holds before the first connection is accepted.
    follow_listener_rules();
    // Weak: the engine (in the context) may outlive this server, and a pending wait must not keep
    // the core, and with it the io_contexts, alive.
    context.engine.watch_rules([weak = weak_from_this()] {
        if (const auto self = weak.lock()) self->post_follow_listener_rules();
    });
    if (settings.watch_lateness) start_watching_lateness();
    listen.start();
}

void http_core::start_watching_lateness() {
    lateness_.emplace([weak = weak_from_this()](lateness_watch::steady::time_point from, std::chrono::nanoseconds length) {
        const auto self = weak.lock();
        if (!self) return;
        const auto ago = std::chrono::duration_cast<std::chrono::nanoseconds>(lateness_watch::steady::now() - from);
        record::server_event event;
        event.kind = record::server_event_kind::server_late;
        event.at_ns = self->since_start_ns() - ago.count();
        event.late_ns = length.count();
        event.detail = "the server ran late for " + std::to_string(length.count() / 1'000'000) + " ms (its workers' " +
                       std::to_string(lateness_watch::period.count()) + " ms timer fired " +
                       std::to_string(lateness_watch::threshold.count()) +
                       " ms or more after due): its stamps then may be that late";
        self->context.records.append_event(std::move(event));
    });
    lateness_->start(listen);
}

void http_core::post_follow_listener_rules() {
    asio::post(listen.context(0), [weak = weak_from_this()] {
        if (const auto self = weak.lock()) self->follow_listener_rules();
    });
}

bool http_core::stop() {
    following_rules_ = false;
    context.engine.watch_rules({});
    if (lateness_) lateness_->stop();
    // The schedule's wait would keep worker 0 from returning until the next window boundary.
    asio::post(listen.context(0), [weak = weak_from_this()] {
        if (const auto self = weak.lock(); self && self->listener_schedule_) self->listener_schedule_->cancel();
    });
    return listen.stop();
}

void http_core::follow_listener_rules() {
    if (!following_rules_) return;
    const std::chrono::nanoseconds now{since_start_ns()};
    const faults::listener_decision decision = context.engine.on_listener(now);
    if (decision.verdict != listener_verdict_ || decision.rule != listener_rule_) switch_service_port(decision);
    if (!decision.next_change) {
        listener_schedule_->cancel();
        return;
    }
    listener_schedule_->expires_after(*decision.next_change - now);
    listener_schedule_->async_wait([weak = weak_from_this()](error_code ec) {
        if (ec) return;  // re-armed or cancelled: a newer follow-up is in charge
        if (const auto self = weak.lock()) self->follow_listener_rules();
    });
}

void http_core::switch_service_port(const faults::listener_decision& decision) {
    const port_switch done = listen.switch_port(service_port, port_state_of(decision.verdict));
    record::server_event event;
    event.at_ns = since_start_ns();
    const std::string reset = reset_note(done.reset_unread);
    if (decision.verdict && !done.error) {
        event.kind = record::server_event_kind::listener_closed;
        event.rule = decision.rule;
        event.detail = (*decision.verdict == faults::listener_verdict::closed_port
                            ? "closed_port: the port is bound and not listening: connects are refused (ECONNREFUSED)"
                            : "unanswered_syn: the listen queue is held full and not accepted: SYNs go unanswered") +
                       reset;
        context.engine.listener_window_began(decision.rule);
        listener_verdict_ = decision.verdict;
        listener_rule_ = decision.rule;
    } else {
        // The window is over (or the rule gone), or it could not begin: the port listens (switch_port
        // reopens it when a switch fails), and the journal says which.
        event.kind = record::server_event_kind::listener_reopened;
        if (decision.verdict) {
            event.rule = decision.rule;
            event.detail = std::string{faults::listener_verdict_names(*decision.verdict)} + " not carried out (" +
                           done.error.message() + "): the port kept listening";
        } else {
            event.rule = listener_rule_;
            event.detail = std::string{faults::listener_verdict_names(*listener_verdict_)} + " over: " +
                           (done.error ? "listening again failed (" + done.error.message() + ")"
                                       : std::string{"listening and accepting again"});
        }
        event.detail += reset;
        listener_verdict_.reset();
        listener_rule_.clear();
    }
    context.records.append_event(std::move(event));
}

listener_tls make_listener_tls(const std::optional<tls::key_and_certificate>& served,
                               const std::optional<tls::bad_certificates>& bad) {
    listener_tls out;
    if (!served) return out;
    out.served = tls::server_context(*served);
    if (bad) {
        out.expired = tls::server_context(bad->expired);
        out.wrong_name = tls::server_context(bad->wrong_name);
        out.untrusted_issuer = tls::server_context(bad->untrusted_issuer);
    }
    return out;
}

bool is_tls_fault(faults::connection_verdict verdict) {
    using v = faults::connection_verdict;
    return verdict == v::tls_abort_handshake || verdict == v::tls_stall_handshake ||
           verdict == v::tls_expired_certificate || verdict == v::tls_wrong_name || verdict == v::tls_untrusted_issuer;
}

tls_fault http_core::tls_fault_for(faults::connection_decision decision, const listener_socket& socket) {
    using v = faults::connection_verdict;
    tls_fault fault{decision.verdict, std::move(decision.rule), settings.tls.served.get()};
    const auto not_applied = [&](std::string why) {
        record::server_event event;
        event.kind = record::server_event_kind::fault_not_mapped;
        event.at_ns = since_start_ns();
        event.rule = fault.rule;
        event.detail = std::move(why);
        event.peer = peer_of(socket);
        context.records.append_event(std::move(event));
        return tls_fault{};
    };
    if (fault.context == nullptr) return not_applied("a tls fault on a plain TCP listener: served as usual");
    if (decision.verdict == v::tls_expired_certificate) fault.context = settings.tls.expired.get();
    if (decision.verdict == v::tls_wrong_name) fault.context = settings.tls.wrong_name.get();
    if (decision.verdict == v::tls_untrusted_issuer) fault.context = settings.tls.untrusted_issuer.get();
    if (fault.context == nullptr) {
        return not_applied("a certificate fault on a listener serving the user's own certificate (no authority to "
                           "issue a bad one): served the real certificate");
    }
    return fault;
}

std::shared_ptr<listened_connection> http_core::accept(accepted_connection accepted, bool control_only) {
    error_code ignored;
    const std::int64_t accepted_ns = since_start_ns();
    ++connections;
    accepted.socket.set_option(tcp::no_delay{true}, ignored);
    bool closed_at_start = false;
    tls_fault fault;
    if (!control_only) {
        faults::connection_decision decision =
            context.engine.on_connection({accepted.id, std::chrono::nanoseconds{accepted_ns}});
        const auto verdict = decision.verdict;
        if (is_tls_fault(verdict)) fault = tls_fault_for(std::move(decision), accepted.socket);
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
                                             accepted.worker, accepted_ns, control_only, closed_at_start,
                                             std::move(fault));
}

// Closed at once by the listener, before it costs a connection: the client sees EOF or a reset.
// Every refusal is counted; the journal gets a rate-limited event.
void http_core::refuse(const listener_socket& socket, std::size_t cap, bool control_only) {
    ++over_limit;
    journal_limit_event(record::server_event_kind::connection_refused, peer_of(socket),
                        std::string{control_only ? "control" : "service"} + " connections at the cap of " +
                            std::to_string(cap));
}

void http_core::journal_limit_event(record::server_event_kind kind, std::string peer, std::string detail, std::string rule) {
    const std::int64_t now = since_start_ns();
    const auto skipped = limit_events.admit(kind, now);
    if (!skipped) {
        ++events_not_journaled;
        return;
    }
    if (*skipped > 0) detail += " (and " + std::to_string(*skipped) + " more not journaled)";
    record::server_event event;
    event.kind = kind;
    event.at_ns = now;
    event.detail = std::move(detail);
    event.peer = std::move(peer);
    event.rule = std::move(rule);
    context.records.append_event(std::move(event));
}

}  // namespace faultline::server::detail
