// Private to the server: what an HTTP server (`serve`'s server.hpp or the proxy, proxy.hpp) shares
// with its connections (http_connection.hpp): the server context, the clock, the backend, the
// listener with its ports, the control API when there is one, and the counters. Connections hold it
// through a shared_ptr, so it outlives the last handler.
#pragma once

#include "backend.hpp"
#include "lateness_watch.hpp"
#include "limit_event_gate.hpp"

#include "faultline/core/clock.hpp"
#include "faultline/server/control_api.hpp"
#include "faultline/server/listener.hpp"
#include "faultline/server/server_context.hpp"
#include "faultline/tls/contexts.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace faultline::server::detail {

// Limit events of one kind journaled per second at most (limit_event_gate.hpp).
inline constexpr std::uint32_t limit_events_per_second = 100;
// Control connections open at once, apart from max_connections, so a full service side never locks
// the control API out.
inline constexpr std::size_t max_control_connections = 64;
// Descriptors kept back from the service port's cap: listeners, the journal file, control
// connections, stdio.
inline constexpr std::size_t descriptor_reserve = max_control_connections + 64;

// A listener's TLS contexts: the one it serves, and those the `tls` fault kind presents instead
// (null where there is no such certificate: a plain listener, or the user's own certificate, whose
// authority cannot issue the bad ones).
struct listener_tls {
    tls::context_ptr served;
    tls::context_ptr expired;
    tls::context_ptr wrong_name;
    tls::context_ptr untrusted_issuer;
};
listener_tls make_listener_tls(const std::optional<tls::key_and_certificate>& served,
                               const std::optional<tls::bad_certificates>& bad);

// What the `tls` fault kind does to one accepted connection (verdict accept: nothing): the rule, and
// the context its handshake runs with (a bad certificate's, or the served one).
struct tls_fault {
    faults::connection_verdict verdict = faults::connection_verdict::accept;
    std::string rule;
    boost::asio::ssl::context* context = nullptr;
};
bool is_tls_fault(faults::connection_verdict verdict);

// How one HTTP server runs, whatever its backend.
struct http_settings {
    std::size_t threads = 1;
    std::chrono::milliseconds drain_timeout{1000};
    std::size_t body_limit = 1024 * 1024;  // request bodies; larger get 413 and close
    std::string instance;                  // written into every record ("" = none)
    listener_tls tls;                      // every port speaks TLS with tls.served (null: plain TCP)
    bool watch_lateness = false;           // journal the workers' late spells (server_options)
};

// Thread-safe: the counters are atomics, the rest is set before start() and read after.
class http_core : public std::enable_shared_from_this<http_core> {
public:
    http_core(server_context& ctx, faultline::clock& clk, http_settings settings, std::unique_ptr<backend> be);

    std::int64_t since_start_ns() const { return (time.now() - run_start).count(); }
    server_counters read_counters() const;

    // Opens the service port (connections get the backend; max_connections from the context's
    // limits, at `descriptors_per_connection`, with `reserve` kept back) and, with a token, the
    // control port (loopback unless `options.address` says otherwise: then any Host, with the
    // token), served by the context's control_api. Before the listener starts.
    boost::system::error_code open_service_port(port_options options);
    boost::system::error_code open_control_port(port_options options, std::string token);
    // The control port served by `handler` instead (a proxy set's API over its proxies'); the
    // handler checks access itself.
    boost::system::error_code open_control_port(port_options options, control_handler handler);

    // Starts the listener, then follows the engine's listener-level rules on the service port. Once.
    void start();
    // Stops following the rules, then stops the listener (listener::stop: false when called on a
    // worker, which only begins the stop).
    bool stop();

    // Journals a limit event unless the gate holds it back (then it is only counted). `rule`: the
    // rule it concerns, if any.
    void journal_limit_event(record::server_event_kind kind, std::string peer, std::string detail, std::string rule = {});

    server_context& context;
    faultline::clock& time;
    const faultline::time_point run_start;
    const http_settings settings;
    // Each worker's connections, the upstream pool included, live on its io_context: the backend is
    // destroyed first, while the contexts its sockets name still exist.
    listener listen;
    // Null for a server with only a control port (a proxy set's): no connection asks it for a channel.
    const std::unique_ptr<backend> behind;
    control_handler control;  // with a control port
    std::string control_token;
    limit_event_gate limit_events{limit_events_per_second};
    std::size_t service_port = 0;                // the listener's index of each port
    std::optional<std::size_t> control_port;

    std::atomic<std::uint64_t> connections{0};
    std::atomic<std::uint64_t> refused{0};
    std::atomic<std::uint64_t> attempts{0};
    std::atomic<std::uint64_t> control_requests{0};
    std::atomic<std::uint64_t> bad_requests{0};
    std::atomic<std::uint64_t> over_limit{0};
    std::atomic<std::uint64_t> header_timeouts{0};
    std::atomic<std::uint64_t> idle_timeouts{0};
    std::atomic<std::uint64_t> write_timeouts{0};
    std::atomic<std::uint64_t> idle_evicted{0};
    std::atomic<std::uint64_t> tls_handshake_failures{0};
    std::atomic<std::uint64_t> events_not_journaled{0};

private:
    std::shared_ptr<listened_connection> accept(accepted_connection accepted, bool control_only);
    // The `tls` rule that fired for a new connection, as the connection carries it out; a rule that
    // cannot act here is journaled (fault_not_mapped) and comes back as no fault.
    tls_fault tls_fault_for(faults::connection_decision decision, const listener_socket& socket);
    void refuse(const listener_socket& socket, std::size_t cap, bool control_only);
    // On worker 0, the ports' accepting thread (or in start(), before the listener runs): asks the
    // engine what the service port is to do now (fault_engine::on_listener), switches it when that
    // changed, and asks again at the next window's start or end. Rule changes ask again at once
    // (fault_engine::watch_rules).
    void follow_listener_rules();
    void post_follow_listener_rules();
    // Journals each spell in which a worker ran late as a server_late event.
    void start_watching_lateness();
    // Switches the service port as `decision` says, journals the switch (listener_closed /
    // listener_reopened), and counts the window as its rule's firing.
    void switch_service_port(const faults::listener_decision& decision);

    // The engine's listener verdict the service port carries out (worker 0 only): the rule and how.
    std::string listener_rule_;
    std::optional<faults::listener_verdict> listener_verdict_;
    // Declared after `listen`, so destroyed before the io_context it waits on.
    std::optional<listener_timer> listener_schedule_;
    // Cleared by stop() before the listener stops, so no follow-up arms the schedule again.
    std::atomic<bool> following_rules_{false};
    // Journals the spells in which the workers ran late (server_late); set up by start().
    std::optional<lateness_watch> lateness_;
};

// "address:port" of a connected socket's peer ("" when unknown).
std::string peer_of(const listener_socket& socket);

}  // namespace faultline::server::detail
