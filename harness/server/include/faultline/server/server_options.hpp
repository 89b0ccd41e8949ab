// How the fault-injecting server listens and runs (server.hpp): address, ports, the control token,
// worker threads, body limit, drain time; and the limits it enforces on clients (`server_limits`,
// read from a [server] table by model_config.hpp). Plain values, kept apart from server.hpp so that
// configuration parsers (serve_config.hpp) can fill them without depending on the server itself.
#pragma once

#include "faultline/tls/certificates.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace faultline::server {

// What the server enforces on the connections of its clients. Defaults are documented in
// docs/control-api.md ("Limits") and docs/scenarios.md ([server]).
struct server_limits {
    // From a connection's accept, or a request's first byte, until that request (head and body) is
    // read; then the connection is closed and a header_timeout server event journaled (slowloris).
    std::chrono::nanoseconds header_timeout = std::chrono::seconds{10};
    // A kept-alive connection waiting for its next request is closed after this (idle_timeout event).
    std::chrono::nanoseconds idle_timeout = std::chrono::seconds{60};
    // A response write the client does not take (stopped reading, window shut) for this long resets
    // the connection (write_timeout event), so a client cannot pin a connection and its buffers.
    std::chrono::nanoseconds write_timeout = std::chrono::seconds{30};
    // Service connections open at once. At the cap a new connection takes the place of the
    // longest-idle kept-alive one (idle_evicted event), as nginx reuses keep-alive connections; with
    // none idle it is closed at accept (connection_refused event). The server lowers the cap to what
    // the descriptor limit allows (server::max_connections()).
    std::size_t max_connections = 4096;
    // The longest wait a fault may impose (a delay, a hang, an overload queue): longer is a config
    // error at load, a 400 from the control API, and is clamped to this at run time.
    std::chrono::nanoseconds max_fault_wait = std::chrono::hours{1};
    // An HTTP/2 connection's SETTINGS_MAX_CONCURRENT_STREAMS: a client with more requests at once must
    // queue them or open another connection (a stream past it is refused with REFUSED_STREAM).
    std::uint32_t max_concurrent_streams = 100;
};

struct server_options {
    std::string address = "127.0.0.1";
    std::uint16_t port = 0;  // 0: an ephemeral port, read back with server::port()
    // A second listener, the only one that serves the control API (nullopt: none; 0: ephemeral).
    std::optional<std::uint16_t> control_port;
    // Where it listens: loopback unless asked (and then, with allow_non_loopback, a token is required
    // and Host is not checked: control_api.hpp).
    std::string control_address = "127.0.0.1";
    // The token the control listener requires: nullopt (default) = a fresh random one at start(),
    // read back with server::control_token(); "" = none (`faultline serve --no-control-token`).
    std::optional<std::string> control_token;
    std::size_t threads = 1;               // io_context worker threads
    std::size_t body_limit = 1024 * 1024;  // larger request bodies get 413 and close
    // stop(): how long in-progress attempts may take to finish before their connections are closed.
    std::chrono::milliseconds drain_timeout{1000};
    // Binding to an address other than loopback must be asked for (all traffic stays local).
    bool allow_non_loopback = false;
    // Every port (service and control) speaks TLS with this key and certificate: the user's, or one
    // issued by the run's own authority (tls/certificates.hpp). A key that does not match its
    // certificate makes the server's constructor throw std::runtime_error.
    std::optional<tls::key_and_certificate> tls;
    // What the `tls` fault kind presents instead of `tls` (expired, another name, an untrusted
    // issuer): issued with the run's own authority (tls::run_certificates::bad()). Absent with the
    // user's own certificate: a certificate fault then serves the real one and journals why.
    std::optional<tls::bad_certificates> tls_faults;
    // Journal the spells in which the server itself ran late (server_late: a worker's 20 ms timer
    // fired 10 ms or more after due), which the timing checks leave out. On in faultline run, score,
    // serve and proxy; off by default, so an embedding's event list holds only what it did.
    bool watch_lateness = false;
};

}  // namespace faultline::server
