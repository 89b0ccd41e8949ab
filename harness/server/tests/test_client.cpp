#include "test_client.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/json/parse.hpp>

#include <algorithm>
#include <array>
#include <memory>

namespace faultline::server::testing {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

// Length of the first complete response at the start of `bytes`, or 0 when there is none yet.
std::size_t complete_response_length(std::string_view bytes, response* out = nullptr) {
    http::response_parser<http::string_body> parser;
    parser.eager(true);
    parser.body_limit(boost::none);
    std::size_t used = 0;
    // Each put consumes at least one byte or stops, so this ends within bytes.size() rounds.
    while (used < bytes.size() && !parser.is_done()) {
        error_code ec;
        const std::size_t n = parser.put(asio::buffer(bytes.data() + used, bytes.size() - used), ec);
        used += n;
        if (ec || n == 0) break;
    }
    if (!parser.is_done()) return 0;
    if (out != nullptr) *out = parser.release();
    return used;
}

tcp::endpoint loopback(std::uint16_t port) { return {asio::ip::make_address_v4("127.0.0.1"), port}; }

// One request (or none) then one response, on an already connected socket, bounded by a timer.
class round_trip_op : public std::enable_shared_from_this<round_trip_op> {
public:
    round_trip_op(tcp::socket& socket, std::string request, std::string& pending, raw_reply& out,
                  std::chrono::milliseconds timeout)
        : socket_{socket}, timer_{socket.get_executor()}, request_{std::move(request)}, pending_{pending},
          out_{out}, timeout_{timeout} {}

    void start(bool connect_first, std::uint16_t port) {
        timer_.expires_after(timeout_);
        timer_.async_wait([self = shared_from_this()](error_code ec) {
            if (ec) return;
            self->out_.timed_out = true;
            error_code ignored;
            self->socket_.cancel(ignored);
        });
        if (!connect_first) return send();
        socket_.async_connect(loopback(port), [self = shared_from_this()](error_code ec) {
            if (ec) {
                self->out_.connect_error = ec;
                return self->finish();
            }
            self->send();
        });
    }

private:
    void send() {
        if (request_.empty()) return read();
        asio::async_write(socket_, asio::buffer(request_), [self = shared_from_this()](error_code ec, std::size_t) {
            // A write error (the server reset early) may still leave bytes to read.
            self->out_.write_error = ec;
            self->read();
        });
    }

    void read() {
        if (take_complete_response()) return finish();
        socket_.async_read_some(asio::buffer(chunk_), [self = shared_from_this()](error_code ec, std::size_t n) {
            self->pending_.append(self->chunk_.data(), n);
            if (ec) {
                self->out_.read_error = ec;
                self->out_.bytes += self->pending_;
                self->pending_.clear();
                return self->finish();
            }
            self->read();
        });
    }

    bool take_complete_response() {
        const std::size_t n = complete_response_length(pending_);
        if (n == 0) return false;
        out_.bytes.append(pending_, 0, n);
        pending_.erase(0, n);
        return true;
    }

    void finish() {
        out_.ended = std::chrono::steady_clock::now();
        timer_.cancel();
    }

    tcp::socket& socket_;
    asio::steady_timer timer_;
    std::string request_;
    std::string& pending_;
    raw_reply& out_;
    std::chrono::milliseconds timeout_;
    std::array<char, 4096> chunk_{};
};

// Runs `io` until it has no more work, bounded by `bound`.
void run_bounded(asio::io_context& io, std::chrono::milliseconds bound) {
    io.restart();
    io.run_for(bound + std::chrono::seconds{1});
}

}  // namespace

std::optional<response> raw_reply::parsed() const { return parse_response(bytes); }

bool raw_reply::was_reset() const {
    const auto reset = [](error_code ec) {
        return ec == asio::error::connection_reset || ec == asio::error::broken_pipe;
    };
    return reset(connect_error) || reset(write_error) || reset(read_error);
}

std::optional<response> parse_response(std::string_view bytes) {
    response out;
    if (complete_response_length(bytes, &out) == 0) return std::nullopt;
    return out;
}

std::string make_request(std::string_view method, std::string_view target, std::string_view body,
                         const header_pairs& headers, bool keep_alive) {
    std::string out;
    out.append(method).append(" ").append(target).append(" HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    for (const auto& [name, value] : headers) out.append(name).append(": ").append(value).append("\r\n");
    if (!body.empty() || method == "POST" || method == "PUT") {
        out.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n");
    }
    if (!keep_alive) out.append("Connection: close\r\n");
    out.append("\r\n").append(body);
    return out;
}

raw_reply exchange(std::uint16_t port, std::string request, std::chrono::milliseconds timeout) {
    return exchange_concurrently(port, {std::move(request)}, timeout).front();
}

std::vector<raw_reply> exchange_concurrently(std::uint16_t port, const std::vector<std::string>& requests,
                                             std::chrono::milliseconds timeout) {
    return exchange_staggered(port, requests, std::chrono::milliseconds{0}, timeout);
}

std::vector<raw_reply> exchange_staggered(std::uint16_t port, const std::vector<std::string>& requests,
                                          std::chrono::milliseconds spacing, std::chrono::milliseconds timeout) {
    asio::io_context io;
    std::vector<raw_reply> replies(requests.size());
    std::vector<std::unique_ptr<tcp::socket>> sockets;
    std::vector<std::unique_ptr<asio::steady_timer>> starts;
    std::vector<std::string> pending(requests.size());
    sockets.reserve(requests.size());
    for (std::size_t i = 0; i < requests.size(); ++i) {
        sockets.push_back(std::make_unique<tcp::socket>(io));
        auto op = std::make_shared<round_trip_op>(*sockets.back(), requests[i], pending[i], replies[i], timeout);
        if (spacing.count() == 0) {
            op->start(true, port);
            continue;
        }
        starts.push_back(std::make_unique<asio::steady_timer>(io, spacing * static_cast<int>(i)));
        starts.back()->async_wait([op, port](error_code) { op->start(true, port); });
    }
    run_bounded(io, spacing * static_cast<int>(requests.size()) + timeout);
    return replies;
}

connection::connection(std::uint16_t port, std::chrono::milliseconds connect_timeout) : socket_{io_} {
    socket_.async_connect(loopback(port), [this](error_code ec) { connect_error_ = ec; });
    run_bounded(io_, connect_timeout);
}

raw_reply connection::round_trip(const std::string& request, std::chrono::milliseconds timeout) {
    raw_reply out;
    if (!connected()) {
        out.connect_error = connect_error_;
        return out;
    }
    std::make_shared<round_trip_op>(socket_, request, pending_, out, timeout)->start(false, 0);
    run_bounded(io_, timeout);
    return out;
}

raw_reply connection::read_response(std::chrono::milliseconds timeout) { return round_trip({}, timeout); }

void connection::close() {
    error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
    socket_.close(ignored);
}

int status_of(std::uint16_t port, std::string_view method, std::string_view target) {
    const auto res = exchange(port, make_request(method, target)).parsed();
    return res ? static_cast<int>(res->result_int()) : 0;
}

control_reply control_call(std::uint16_t port, std::string_view method, std::string_view path,
                           const std::string& token, std::string_view body) {
    header_pairs headers;
    if (!token.empty()) headers.emplace_back("Authorization", "Bearer " + token);
    if (!body.empty()) headers.emplace_back("Content-Type", "application/json");
    const auto res = exchange(port, make_request(method, "/__faultline/" + std::string{path}, body, headers)).parsed();
    if (!res) return {};
    return {static_cast<int>(res->result_int()), res->body()};
}

control_reply control_until(std::uint16_t port, std::string_view path, const std::string& token,
                            const std::function<bool(const control_reply&)>& done, std::chrono::milliseconds within) {
    const auto deadline = std::chrono::steady_clock::now() + within;
    control_reply reply = control_call(port, "GET", path, token);
    while (!done(reply) && std::chrono::steady_clock::now() < deadline) reply = control_call(port, "GET", path, token);
    return reply;
}

journal_lines parse_journal_lines(std::string_view body) {
    journal_lines out;
    for (std::size_t at = 0; at < body.size();) {
        const auto end = std::min(body.find('\n', at), body.size());
        const std::string_view line = body.substr(at, end - at);
        at = end + 1;
        if (line.empty()) continue;
        boost::json::object record = boost::json::parse(line).as_object();
        if (const auto* event = record.if_contains("event")) {
            if (event->as_string() != "server_late") out.events.emplace_back(event->as_string());
        } else {
            out.attempts.push_back(std::move(record));
        }
    }
    return out;
}

}  // namespace faultline::server::testing
