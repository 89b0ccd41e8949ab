// The one listener every faultline server runs on: `serve` (its service port and its control port),
// `proxy`, and `proxy --mode tcp`. It owns the worker threads (one io_context each, so a connection's
// handlers never hop threads and need no strand), the listening sockets (loopback only unless asked;
// accept errors back off instead of spinning), each port's connection cap (lowered to what the
// descriptor limit holds, at the port's descriptors per connection), the registry of open
// connections, and the stop: stop accepting, let connections finish within the drain time, close the
// rest, join the workers. What a connection *is* stays with the server that accepts it: the listener
// sees it only as a `listened_connection`. A server may also switch a port out of listening for a
// while (`switch_port`: a closed port, or SYNs left unanswered) — a listener-level fault's window.
#pragma once

#include <boost/asio/basic_socket_acceptor.hpp>
#include <boost/asio/basic_stream_socket.hpp>
#include <boost/asio/basic_waitable_timer.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/system/error_code.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace faultline::server {

using listener_executor = boost::asio::io_context::executor_type;
// The I/O objects name the concrete executor type, which spares the hot path any_io_executor's type
// erasure.
using listener_socket = boost::asio::basic_stream_socket<boost::asio::ip::tcp, listener_executor>;
using listener_timer = boost::asio::basic_waitable_timer<std::chrono::steady_clock,
                                                         boost::asio::wait_traits<std::chrono::steady_clock>,
                                                         listener_executor>;

// Parses `text` into `address`. A fault injector must not be reachable from the network by accident,
// so an address that is not loopback is `access_denied` unless `allow_non_loopback` (a sidecar's pod
// IP, 0.0.0.0) was asked for.
boost::system::error_code parse_listen_address(const std::string& text, bool allow_non_loopback,
                                               boost::asio::ip::address& address);

// Raises the soft descriptor limit (RLIMIT_NOFILE) to the hard one and returns how many connections
// of `descriptors_each` descriptors fit under it with `reserve` kept back: at most `wanted`, at least 1.
std::size_t connections_within_descriptor_limit(std::size_t wanted, std::size_t descriptors_each,
                                                std::size_t reserve);

// Whether `text` is a loopback IP address (127.0.0.0/8, ::1).
bool is_loopback_address(const std::string& text);
// The host part of a URL that reaches a port listening on `address`: a wildcard address (0.0.0.0,
// ::) is reached on this machine through loopback; an IPv6 address goes in brackets.
std::string url_host(const std::string& address);

// "address:port" ("[address]:port" for IPv6), as journals name peers.
std::string endpoint_text(const boost::asio::ip::tcp::endpoint& endpoint);

// What a listening port does (listener::switch_port). Both states other than `open` rely on Linux's
// TCP: it is what faultline runs on, and a switch elsewhere fails and leaves the port open.
enum class port_state {
    open,  // listening and accepting
    // Bound but not listening (its socket shut down, which ends listening and keeps the bound port):
    // the kernel answers every SYN with a reset, so connects fail with ECONNREFUSED. SO_REUSEADDR is
    // off meanwhile, so no other socket can listen on the port.
    refusing,
    // Listening with a backlog of 0, its accept queue held full by the listener's own filler
    // connection, and not accepting: the kernel drops every SYN while the queue is full, so connects
    // neither complete nor fail (a client's kernel resends its SYN: on Linux every second four times,
    // then doubling, since 6.5; 1 s, 3 s, 7 s … after the first before).
    unanswered,
};

// What a switch did.
struct port_switch {
    // The switch failed: the port is open again (listening and accepting).
    boost::system::error_code error;
    // Connections already in the listen queue when the port left `open`: accepted and served as
    // usual (they connected before the switch).
    std::size_t accepted_from_queue = 0;
    // Leaving `unanswered`: connections that completed their handshake in the held listen queue
    // during the window — they raced the filler for it, or completed when it was — reset (RST)
    // unread, so a request the client sent and gave up on is never executed late: their peers.
    std::vector<std::string> reset_unread;
};

// An open connection as the listener keeps it. Called from any thread; each call is carried out on
// the connection's own thread.
class listened_connection {
public:
    virtual ~listened_connection() = default;
    // Registered: begin (read, or whatever the connection does first).
    virtual void start() = 0;
    // The listener is stopping: idle connections close now, the rest finish what is in progress.
    virtual void on_listener_stop() = 0;
    // The drain time is over: close now.
    virtual void force_close() = 0;
    // Kept alive and waiting for its next request since this time (ns, the server's clock), or
    // nullopt (the default: never idle in that sense).
    virtual std::optional<std::int64_t> idle_since() const { return std::nullopt; }
    // Claims the connection to be closed to make room at the cap if it is still idle since `since`;
    // false when it left that idle spell.
    virtual bool evict_if_idle_since(std::int64_t /*since*/, std::size_t /*cap*/) { return false; }
};

struct port_options {
    std::string address = "127.0.0.1";
    std::uint16_t port = 0;  // 0: ephemeral
    bool allow_non_loopback = false;
    // Open connections at most. With `descriptors_per_connection` the cap is lowered at bind to
    // what the descriptor limit holds with `descriptor_reserve` kept back (the journal, stdio, other
    // ports, an upstream pool), so a connection past it is refused by the listener — and journaled
    // by its server — before accept() could fail for want of descriptors.
    std::size_t max_connections = 4096;
    std::size_t descriptors_per_connection = 1;  // 0: do not fit the cap (a port whose room is reserved elsewhere)
    std::size_t descriptor_reserve = 128;
    // At the cap, close the longest-idle kept-alive connection to make room (nginx does the same)
    // instead of refusing the new one.
    bool make_room = false;
};

// A connection the listener accepted within its port's cap, on worker `worker`'s io_context.
struct accepted_connection {
    listener_socket socket;
    std::uint64_t id;  // 1-based, unique over the listener's ports (refused connections take one too)
    std::size_t worker;
};

// Owns the workers, the ports and the registry. start() and stop() from any thread; see stop() for
// the one it cannot complete. The handlers a port is given run on the accepting thread.
class listener {
public:
    // Makes the connection for an accepted socket; the listener registers it, then starts it. Null
    // when the handler refused it (closed it: a connection fault).
    using accept_handler = std::function<std::shared_ptr<listened_connection>(accepted_connection)>;
    // A connection past the cap (`cap`), numbered `id` as an accepted one would be: journal it. The
    // socket is closed after, unless taken.
    using refusal_handler = std::function<void(listener_socket& socket, std::uint64_t id, std::size_t cap)>;

    listener(std::size_t threads, std::chrono::milliseconds drain_timeout);
    ~listener();
    listener(const listener&) = delete;
    listener& operator=(const listener&) = delete;

    // Binds and listens on a port (accepting starts with start()); `index` names it from then on.
    // Errors: a bad or non-loopback address (not allowed), bind/listen. Before start() only.
    boost::system::error_code add_port(const port_options& options, accept_handler on_accept,
                                       refusal_handler on_refusal, std::size_t& index);

    // Starts the workers and accepting on every port. Once.
    void start();
    // Stops accepting, tells every connection (on_listener_stop), waits for them to finish within
    // the drain time, force-closes what is left and joins the workers: true. Called on one of the
    // workers it cannot join its own thread: it only begins the stop and returns false; a later call
    // from another thread (the owner's destructor) completes it. Idempotent.
    bool stop();
    // stop() has begun.
    bool stopping() const;

    // A connection of port `index` is gone (its destructor): its room is free again.
    void remove(std::size_t index, std::uint64_t id);

    // Switches port `index` to `to` (port_state) and says what that did. Call it before start() (a
    // port that must not accept from the first moment), or after it on the ports' accepting thread,
    // worker 0 (post it to `context(0)`); not once stop() has begun. A port leaving `open` first
    // accepts what its listen queue holds, as usual; one leaving `unanswered` resets unread what
    // completed its handshake in the held queue.
    port_switch switch_port(std::size_t index, port_state to);
    port_state state_of(std::size_t index) const;  // on worker 0, as switch_port

    std::uint16_t port(std::size_t index) const;
    std::size_t max_connections(std::size_t index) const;
    std::size_t open_connections(std::size_t index) const;
    std::size_t workers() const;
    boost::asio::io_context& context(std::size_t worker);

    struct state;

private:
    std::unique_ptr<state> state_;
};

}  // namespace faultline::server
