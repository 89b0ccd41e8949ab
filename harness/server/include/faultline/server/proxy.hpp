// `faultline proxy`: the fault-injecting HTTP/1.1 reverse proxy in front of a real service. It is
// the server's one HTTP connection (reading, framing, timeouts, the attempt record, barrier holds,
// fault actions, replies) on the one listener, with the upstream as its backend instead of the
// service model: it works on the same `server_context` (fault engine, journal, ledger, attempt
// counter, identity), and the commit point is the upstream, so the commit phase means what it means
// for a real service:
//   - phase `before` (respond, drop, malformed): the upstream never sees the request;
//   - phase `after`: the request is forwarded and the upstream's reply is then replaced, lost (reset,
//     close, hang) or garbled: the true "lost response after commit";
//   - delay, slow_body and truncate deliver the upstream's own reply, so they forward in either phase
//     (the request is forwarded before the wait, and the reply held for it).
// The context's service model is not run: its declared routes (`[[server.endpoint]]`, `catch_all`)
// only classify requests, and an attempt on a non-idempotent or idempotent-write route commits
// (journal `effect = committed`, a ledger entry) when the upstream answers it with a 2xx. The
// context's idempotency layer is not used either: the real service owns its keys.
//
// The proxy never sends a request twice: an upstream connection that dies after the request was
// written is the attempt's outcome (502, journaled), whatever the method. Interim replies are
// relayed (103) or dropped (100, answered by the proxy itself), a 101 is a broken reply; the
// upstream may be a host name, resolved at start() (upstream.hpp). The upstream's status, its time
// and any failure are journaled per attempt (upstream_status, upstream_ns, upstream_error). An
// upstream that refuses or fails the connection, or resets or closes it before a complete reply, is
// answered 502; one that does not answer within upstream_timeout, 504.
//
// `[server]` limits hold as for `serve`: header, idle and write timeouts, max_connections (lowered
// to the descriptor limit at two descriptors a connection; over it, refused and journaled).
//
// Threads: as the server, one io_context per worker, connections round-robin and never moving; each
// worker has its own pool of idle upstream connections, so the pool needs no lock.
#pragma once

#include "faultline/core/clock.hpp"
#include "faultline/server/control_api.hpp"
#include "faultline/server/server_context.hpp"
#include "faultline/server/upstream.hpp"
#include "faultline/tls/certificates.hpp"
#include "faultline/tls/contexts.hpp"

#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace faultline::server {

struct proxy_options {
    std::string address = "127.0.0.1";  // where the proxy listens
    std::uint16_t port = 0;             // 0: ephemeral (proxy::port())
    bool allow_non_loopback = false;    // listening elsewhere than loopback must be asked for (a sidecar)
    std::string upstream_address = "127.0.0.1";  // a host name or an IP address, resolved at start()
    std::uint16_t upstream_port = 0;
    std::chrono::milliseconds connect_timeout{2000};   // each upstream connect, else 502 (connect_timeout)
    std::chrono::milliseconds upstream_timeout{30000};  // forwarded -> complete reply, else 504
    std::size_t threads = 1;
    std::size_t body_limit = 1024 * 1024;              // request bodies; larger get 413 and close
    std::size_t upstream_body_limit = 64 * 1024 * 1024;  // reply bodies; larger are a 502
    std::size_t idle_upstream_per_thread = 256;         // kept-alive upstream connections kept per worker
    std::chrono::milliseconds drain_timeout{1000};
    std::string instance;  // written into every journal record ("instance"), "" = none
    // As serve's (server_options): journal the spells in which the server itself ran late (server_late: a worker's 20 ms timer
    // fired 10 ms or more after due), which the timing checks leave out. On in faultline run, score,
    // serve and proxy; off by default, so an embedding's event list holds only what it did.
    bool watch_lateness = false;
    // The control API on a port of its own, as serve's (server_options): nullopt = none, 0 = ephemeral;
    // loopback unless asked; the token nullopt = a fresh random one, "" = none.
    std::optional<std::uint16_t> control_port;
    std::string control_address = "127.0.0.1";
    std::optional<std::string> control_token;
    // Clients reach the proxy (and its control port) over TLS with this key and certificate, as
    // serve's (server_options::tls, and tls_faults for the `tls` fault kind).
    std::optional<tls::key_and_certificate> tls;
    std::optional<tls::bad_certificates> tls_faults;
    // The proxy reaches the upstream over TLS (SNI with upstream_address; verified against the CA
    // file, or the system's trust store, unless `verify` is off). A CA file that cannot be read makes
    // the constructor throw std::runtime_error.
    std::optional<tls::client_options> upstream_tls;
};

struct proxy_counters {
    std::uint64_t connections = 0;        // client connections accepted
    std::uint64_t refused = 0;            // reset or closed by a connection verdict
    std::uint64_t attempts = 0;           // journaled
    std::uint64_t forwarded = 0;          // requests sent to the upstream
    std::uint64_t upstream_connects = 0;  // new upstream connections opened
    std::uint64_t upstream_failures = 0;  // forwards answered 502 / 504
};

// The running proxy. The context and the clock must outlive it. start() once; stop() is idempotent
// and also run by the destructor (not from one of the proxy's own threads).
class proxy {
public:
    proxy(server_context& context, proxy_options options,
          faultline::clock& time = steady_clock_source::instance());
    ~proxy();

    proxy(const proxy&) = delete;
    proxy& operator=(const proxy&) = delete;

    // Resolves the upstream, binds and starts the workers. Errors: the upstream's name does not
    // resolve, a bad or non-loopback address (not allowed), bind/listen.
    boost::system::error_code start();
    // Stops accepting, lets attempts in progress finish within drain_timeout, closes the rest, joins
    // the workers and flushes the journal.
    void stop();

    std::uint16_t port() const;
    std::string url() const;  // "http://ADDRESS:PORT" ("https://" with TLS)
    std::optional<std::uint16_t> control_port() const;  // with a control port
    std::string control_url() const;                    // "http://ADDRESS:PORT/__faultline/", "" if none
    const std::string& control_token() const;           // what the control port requires ("" = nothing)
    // [server] max_connections, lowered at start() to what the descriptor limit holds at two
    // descriptors a connection (the client's and the upstream's), the upstream pool kept apart.
    std::size_t max_connections() const;
    proxy_counters counters() const;
    // Monotonic time the proxy counts journal times from (its construction).
    faultline::time_point run_start() const;
    // Waits (at most `bound`) until each worker has run what it had queued when called: a reply's
    // write that ended journals its attempt in a handler of its own, so a journal read after settle()
    // holds the attempt whose reply the caller has received. For a control port on another thread
    // than the proxy's (proxy_set.hpp); serve's shares its workers' threads. Returns at once when stopping.
    void settle(std::chrono::milliseconds bound = std::chrono::seconds{1}) const;
    // What a control API of the proxy's context needs besides it: the proxy's counters for /stats and
    // its clock for server events; no access rules (for a handler that checks them, proxy_set.hpp).
    control_api::options control_options() const;

    struct core;

private:
    std::string scheme() const;  // "http://" or "https://"

    std::shared_ptr<core> core_;
};

}  // namespace faultline::server
