// Private to the server: the state shared by the server object (server.cpp), its acceptors and its
// connections (session.hpp), and the concrete Asio types they use. Connections hold the core through
// a shared_ptr, so it outlives the last handler.
#pragma once

#include "limit_event_gate.hpp"

#include "faultline/core/clock.hpp"
#include "faultline/server/control_api.hpp"
#include "faultline/server/server.hpp"

#include <boost/asio/basic_socket_acceptor.hpp>
#include <boost/asio/basic_stream_socket.hpp>
#include <boost/asio/basic_waitable_timer.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

namespace faultline::harness {

namespace server_detail {

// Each worker thread runs its own io_context and owns the connections accepted onto it, so a
// connection's handlers never hop threads and need no strand; the I/O objects name the concrete
// executor type, which spares the hot path any_io_executor's type erasure.
using executor_t = boost::asio::io_context::executor_type;
using socket_t = boost::asio::basic_stream_socket<boost::asio::ip::tcp, executor_t>;
using acceptor_t = boost::asio::basic_socket_acceptor<boost::asio::ip::tcp, executor_t>;
using timer_t = boost::asio::basic_waitable_timer<std::chrono::steady_clock,
                                                  boost::asio::wait_traits<std::chrono::steady_clock>, executor_t>;

class session;

// Limit events of one kind journaled per second at most (limit_event_gate.hpp).
inline constexpr std::uint32_t limit_events_per_second = 100;
// Control connections open at once, apart from max_connections, so a full service side never locks
// the control API out.
inline constexpr std::size_t max_control_connections = 64;
// Descriptors kept back from max_connections: listeners, the journal file, control connections, stdio.
inline constexpr std::size_t descriptor_reserve = max_control_connections + 64;

}  // namespace server_detail

// Owned by the server object and by every live session (shared_ptr). The counters are atomics
// read from any thread; `sessions` is guarded by `sessions_mutex`, the lifecycle flags by
// `lifecycle_mutex`.
struct server::core : std::enable_shared_from_this<server::core> {
    core(server_context& ctx, server_options opts, faultline::clock& clk)
        : context{ctx},
          options{std::move(opts)},
          time{clk},
          run_start{clk.now()},
          control_token{options.control_token ? *options.control_token : make_control_token()},
          max_connections{context.limits.max_connections},
          ios{make_contexts(options.threads)},
          acceptor{ios.front()->get_executor()},
          control_acceptor{ios.front()->get_executor()} {}

    static std::vector<std::unique_ptr<boost::asio::io_context>> make_contexts(std::size_t threads) {
        std::vector<std::unique_ptr<boost::asio::io_context>> out;
        for (std::size_t i = 0; i < std::max<std::size_t>(threads, 1); ++i) {
            out.push_back(std::make_unique<boost::asio::io_context>(1));
        }
        return out;
    }

    // Connections are spread over the threads' contexts round-robin.
    boost::asio::io_context& next_context() { return *ios[next_context_index++ % ios.size()]; }

    std::int64_t since_start_ns() const { return (time.now() - run_start).count(); }

    server_counters read_counters() const {
        return {connections.load(),     refused.load(),         attempts.load(),
                control_requests.load(), bad_requests.load(),   open_connections.load(),
                over_limit.load(),       header_timeouts.load(), idle_timeouts.load(),
                write_timeouts.load(),   idle_evicted.load(),    events_not_journaled.load()};
    }

    // Journals a limit event unless the gate holds it back (then it is only counted).
    void journal_limit_event(server_event_kind kind, std::string peer, std::string detail);

    void do_accept(server_detail::acceptor_t& from, bool control_only);
    void on_accept(server_detail::socket_t socket, bool control_only);
    void register_session(std::uint64_t id, const std::shared_ptr<server_detail::session>& s);
    void unregister_session(std::uint64_t id);
    // Claims the longest-idle kept-alive service connection to be closed (idle_evicted); false
    // when none is idle. Called at the cap, from the accepting thread.
    bool evict_longest_idle(std::size_t cap);
    template <class F>
    void for_each_session(F f);

    server_context& context;
    const server_options options;
    faultline::clock& time;
    const faultline::time_point run_start;
    const std::string control_token;  // "" = none required
    std::size_t max_connections;      // context.limits.max_connections, lowered to the fd limit at start
    control_api control{context, {control_token, [this] { return read_counters(); },
                                  [this] { return since_start_ns(); }}};
    server_detail::limit_event_gate limit_events{server_detail::limit_events_per_second};

    std::vector<std::unique_ptr<boost::asio::io_context>> ios;  // one per worker thread
    std::size_t next_context_index = 0;                         // used by the accepting thread only
    std::vector<boost::asio::executor_work_guard<server_detail::executor_t>> work;
    server_detail::acceptor_t acceptor;          // on ios[0]
    server_detail::acceptor_t control_acceptor;  // on ios[0]; open only with options.control_port
    std::vector<std::thread> workers;
    std::uint16_t port = 0;
    std::optional<std::uint16_t> control_port;

    std::atomic<std::uint64_t> next_connection{0};
    std::atomic<std::uint64_t> connections{0};
    std::atomic<std::uint64_t> refused{0};
    std::atomic<std::uint64_t> attempts{0};
    std::atomic<std::uint64_t> control_requests{0};
    std::atomic<std::uint64_t> bad_requests{0};
    std::atomic<std::uint64_t> open_connections{0};  // service connections with a live session
    std::atomic<std::uint64_t> open_control{0};      // control connections with a live session
    std::atomic<std::uint64_t> over_limit{0};
    std::atomic<std::uint64_t> header_timeouts{0};
    std::atomic<std::uint64_t> idle_timeouts{0};
    std::atomic<std::uint64_t> write_timeouts{0};
    std::atomic<std::uint64_t> idle_evicted{0};
    std::atomic<std::uint64_t> events_not_journaled{0};
    std::atomic<bool> stopping{false};

    std::mutex sessions_mutex;
    std::condition_variable sessions_gone;
    std::unordered_map<std::uint64_t, std::weak_ptr<server_detail::session>> sessions;

    std::mutex lifecycle_mutex;
    bool started = false;
    bool stop_begun = false;
    bool stop_done = false;
};

}  // namespace faultline::harness
