// `faultline proxy --mode tcp`: a TCP proxy for any protocol (Redis, Postgres, HTTP as bytes), with
// Toxiproxy-style toxics on each connection's byte pipe, decided per connection from the seed
// (toxics_config.hpp) and journaled per connection (connection_journal.hpp).
//
// Each accepted connection is one `session` owning both sockets and, per direction, up to four
// chunk buffers of read_buffer_size bytes (allocated as needed). A direction reads a chunk, lets its
// active toxics amend the chunk's plan (toxic.hpp), and queues it; its writer writes the queued
// chunks in order, piece by piece, waiting as planned. While the writer waits on a toxic, the reader
// runs up to four chunks ahead and then pauses; otherwise it reads when the writer is done. So memory
// per connection is bounded (512 KiB at most), a slow peer slows its sender (TCP back-pressure), and
// under latency L a direction still moves up to 4 x 64 KiB per L (Toxiproxy's queue is deeper: its
// latency costs no throughput).
//
// The toxics can be replaced while the proxy runs (replace_toxics: the control API of a proxy set).
// A connection takes the list as it is at its accept and keeps it to its end: a new list acts on
// the connections accepted after the replacement, and open ones go on as they were accepted (a
// removed latency keeps delaying a connection that had it; a removed reset_peer still ends one).
//
// Threads: one worker thread runs the proxy's io_context, so sessions need no locks. The record sink
// is called on that thread. replace_toxics() and toxics() may be called from any thread.
#pragma once

#include "faultline/core/clock.hpp"
#include "faultline/tcp/connection_journal.hpp"
#include "faultline/tcp/toxics_config.hpp"

#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace faultline::tcp {

struct tcp_proxy_options {
    std::string address = "127.0.0.1";  // where the proxy listens
    std::uint16_t port = 0;             // 0: ephemeral (tcp_proxy::port())
    bool allow_non_loopback = false;    // listening elsewhere than loopback must be asked for
    std::string upstream_address = "127.0.0.1";  // an IP address
    std::uint16_t upstream_port = 0;
    std::chrono::milliseconds connect_timeout{2000};  // each upstream connect, else upstream_unreachable
    // The longest a `timeout` toxic with timeout = 0 holds a connection before closing it.
    std::chrono::nanoseconds max_hold = std::chrono::minutes{10};
    // Open connections at most; one more is reset on accept (journaled over_capacity), so toxics
    // that hold connections cannot exhaust the process's descriptors.
    std::size_t max_connections = 10'000;
    std::uint64_t seed = 0;
    std::string instance;  // written into every record ("" = none)
};

struct tcp_proxy_counters {
    std::uint64_t connections = 0;        // accepted
    std::uint64_t toxic_connections = 0;  // with at least one toxic acting
    std::uint64_t upstream_failures = 0;  // upstream_refused + upstream_unreachable
    std::uint64_t bytes_up = 0;
    std::uint64_t bytes_down = 0;
};

// Receives each connection's record when it ends (on the proxy's thread).
using record_sink = std::function<void(const connection_record&)>;

// The running proxy. The clock must outlive it. start() once; stop() is idempotent and also run by the
// destructor.
class tcp_proxy {
public:
    // Chunks are read into a buffer of this size, one per direction and connection.
    static constexpr std::size_t read_buffer_size = 64 * 1024;

    tcp_proxy(std::shared_ptr<const toxic_set> toxics, tcp_proxy_options options, record_sink sink = {},
              faultline::clock& time = steady_clock_source::instance());
    ~tcp_proxy();
    tcp_proxy(const tcp_proxy&) = delete;
    tcp_proxy& operator=(const tcp_proxy&) = delete;

    // Binds and starts the worker. Errors: a bad address, a non-loopback one not allowed
    // (access_denied), bind/listen.
    boost::system::error_code start();
    // Stops accepting, ends every open connection (journaled `stopped`), joins the worker.
    void stop();

    // The toxics connections accepted from now on get (see above). Not null.
    void replace_toxics(std::shared_ptr<const toxic_set> toxics);
    std::shared_ptr<const toxic_set> toxics() const;

    std::uint16_t port() const;
    // Open connections at most (options.max_connections).
    std::size_t max_connections() const;
    tcp_proxy_counters counters() const;
    // Monotonic time the journal's times count from (construction).
    faultline::time_point run_start() const;

    struct core;

private:
    std::shared_ptr<core> core_;
};

}  // namespace faultline::tcp
