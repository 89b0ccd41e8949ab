// Private to the server: the one HTTP connection of every HTTP mode — `serve` and `run` (the
// service backend behind it) and `proxy` (the upstream backend). It speaks HTTP/1.1 itself, or
// hands the connection to HTTP/2 (h2_session.hpp) when TLS's ALPN chose `h2` or a plain connection
// opens with HTTP/2's preface (h2c by prior knowledge). As HTTP/1.1 it reads requests with Beast's
// parser, refuses what RFC 9112 framing refuses (framing.hpp), answers `Expect: 100-continue`, sends
// control requests to the control API on the control port, and runs every other request as one
// attempt through attempt_lifecycle.hpp (identity, the engine's decision, a barrier hold, then the
// backend's reply or the fault plan, which action_executor.hpp carries out through the primitives
// below) — the lifecycle an HTTP/2 stream runs too. Header, idle and write timeouts, hangs and
// closes are here, for every mode.
#pragma once

#include "attempt_lifecycle.hpp"
#include "backend.hpp"
#include "connection_stream.hpp"
#include "exchange.hpp"
#include "http_core.hpp"

#include "faultline/faults/engine.hpp"
#include "faultline/server/identity.hpp"
#include "faultline/server/journal.hpp"
#include "faultline/server/listener.hpp"
#include "faultline/server/service.hpp"

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/system/error_code.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace faultline::server::detail {

class h2_session;

// One connection. Owns its socket, buffers, its backend channel, the attempt in progress (its
// journal record and the engine's decision, which holds fault capacity until the attempt ends) and
// two timers. Every step runs on the socket's executor (one thread), as a do_x / on_x pair bound to
// shared_from_this. The listener calls the listened_connection members from any thread; the backend
// channel calls the attempt accessors and on_fetched on the connection's thread.
class http_connection final : public listened_connection,
                              public fetch_waiter,
                              public std::enable_shared_from_this<http_connection> {
public:
    http_connection(std::shared_ptr<http_core> core, listener_socket socket, std::uint64_t id, std::size_t worker,
                    std::int64_t accepted_ns, bool control_only, bool closed_at_start, tls_fault fault = {});
    ~http_connection() override;

    http_connection(const http_connection&) = delete;
    http_connection& operator=(const http_connection&) = delete;

    // listened_connection
    void start() override;
    void on_listener_stop() override;
    void force_close() override;
    std::optional<std::int64_t> idle_since() const override;
    bool evict_if_idle_since(std::int64_t since, std::size_t cap) override;

    // fetch_waiter: the fetch the channel was asked for is done, the attempt goes on.
    void on_fetched() override;

    // For h2_session, which carries the connection once it speaks HTTP/2.
    std::uint64_t id() const { return id_; }
    std::size_t worker() const { return worker_; }
    std::int64_t accepted_ns() const { return accepted_ns_; }
    bool control_only() const { return control_only_; }
    http_core& core() { return *core_; }
    connection_stream& stream() { return stream_; }
    std::string peer() const;
    void close_now();
    // HTTP/2 ended the connection in order (GOAWAY sent, every stream over): FIN or close_notify.
    void end_gracefully() { do_graceful_close(); }
    // A write that the socket could not take at once waits for the client (write_timeout), and is done.
    void begin_waiting_write(std::size_t bytes);
    void end_waiting_write() { write_deadline_.reset(); }

    // The `tls` rule whose bad certificate this connection's client accepted ("" none): its
    // attempts, HTTP/1.1 requests or HTTP/2 streams, are journaled as that rule's.
    std::string_view bad_certificate_rule() const;

private:
    friend class action_executor<http_connection>;
    friend class attempt_lifecycle<http_connection>;
    using lifecycle = attempt_lifecycle<http_connection>;

    using response_t = boost::beast::http::response<boost::beast::http::string_body>;
    using error_code = boost::system::error_code;
    using steady = std::chrono::steady_clock;

    enum class state { idle, busy, held, fetching, hanging, closing, multiplexed };
    // What a reading connection waits for: a request in progress (or the first on a new connection)
    // is bounded by header_timeout, a kept-alive connection between requests by idle_timeout.
    enum class read_phase { header, idle };
    // attempt_lifecycle's Carrier
    exchange& attempt() { return attempt_; }
    backend_channel& channel() { return *channel_; }
    void enter(attempt_phase phase);
    attempt_phase phase() const;
    bool stopping() const { return stopping_; }
    listener_timer& timer() { return timer_; }
    std::shared_ptr<http_connection> shared() { return shared_from_this(); }
    std::shared_ptr<fetch_waiter> waiter() { return shared_from_this(); }

    // TLS, before the first request
    void do_handshake();
    void on_handshake(error_code ec);
    // The `tls` fault's abort and stall: the client's hello is read (raw TCP), then the connection
    // is reset, or left unanswered until header_timeout.
    void read_hello();
    bool presents_bad_certificate() const;
    void journal_certificate_refused(const std::string& how);
    void note_unused_bad_certificate();

    // HTTP/2 from here on, with the bytes read so far.
    void start_h2(std::string_view protocol);

    // reading a request
    void do_read();
    void parse_buffered();
    void read_more();
    void on_eof();
    void on_read(error_code ec);
    [[gnu::cold]] void send_continue();
    [[gnu::cold]] void reject(error_code ec);
    [[gnu::cold]] void reject(boost::beast::http::status status, std::string message);
    void serve_control();

    // deadlines: a field store per request; one timer per connection that wakes at most every
    // period (the shortest timeout) and compares the read, write and fetch deadlines
    void set_read_deadline(read_phase phase, steady::time_point from);
    // False when the listener claimed the connection for eviction first (it is then closed).
    [[nodiscard]] bool leave_idle();
    void arm_watchdog(steady::time_point at);
    void on_watchdog();
    [[gnu::cold]] void on_read_deadline_passed();
    [[gnu::cold]] void on_write_deadline_passed();
    steady::duration watch_period() const;

    // one attempt: attempt_lifecycle.hpp
    service_response run_service() { return channel_->commit(attempt_); }

    // the reply
    template <class Headers>
    void set_reply(int status, const Headers& headers, std::string body,
                   std::optional<std::size_t> content_length = std::nullopt) {
        compose_reply(status, headers, std::move(body), content_length, false);
    }
    template <class Headers>
    void compose_reply(int status, const Headers& headers, std::string body, std::optional<std::size_t> content_length,
                       bool framed_by_close);
    void set_reply(response_t res);
    void set_reply(service_response reply);
    // tls_truncate's head: no Content-Length, so the body ends with the connection (Connection: close).
    bool can_frame_by_close() const { return tls_established_; }
    template <class Headers>
    void set_reply_framed_by_close(int status, const Headers& headers, std::string body);
    const std::string& reply_head() const { return reply_.head; }
    const std::string& reply_body() const { return reply_.body; }
    bool reply_keep_alive() const { return reply_.keep_alive; }
    std::string& raw() { return raw_; }
    faults::duration max_fault_wait() const { return core_->context.limits.max_fault_wait; }

    // writing
    bool response_started() const { return attempt_.record.response_ns >= 0; }
    void mark_response_started();
    void send_response();
    void on_write(error_code ec, std::size_t bytes);
    bool reply_refused_unread();
    template <class Next>
    void write_raw(std::size_t offset, std::size_t n, Next next);
    template <class Next>
    void wait_then(faults::duration wait, Next next);

    // hanging: say nothing until the client goes away or the limit passes
    void start_hang(faults::duration limit);
    // HTTP/1.1 cannot say a request was not processed: the connection closes with no reply.
    void refuse_stream();
    // Nor has it GOAWAY: the connection closes with no reply (after the commit: the lost response).
    void go_away(bool processed);
    void not_mapped(std::string detail);
    void watch_hang();
    void end_hang();

    // ending connections
    void reset_now();
    void do_graceful_close();
    void close_tls();
    void close_without_close_notify() { fin_and_linger(); }
    void fin_and_linger();
    void drain();
    void finish_attempt(record::wire_outcome outcome) { lifecycle::finish(*this, outcome); }

    std::shared_ptr<http_core> core_;
    connection_stream stream_;  // TCP, or TLS over it
    listener_timer timer_;     // fault waits, barrier deadlines, the linger after a close
    listener_timer watchdog_;  // read, write and fetch deadlines
    std::unique_ptr<backend_channel> channel_;
    read_phase read_phase_ = read_phase::header;
    steady::time_point read_deadline_{};
    std::optional<steady::time_point> write_deadline_;  // while a write waits for the client
    std::size_t waiting_write_bytes_ = 0;
    // ns since the run started at which the kept-alive idle spell began; not_idle, or evicting once
    // the listener has claimed the connection (a compare-exchange decides between the two sides).
    static constexpr std::int64_t not_idle = -1;
    static constexpr std::int64_t evicting = -2;
    std::atomic<std::int64_t> idle_since_ns_{not_idle};
    const std::uint64_t id_;
    const std::size_t worker_;
    const std::int64_t accepted_ns_;
    const bool control_only_;
    const bool closed_at_start_;  // the engine told us to close (FIN) before reading anything
    const bool stamps_replies_;   // the backend's stamps_replies()
    state state_ = state::idle;
    bool stopping_ = false;
    bool continue_sent_ = false;  // for the request being read
    bool tls_established_ = false;  // the TLS handshake completed
    const tls_fault tls_fault_;     // what the `tls` fault does to this connection (accept: nothing)
    bool certificate_refusal_journaled_ = false;  // once per connection

    boost::beast::flat_buffer buffer_;
    std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
    std::size_t bytes_in_ = 0;  // request bytes the parser consumed
    std::uint32_t requests_read_ = 0;  // on this connection, control requests included
    struct outgoing {
        std::string head;  // status line and fields, serialized, ending in the blank line
        std::string body;
        bool keep_alive = true;
    };
    outgoing reply_;  // what the attempt (or control request) sends
    std::size_t inline_requests_ = 0;  // requests served in a row without returning to the scheduler

    exchange attempt_;  // its request is the one being read, then answered
    std::unique_ptr<h2_session> h2_;  // once the connection speaks HTTP/2

    std::string raw_;  // bytes of a damaged reply (slow, truncated, malformed)
    std::array<char, 1024> scratch_{};
};

}  // namespace faultline::server::detail
