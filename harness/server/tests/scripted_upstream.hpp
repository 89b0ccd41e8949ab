// An upstream for the proxy's tests, written with Asio and Beast: it accepts connections on
// 127.0.0.1:0 on a thread of its own, reads each request in full, and does with it what the test's
// script says — writes raw reply bytes as they are (interim 1xx replies, a 101, a huge body), closes
// or resets the connection after reading. It counts every request it read, so a test can tell a
// request the proxy sent twice from one it sent once. Its thread runs for at most a minute.
#pragma once

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace faultline::server::testing {

class scripted_upstream {
public:
    // What the upstream does with one request it has read.
    struct step {
        enum class act { reply, close, reset } what = act::reply;
        std::string bytes;  // act::reply: written as they are; the connection then reads the next request
    };
    // `index`: the request's number over all connections, 0-based.
    using script = std::function<step(std::size_t index)>;

    static step reply(std::string bytes) { return {step::act::reply, std::move(bytes)}; }
    static step close() { return {step::act::close, {}}; }
    static step reset() { return {step::act::reset, {}}; }
    // "HTTP/1.1 <status> X" with a Content-Length body, kept alive.
    static std::string response(int status, std::string_view body = "ok") {
        return "HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Length: " + std::to_string(body.size()) +
               "\r\n\r\n" + std::string{body};
    }

    explicit scripted_upstream(script s)
        : script_{std::move(s)}, acceptor_{io_, {boost::asio::ip::make_address("127.0.0.1"), 0}} {
        boost::asio::co_spawn(io_, accept(), boost::asio::detached);
        thread_ = std::thread{[this] { io_.run_for(std::chrono::minutes{1}); }};
    }
    ~scripted_upstream() {
        io_.stop();
        thread_.join();
    }
    scripted_upstream(const scripted_upstream&) = delete;
    scripted_upstream& operator=(const scripted_upstream&) = delete;

    std::uint16_t port() const { return acceptor_.local_endpoint().port(); }
    std::size_t requests() const { return requests_.load(); }
    std::size_t connections() const { return connections_.load(); }
    // The requests as read (head fields and body), in order.
    std::vector<boost::beast::http::request<boost::beast::http::string_body>> seen() const {
        const std::lock_guard lock{mutex_};
        return seen_;
    }

private:
    using tcp = boost::asio::ip::tcp;

    boost::asio::awaitable<void> accept() {
        for (;;) {
            tcp::socket socket = co_await acceptor_.async_accept(boost::asio::use_awaitable);
            ++connections_;
            boost::asio::co_spawn(io_, serve(std::move(socket)), boost::asio::detached);
        }
    }

    boost::asio::awaitable<void> serve(tcp::socket socket) {
        namespace http = boost::beast::http;
        boost::beast::flat_buffer buffer;
        for (;;) {
            http::request<http::string_body> request;
            boost::system::error_code ec;
            co_await http::async_read(socket, buffer, request,
                                      boost::asio::redirect_error(boost::asio::use_awaitable, ec));
            if (ec) co_return;
            const std::size_t index = requests_++;
            {
                const std::lock_guard lock{mutex_};
                seen_.push_back(request);
            }
            const step s = script_(index);
            if (s.what == step::act::reset) {
                socket.set_option(boost::asio::socket_base::linger{true, 0}, ec);
                socket.close(ec);
                co_return;
            }
            if (s.what == step::act::close) {
                socket.close(ec);
                co_return;
            }
            co_await boost::asio::async_write(socket, boost::asio::buffer(s.bytes),
                                              boost::asio::redirect_error(boost::asio::use_awaitable, ec));
            if (ec) co_return;
        }
    }

    script script_;
    boost::asio::io_context io_;
    tcp::acceptor acceptor_;
    std::thread thread_;
    std::atomic<std::size_t> requests_{0};
    std::atomic<std::size_t> connections_{0};
    mutable std::mutex mutex_;
    std::vector<boost::beast::http::request<boost::beast::http::string_body>> seen_;
};

}  // namespace faultline::server::testing
