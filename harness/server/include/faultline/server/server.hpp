// The fault-injecting HTTP/1.1 server: Boost.Asio + Beast on 127.0.0.1, carrying out what the fault
// engine decides for each connection and each attempt, in front of the service model. Per connection
// the engine may refuse (RST on accept) or close it; per attempt the request is read in full, given
// its operation identity and attempt number, and the engine's plan is executed on the socket:
// respond (instead of, or after, the service's commit), delay, drop (reset / close / hang),
// slow body, truncated body, or malformed bytes. The service commits exactly when the plan's
// commit phase says (phase `after`: commit, then damage or drop the reply — the lost response);
// delay, slow_body and truncate deliver the service's own reply, so they run it in either phase.
// The engine's decision is kept until the attempt ends (it holds the active-fault and overload
// slots), and every attempt ends in exactly one journal record, even one cut short by stop().
// The control API (control_api.hpp) is served only on the separate control listener
// (server_options::control_port), behind a token; on the service port `/__faultline/…` is an ordinary
// request to the service model (journaled, faultable), so the client under test cannot reset the
// journal or switch faults off.
//
// Limits (server_limits, from the context): a request not read within header_timeout or a
// kept-alive connection idle for idle_timeout is closed; past max_connections open service
// connections a new one is closed at accept. Each is counted and journaled as a server event
// (rate-limited). A fault's own waits (delay, hang) are not read waits and never time out.
//
// Threads: each worker runs its own io_context; connections are spread over them round-robin and
// never change thread, so a connection needs no strand. Malformed HTTP from a client gets 400 (413
// for a body over the limit, 431 for oversized headers, 501 for a transfer coding other than
// chunked) and a close; it is not an attempt.
//
// The server owns only its sockets and threads; what it works on is a `server_context`
// (server_context.hpp), which owns the engine, service, ledger, idempotency layer, attempt counter
// and journal, so the caller can inspect them while and after the server runs. How it listens is a
// `server_options` (server_options.hpp).
#pragma once

#include "faultline/core/clock.hpp"
#include "faultline/server/server_context.hpp"
#include "faultline/server/server_options.hpp"

#include <boost/system/error_code.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace faultline::server {

// The running server. Owns its acceptor(s), connections and worker threads; the context and the
// clock must outlive it. `start` and `stop` may be called from any thread; stop() is idempotent and
// is also run by the destructor. Called from one of the server's own worker threads, stop() only
// begins the shutdown (it cannot join its own thread); the destructor completes it.
class server {
public:
    server(server_context& context, server_options options = {},
           faultline::clock& time = steady_clock_source::instance());
    ~server();

    server(const server&) = delete;
    server& operator=(const server&) = delete;

    // Binds, listens and starts the worker threads. Errors: the address is not loopback (and
    // non-loopback was not allowed), or bind/listen failed. Call once.
    boost::system::error_code start();
    // After a start() that failed: the listener it could not open, as "service 127.0.0.1:8080" or
    // "control API 127.0.0.1:8081", so the message names the port that is busy. "" otherwise.
    const std::string& unopened_listener() const;

    // Stops accepting, lets attempts in progress finish within `drain_timeout` (hangs end at once,
    // idle keep-alive connections are closed), closes what is left, joins the workers and flushes
    // the journal.
    void stop();

    std::uint16_t port() const;                         // valid after a successful start()
    std::optional<std::uint16_t> control_port() const;  // the separate control port, if any
    std::string url() const;                            // "http://127.0.0.1:PORT" ("https://" with TLS)
    std::string control_url() const;                    // "http://127.0.0.1:CONTROL_PORT/__faultline/", "" if none
    const std::string& control_token() const;           // what the control listener requires ("" = nothing)
    // limits.max_connections, lowered at start() to fit the descriptor limit (itself raised to the
    // hard limit) with a reserve kept back for listeners, control connections and the journal.
    std::size_t max_connections() const;
    server_counters counters() const;

    // Monotonic time the server counts journal times from (its construction).
    faultline::time_point run_start() const;

    struct core;  // shared with connections; defined in server.cpp

private:
    std::string scheme() const;  // "http://" or "https://"

    std::shared_ptr<core> core_;
};

}  // namespace faultline::server
