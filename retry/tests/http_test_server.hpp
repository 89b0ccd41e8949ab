// A tiny scripted HTTP/1.1 server for the retry client's integration tests. It listens on
// 127.0.0.1:0, records every request it reads (with the connection it came on), and answers each
// one with the next step of a script the test wrote: respond with a status, reset the connection
// (RST), close it (FIN, no reply), or hang (read the request and never answer). Once the script
// runs out it answers 200 "ok". It counts accepted connections, so tests can check keep-alive reuse.
//
// Ownership: the server and all its sessions run on the test's io_context (single-threaded; not
// thread-safe). State shared with the session coroutines is held by shared_ptr, so destroying the
// server before the io_context is safe.
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <cctype>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace faultline::retry::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

enum class step_kind { respond, reset, close, hang };

struct server_step {
    step_kind kind = step_kind::respond;
    int status = 200;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;

    static server_step respond(int status_code, std::string body_text = {},
                               std::vector<std::pair<std::string, std::string>> extra = {}) {
        return {step_kind::respond, status_code, std::move(extra), std::move(body_text)};
    }
    static server_step reset() { return {step_kind::reset, 0, {}, {}}; }
    static server_step close() { return {step_kind::close, 0, {}, {}}; }
    static server_step hang() { return {step_kind::hang, 0, {}, {}}; }
};

struct recorded_request {
    std::string method;
    std::string target;
    std::map<std::string, std::string> headers;  // lower-case names
    std::string body;
    int connection = 0;  // 1-based, in accept order
};

class http_test_server {
public:
    explicit http_test_server(asio::io_context& io, std::uint16_t port = 0)
        : state_{std::make_shared<state>(io)} {
        const asio::ip::tcp::endpoint endpoint{asio::ip::make_address_v4("127.0.0.1"), port};
        state_->acceptor.open(endpoint.protocol());
        state_->acceptor.set_option(asio::socket_base::reuse_address(true));
        state_->acceptor.bind(endpoint);
        state_->acceptor.listen();
        asio::co_spawn(io, accept_loop(state_), asio::detached);
    }
    http_test_server(const http_test_server&) = delete;
    http_test_server& operator=(const http_test_server&) = delete;
    ~http_test_server() { stop(); }

    std::uint16_t port() const { return state_->acceptor.local_endpoint().port(); }
    void script(std::vector<server_step> steps) { state_->steps.assign(steps.begin(), steps.end()); }
    const std::vector<recorded_request>& requests() const { return state_->requests; }
    // Called (on the io_context) for every request, right after it is recorded.
    void on_request(std::function<void(const recorded_request&)> callback) { state_->on_request = std::move(callback); }
    int accepted_connections() const { return state_->accepted; }

    // Stops accepting and closes every open connection (hung ones included).
    void stop() {
        boost::system::error_code ignored;
        state_->acceptor.close(ignored);
        for (auto& weak : state_->sessions) {
            if (auto stream = weak.lock()) stream->socket().close(ignored);
        }
    }

private:
    // A hang is bounded so that a test that forgets to stop the server still ends.
    static constexpr std::chrono::seconds hang_limit{30};
    static constexpr std::uint32_t body_limit = 1 << 20;

    struct state {
        explicit state(asio::io_context& io) : acceptor{io} {}
        asio::ip::tcp::acceptor acceptor;
        std::deque<server_step> steps;
        std::vector<recorded_request> requests;
        std::vector<std::weak_ptr<beast::tcp_stream>> sessions;
        std::function<void(const recorded_request&)> on_request;
        int accepted = 0;
    };

    static asio::awaitable<void> accept_loop(std::shared_ptr<state> s) {
        for (;;) {
            auto [ec, socket] = co_await s->acceptor.async_accept(asio::as_tuple(asio::use_awaitable));
            if (ec) co_return;  // closed by stop()
            ++s->accepted;
            auto stream = std::make_shared<beast::tcp_stream>(std::move(socket));
            s->sessions.push_back(stream);
            asio::co_spawn(s->acceptor.get_executor(), session(s, stream, s->accepted), asio::detached);
        }
    }

    static asio::awaitable<void> session(std::shared_ptr<state> s, std::shared_ptr<beast::tcp_stream> stream,
                                         int connection) {
        beast::flat_buffer buffer;
        for (;;) {
            http::request_parser<http::string_body> parser;
            parser.body_limit(body_limit);
            auto [ec, n] = co_await http::async_read(*stream, buffer, parser, asio::as_tuple(asio::use_awaitable));
            if (ec) co_return;
            const auto& request = parser.get();
            recorded_request record;
            record.method = std::string{request.method_string()};
            record.target = std::string{request.target()};
            for (const auto& field : request) {
                std::string name{field.name_string()};
                for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
                record.headers[name] = std::string{field.value()};
            }
            record.body = request.body();
            record.connection = connection;
            s->requests.push_back(std::move(record));
            if (s->on_request) s->on_request(s->requests.back());

            server_step step = server_step::respond(200, "ok");
            if (!s->steps.empty()) {
                step = std::move(s->steps.front());
                s->steps.pop_front();
            }
            boost::system::error_code ignored;
            switch (step.kind) {
                case step_kind::reset:
                    // SO_LINGER 0 turns close() into an RST.
                    stream->socket().set_option(asio::socket_base::linger(true, 0), ignored);
                    stream->socket().close(ignored);
                    co_return;
                case step_kind::close:
                    stream->socket().shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
                    stream->socket().close(ignored);
                    co_return;
                case step_kind::hang: {
                    // Silent until the client gives up (its close ends the read) or the limit passes.
                    stream->expires_after(hang_limit);
                    char byte = 0;
                    co_await stream->async_read_some(asio::buffer(&byte, 1), asio::as_tuple(asio::use_awaitable));
                    stream->socket().close(ignored);
                    co_return;
                }
                case step_kind::respond: break;
            }
            http::response<http::string_body> response{static_cast<http::status>(step.status), request.version()};
            for (const auto& [name, value] : step.headers) response.set(name, value);
            response.body() = std::move(step.body);
            response.keep_alive(request.keep_alive());
            response.prepare_payload();
            auto [write_ec, written] =
                co_await http::async_write(*stream, response, asio::as_tuple(asio::use_awaitable));
            if (write_ec || !response.keep_alive()) co_return;
        }
    }

    std::shared_ptr<state> state_;
};

}  // namespace faultline::retry::testing
