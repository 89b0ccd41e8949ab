// A demonstration of faultline's retry client: an in-process HTTP server on 127.0.0.1:<ephemeral>
// fails the first two attempts with 503 and `Retry-After: 0`, then accepts; a POST goes through
// `http_client` under a retry policy, and every decision and the final result are printed.
// Exits 0 when the request succeeds within its retries, 1 otherwise.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "faultline/retry/http_client.hpp"

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace retry = faultline::retry;
using namespace std::chrono_literals;

namespace {

constexpr int failures_before_success = 2;

// Serves one keep-alive connection: 503 + Retry-After: 0 for the first attempts, then 201.
asio::awaitable<void> serve(beast::tcp_stream stream, std::shared_ptr<int> seen) {
    beast::flat_buffer buffer;
    for (;;) {
        http::request<http::string_body> request;
        auto [ec, n] = co_await http::async_read(stream, buffer, request, asio::as_tuple(asio::use_awaitable));
        if (ec) co_return;
        ++*seen;
        std::printf("  server: %s %s  attempt=%s deadline-ms=%s key=%s\n", std::string{request.method_string()}.c_str(),
                    std::string{request.target()}.c_str(), std::string{request[retry::attempt_header]}.c_str(),
                    std::string{request[retry::deadline_header]}.c_str(),
                    std::string{request[retry::idempotency_key_header]}.c_str());
        const bool fail = *seen <= failures_before_success;
        http::response<http::string_body> response{fail ? http::status::service_unavailable : http::status::created,
                                                   request.version()};
        if (fail) response.set(http::field::retry_after, "0");
        response.body() = fail ? "busy" : "charged";
        response.keep_alive(request.keep_alive());
        response.prepare_payload();
        auto [write_ec, written] = co_await http::async_write(stream, response, asio::as_tuple(asio::use_awaitable));
        if (write_ec || !response.keep_alive()) co_return;
    }
}

asio::awaitable<void> accept_loop(asio::ip::tcp::acceptor& acceptor) {
    auto seen = std::make_shared<int>(0);
    for (;;) {
        auto [ec, socket] = co_await acceptor.async_accept(asio::as_tuple(asio::use_awaitable));
        if (ec) co_return;
        asio::co_spawn(acceptor.get_executor(), serve(beast::tcp_stream{std::move(socket)}, seen), asio::detached);
    }
}

}  // namespace

int main() {
    asio::io_context io;
    asio::ip::tcp::acceptor acceptor{io, {asio::ip::make_address_v4("127.0.0.1"), 0}};
    const std::uint16_t port = acceptor.local_endpoint().port();
    asio::co_spawn(io, accept_loop(acceptor), asio::detached);
    std::printf("server listening on 127.0.0.1:%u\n", static_cast<unsigned>(port));

    const auto policy = retry::retry_policy{}
                            .with_max_attempts(4)
                            .with_backoff(retry::backoff_policy{}.with_base(20ms).with_cap(1s).with_jitter(
                                retry::jitter_kind::full))
                            .with_per_attempt_timeout(1s)
                            .with_overall_timeout(5s)
                            .with_budget(std::make_shared<retry::token_bucket_budget>(10, 0.1));
    retry::http_client client{io.get_executor(), "127.0.0.1", port, policy};

    retry::http_request request;
    request.method = http::verb::post;
    request.target = "/payments";
    request.headers.set(http::field::content_type, "application/json");
    request.body = R"({"order":"17","amount":1700})";

    retry::request_options options;
    options.on_decision = [](const retry::decision_event& e) {
        const std::string outcome = e.outcome == nullptr ? "-"
                                    : e.outcome->kind == retry::outcome_kind::response
                                        ? "HTTP " + std::to_string(e.outcome->status)
                                        : std::string{retry::to_string(e.outcome->kind)};
        std::printf("  client: attempt %u -> %s, decision=%s delay=%lldus\n", e.attempt, outcome.c_str(),
                    std::string{retry::to_string(e.verdict)}.c_str(),
                    static_cast<long long>(std::chrono::duration_cast<std::chrono::microseconds>(e.delay).count()));
    };

    int exit_code = 1;
    client.async_request(request, options, [&](retry::http_result result) {
        std::printf("result: %s after %u attempts, status %d, body \"%s\"\n",
                    std::string{retry::to_string(result.final_decision)}.c_str(),
                    result.attempts, result.status, result.body.c_str());
        std::printf("total time %lld ms, connections opened %llu\n",
                    static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(result.total_time).count()),
                    static_cast<unsigned long long>(client.connections_opened()));
        exit_code = result.succeeded() ? 0 : 1;
        boost::system::error_code ignored;
        acceptor.close(ignored);
        io.stop();
    });
    // Bounded: the policy's 5 s deadline ends the operation well within this.
    io.run_for(10s);
    return exit_code;
}
