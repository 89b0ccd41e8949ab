// Raw HTTP/1.1 clients for the server's integration tests. They speak to 127.0.0.1 through real
// sockets, keep every byte the server sent (so truncated bodies and garbage status lines can be
// inspected), and are bounded by their own timers: every exchange runs its io_context with
// `run_for`, so a silent server makes a test time out, never hang. Not thread-safe; each test
// owns its clients.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/json/object.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace faultline::server::testing {

namespace http = boost::beast::http;
using response = http::response<http::string_body>;
using header_pairs = std::vector<std::pair<std::string, std::string>>;

inline constexpr std::chrono::milliseconds default_timeout{5000};

// How one exchange ended, from the client's side.
struct raw_reply {
    boost::system::error_code connect_error;
    // The error that ended reading: `eof`, `connection_reset`, or none when a complete response
    // arrived. A timeout is reported by `timed_out` (the read was cancelled by the client's timer).
    boost::system::error_code read_error;
    boost::system::error_code write_error;  // sending the request failed (the server reset first)
    bool timed_out = false;
    std::string bytes;  // everything the server sent, raw
    std::chrono::steady_clock::time_point ended;  // when the exchange ended, however it did

    // The response parsed from `bytes`, when they hold a complete one.
    std::optional<response> parsed() const;
    // The server reset the connection. Where the client notices depends on timing: a reset right
    // after accept may fail the connect itself (Asio reads SO_ERROR once the socket is writable) or
    // the request's write, and then the read sees only EOF.
    bool was_reset() const;
};

// The bytes of a request. `Content-Length` is added when `body` is non-empty.
std::string make_request(std::string_view method, std::string_view target, std::string_view body = {},
                         const header_pairs& headers = {}, bool keep_alive = false);

// A response parsed from raw bytes, if they hold a complete one.
std::optional<response> parse_response(std::string_view bytes);

// Opens a connection, sends `request` (nothing when empty), and reads until a complete response,
// EOF, an error, or `timeout`; then closes.
raw_reply exchange(std::uint16_t port, std::string request, std::chrono::milliseconds timeout = default_timeout);

// The same for many requests at once, each on its own connection, all started before any
// completes; replies come back in the order of `requests`.
std::vector<raw_reply> exchange_concurrently(std::uint16_t port, const std::vector<std::string>& requests,
                                             std::chrono::milliseconds timeout = default_timeout);

// The same with clients that start at different times: request i is sent `spacing` x i after the
// first (each client's own timer), and each has `timeout` from its start.
std::vector<raw_reply> exchange_staggered(std::uint16_t port, const std::vector<std::string>& requests,
                                          std::chrono::milliseconds spacing,
                                          std::chrono::milliseconds timeout = default_timeout);

// The status of the reply to one request (`method` on `target`, its own connection), 0 when no
// complete reply came.
int status_of(std::uint16_t port, std::string_view method, std::string_view target);

// One call of a control API: `method` on /__faultline/{path}, with a bearer token (none when empty)
// and a JSON body (none when empty). `status` is 0 when no complete reply came.
struct control_reply {
    int status = 0;
    std::string body;
};
control_reply control_call(std::uint16_t port, std::string_view method, std::string_view path,
                           const std::string& token = {}, std::string_view body = {});
// GET /__faultline/{path} again and again until `done` holds for the reply or `within` passes; the
// last reply. For what a server journals after its reply went out (an attempt is journaled when its
// write ends, so a journal read right after the reply may not hold it yet): a bounded wait on a
// condition, not a sleep.
control_reply control_until(std::uint16_t port, std::string_view path, const std::string& token,
                            const std::function<bool(const control_reply&)>& done,
                            std::chrono::milliseconds within = default_timeout);
// A journal download (JSON Lines): its attempts (lines without "event") and its server events' names,
// but not `server_late` (a spell of a loaded machine, which no test's action causes).
struct journal_lines {
    std::vector<boost::json::object> attempts;
    std::vector<std::string> events;
};
journal_lines parse_journal_lines(std::string_view body);

// One kept-alive connection for several requests in turn.
class connection {
public:
    explicit connection(std::uint16_t port, std::chrono::milliseconds connect_timeout = default_timeout);

    bool connected() const { return !connect_error_; }
    // Sends `request` and reads one response (or the end of the connection) within `timeout`.
    raw_reply round_trip(const std::string& request, std::chrono::milliseconds timeout = default_timeout);
    // Reads one response (or the end of the connection) within `timeout`, sending nothing.
    raw_reply read_response(std::chrono::milliseconds timeout = default_timeout);
    // Closes the client's end (FIN).
    void close();

private:
    boost::asio::io_context io_;
    boost::asio::ip::tcp::socket socket_;
    boost::system::error_code connect_error_;
    std::string pending_;  // bytes received past the last complete response
};

}  // namespace faultline::server::testing
