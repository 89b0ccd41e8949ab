// Private to the server: HTTP/2 on the one connection (http_connection.hpp), with nghttp2 doing the
// framing, HPACK and flow control. The connection hands itself over when TLS's ALPN chose `h2` or a
// plain connection opened with the client preface (h2c by prior knowledge); from then on the session
// reads and writes its byte stream, and each request stream is one attempt that runs the same
// lifecycle as an HTTP/1.1 request (attempt_lifecycle.hpp) and the same fault plans
// (action_executor.hpp), against a backend channel of its own (streams run concurrently).
//
// A fault acts on its stream, not the connection (docs/protocols.md): a reply is HEADERS (+DATA);
// a reset is RST_STREAM INTERNAL_ERROR and a close RST_STREAM CANCEL, with no reply; a hang leaves
// the stream silent until the client cancels it or the limit passes (then CANCEL); a slow body is
// DATA paced; a truncated body is HEADERS promising the whole content-length, part of the DATA,
// then RST_STREAM; malformed bytes have no HTTP/2 form: the stream is reset with PROTOCOL_ERROR.
// The record says which RST_STREAM code was sent (wire_detail::stream_reset) and whether the effect
// was committed first (its effect). Connection-level faults (refuse, reset before_read) act before
// the preface, as for HTTP/1.1.
//
// Owned by its connection and touched only on its thread. Streams hold a reference to the session;
// every handler that may outlive a step holds the connection (which owns the session) and the stream.
#pragma once

#include "attempt_lifecycle.hpp"
#include "backend.hpp"
#include "exchange.hpp"

#include <boost/beast/core/flat_buffer.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct nghttp2_session;

namespace faultline::server::detail {

class http_connection;
class h2_stream;

class h2_session {
public:
    // What a client sends first on a connection it knows speaks HTTP/2 (RFC 9113 3.4).
    static constexpr std::string_view client_preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    // `protocol`: the journal's name for it, "h2" (TLS) or "h2c".
    h2_session(http_connection& connection, std::string_view protocol);
    // Every stream's attempt still open is journaled (closed, or truncated once its reply began).
    ~h2_session();

    h2_session(const h2_session&) = delete;
    h2_session& operator=(const h2_session&) = delete;

    // Sends the server's SETTINGS, takes the bytes the connection read already, and reads on.
    void start(boost::beast::flat_buffer& already_read);
    // The listener stops: GOAWAY, held and hanging streams let go; the connection ends once every
    // stream is over.
    void on_listener_stop();
    // A goaway rule fired on `stream` (begun): GOAWAY whose last-stream-id says whether it was
    // processed. Unprocessed, it is closed by nghttp2 as the GOAWAY goes out and the streams begun go
    // on; covered, the connection ends with no reply to it.
    void go_away(std::int32_t stream, bool processed);
    // The connection is closing for good: stream timers and backend fetches end now.
    void cancel_streams();
    // The connection's watchdog: backend fetch deadlines, and idle_timeout while no stream is open.
    std::optional<std::chrono::steady_clock::time_point> on_watchdog(std::chrono::steady_clock::time_point now);

    // For streams.
    http_connection& connection() { return connection_; }
    std::string_view protocol() const { return protocol_; }
    std::uint32_t requests() const { return requests_; }  // streams begun as attempts so far
    bool stopping() const { return stopping_; }
    // Sends what nghttp2 has queued, from the scheduler (never inside an nghttp2 callback).
    void schedule_flush();
    nghttp2_session* native() { return session_; }

private:
    friend struct h2_callbacks;

    void read();
    void on_read(boost::system::error_code ec, std::size_t n);
    void receive(const char* data, std::size_t size);
    void flush();
    void end_if_done();
    void begin_ready_streams();
    std::shared_ptr<h2_stream> find(std::int32_t id) const;

    http_connection& connection_;
    const std::string protocol_;
    nghttp2_session* session_ = nullptr;
    std::map<std::int32_t, std::shared_ptr<h2_stream>> streams_;
    std::vector<std::int32_t> ready_;  // requests complete during a receive, begun after it
    boost::beast::flat_buffer in_;
    std::string out_;
    std::chrono::steady_clock::time_point idle_since_;
    std::uint32_t requests_ = 0;
    std::int32_t highest_begun_ = 0;  // the highest stream id begun as an attempt (or control request)
    bool writing_ = false;
    bool flush_scheduled_ = false;
    bool stopping_ = false;
    bool ended_ = false;   // nothing more is read or written
    bool ending_ = false;  // ended in order: the cancelled read's handler closes the connection
};

}  // namespace faultline::server::detail
