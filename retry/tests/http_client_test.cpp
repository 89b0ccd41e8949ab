#include "faultline/retry/http_client.hpp"

#include <gtest/gtest.h>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "faultline/retry/idempotency.hpp"
#include "faultline/retry/retry_after.hpp"
#include "http_test_server.hpp"

namespace faultline::retry {
namespace {

using namespace std::chrono_literals;
using testing::http_test_server;
using testing::server_step;

constexpr auto run_bound = 10s;

// Jitter-free, tiny delays (1 ms, 2 ms, ...), so retries are quick and the reported delays exact.
retry_policy quick_policy(std::uint32_t attempts) {
    return retry_policy{}.with_max_attempts(attempts).with_backoff(
        backoff_policy{}.with_base(1ms).with_cap(1s).with_jitter(jitter_kind::none));
}

http_request make_request(http::verb method, std::string target, std::string body = {}) {
    http_request request;
    request.method = method;
    request.target = std::move(target);
    request.body = std::move(body);
    return request;
}

// Runs the io_context until `done()` holds or the bound passes (the test server never runs out of
// work, so run_for alone would always take the whole bound).
template <class Done>
bool run_until(asio::io_context& io, Done done) {
    const auto until = std::chrono::steady_clock::now() + run_bound;
    io.restart();
    while (!done() && std::chrono::steady_clock::now() < until) io.run_one_until(until);
    return done();
}

// Runs one request to completion (bounded) and returns its result.
std::optional<http_result> run_one(asio::io_context& io, http_client& client, http_request request,
                                   request_options options = {}) {
    std::optional<http_result> result;
    client.async_request(std::move(request), std::move(options), [&](http_result r) { result = std::move(r); });
    run_until(io, [&] { return result.has_value(); });
    return result;
}

TEST(http_client, keep_alive_reuses_one_connection_for_sequential_requests) {
    asio::io_context io;
    http_test_server server{io};
    http_client client{io.get_executor(), "127.0.0.1", server.port(), quick_policy(3)};
    for (int i = 0; i < 3; ++i) {
        const auto result = run_one(io, client, make_request(http::verb::get, "/kv/a"));
        ASSERT_TRUE(result.has_value());
        EXPECT_EQ(result->final_decision, decision::success);
        EXPECT_EQ(result->status, 200);
        EXPECT_EQ(result->body, "ok");
    }
    EXPECT_EQ(server.accepted_connections(), 1);
    EXPECT_EQ(client.connections_opened(), 1u);
    ASSERT_EQ(server.requests().size(), 3u);
    for (const auto& r : server.requests()) EXPECT_EQ(r.connection, 1);
}

TEST(http_client, per_attempt_timeout_cancels_a_hung_response_and_the_next_attempt_succeeds) {
    asio::io_context io;
    http_test_server server{io};
    server.script({server_step::hang(), server_step::respond(200, "done")});
    http_client client{io.get_executor(), "127.0.0.1", server.port(),
                       quick_policy(3).with_per_attempt_timeout(200ms)};
    const auto result = run_one(io, client, make_request(http::verb::put, "/kv/a", "v"));
    ASSERT_TRUE(result.has_value());
    EXPECT_EQ(result->final_decision, decision::success);
    EXPECT_EQ(result->attempts, 2u);
    ASSERT_EQ(result->history.size(), 2u);
    EXPECT_EQ(result->history[0].outcome.kind, outcome_kind::timeout_after_write);
    EXPECT_EQ(result->history[0].verdict, decision::retry);
    EXPECT_EQ(result->history[1].outcome.status, 200);
    EXPECT_EQ(result->body, "done");
    // The timed-out connection was discarded, not reused.
    EXPECT_EQ(server.accepted_connections(), 2);
    ASSERT_EQ(server.requests().size(), 2u);
    EXPECT_EQ(server.requests()[1].connection, 2);
}

TEST(http_client, headers_and_body_are_sent_on_every_attempt_and_stay_stable) {
    asio::io_context io;
    http_test_server server{io};
    server.script({server_step::respond(503), server_step::respond(503), server_step::respond(201, "created")});
    manual_clock clk;
    http_client client{io.get_executor(), "127.0.0.1", server.port(), quick_policy(4).with_overall_timeout(10s),
                       http_client_options{.clk = &clk, .max_idle_connections = 4, .body_limit = 1u << 20}};
    request_options options;
    // Time passes on the injected clock between attempts, so the deadline header must shrink.
    options.on_decision = [&](const decision_event& e) {
        if (e.verdict == decision::retry) clk.advance(100ms);
    };
    const std::string body = R"({"amount":1700,"order":"17"})";
    const auto result = run_one(io, client, make_request(http::verb::post, "/payments", body), options);
    ASSERT_TRUE(result.has_value());
    EXPECT_EQ(result->final_decision, decision::success);
    EXPECT_EQ(result->status, 201);
    EXPECT_EQ(result->attempts, 3u);
    EXPECT_EQ(result->total_time, 200ms);

    const auto& requests = server.requests();
    ASSERT_EQ(requests.size(), 3u);
    const std::string key = requests[0].headers.at("idempotency-key");
    ASSERT_EQ(key.size(), idempotency_key::size + 2);  // quoted (the default key_format)
    EXPECT_EQ(key.front(), '"');
    EXPECT_TRUE(is_uuid_v4(key.substr(1, idempotency_key::size)));
    const std::vector<std::string> deadlines{"10000", "9900", "9800"};
    for (std::size_t i = 0; i < requests.size(); ++i) {
        SCOPED_TRACE(i);
        EXPECT_EQ(requests[i].method, "POST");
        EXPECT_EQ(requests[i].target, "/payments");
        EXPECT_EQ(requests[i].body, body);
        EXPECT_EQ(requests[i].headers.at("idempotency-key"), key);
        EXPECT_EQ(requests[i].headers.at("faultline-attempt"), std::to_string(i + 1));
        EXPECT_EQ(requests[i].headers.at("faultline-deadline-ms"), deadlines[i]);
        EXPECT_EQ(requests[i].headers.at("content-length"), std::to_string(body.size()));
    }
}

// A key of the caller's own format (not a UUID) is sent as given, and no other is added, with or
// without auto_add.
TEST(http_client, a_caller_supplied_key_is_kept_on_every_attempt) {
    for (const bool auto_add : {false, true}) {
        asio::io_context io;
        http_test_server server{io};
        server.script({server_step::reset(), server_step::respond(200)});
        http_client client{io.get_executor(), "127.0.0.1", server.port(),
                           quick_policy(3).with_keys(idempotency_options{}.with_auto_add(auto_add))};
        auto request = make_request(http::verb::post, "/payments", "x");
        request.headers.set("Idempotency-Key", "order-17");
        const auto result = run_one(io, client, request);
        ASSERT_TRUE(result.has_value());
        EXPECT_EQ(result->final_decision, decision::success) << auto_add;
        ASSERT_EQ(server.requests().size(), 2u) << auto_add;
        for (const auto& seen : server.requests()) {
            EXPECT_EQ(seen.headers.at("idempotency-key"), "order-17") << auto_add;
        }
    }
}

TEST(http_client, post_without_a_key_is_not_retried_after_reset_after_write_but_put_is) {
    asio::io_context io;
    http_test_server server{io};
    const auto no_keys = quick_policy(3).with_keys(idempotency_options{}.with_auto_add(false));
    http_client client{io.get_executor(), "127.0.0.1", server.port(), no_keys};

    server.script({server_step::reset(), server_step::respond(200)});
    const auto post = run_one(io, client, make_request(http::verb::post, "/payments", "p"));
    ASSERT_TRUE(post.has_value());
    EXPECT_EQ(post->final_decision, decision::not_retryable);
    EXPECT_EQ(post->attempts, 1u);
    EXPECT_EQ(post->last_outcome.kind, outcome_kind::reset_after_write);
    EXPECT_EQ(post->status, 0);
    EXPECT_EQ(server.requests().size(), 1u);
    EXPECT_EQ(server.requests()[0].headers.count("idempotency-key"), 0u);

    server.script({server_step::reset(), server_step::respond(200)});
    const auto put = run_one(io, client, make_request(http::verb::put, "/kv/a", "p"));
    ASSERT_TRUE(put.has_value());
    EXPECT_EQ(put->final_decision, decision::success);
    EXPECT_EQ(put->attempts, 2u);
    EXPECT_EQ(put->history[0].outcome.kind, outcome_kind::reset_after_write);
}

TEST(http_client, post_with_an_automatic_key_is_retried_after_reset_after_write) {
    asio::io_context io;
    http_test_server server{io};
    server.script({server_step::reset(), server_step::respond(200)});
    http_client client{io.get_executor(), "127.0.0.1", server.port(), quick_policy(3)};
    const auto result = run_one(io, client, make_request(http::verb::post, "/payments", "p"));
    ASSERT_TRUE(result.has_value());
    EXPECT_EQ(result->final_decision, decision::success);
    EXPECT_EQ(result->attempts, 2u);
}

TEST(http_client, eof_after_write_is_reported_as_such) {
    asio::io_context io;
    http_test_server server{io};
    server.script({server_step::close(), server_step::respond(200)});
    http_client client{io.get_executor(), "127.0.0.1", server.port(), quick_policy(3)};
    const auto result = run_one(io, client, make_request(http::verb::get, "/kv/a"));
    ASSERT_TRUE(result.has_value());
    EXPECT_EQ(result->final_decision, decision::success);
    ASSERT_EQ(result->history.size(), 2u);
    EXPECT_EQ(result->history[0].outcome.kind, outcome_kind::eof_after_write);
}

TEST(http_client, connection_refused_is_retried_until_the_server_appears) {
    asio::io_context io;
    std::uint16_t port = 0;
    {
        // Bind, read the port back, close: nothing listens there now.
        asio::ip::tcp::acceptor probe{io, {asio::ip::make_address_v4("127.0.0.1"), 0}};
        port = probe.local_endpoint().port();
    }
    std::optional<http_test_server> server;
    http_client client{io.get_executor(), "127.0.0.1", port, quick_policy(4)};
    request_options options;
    options.on_decision = [&](const decision_event& e) {
        if (e.verdict == decision::retry && e.attempt == 2) server.emplace(io, port);
    };
    const auto result = run_one(io, client, make_request(http::verb::post, "/payments", "p"), options);
    ASSERT_TRUE(result.has_value());
    EXPECT_EQ(result->final_decision, decision::success);
    EXPECT_EQ(result->attempts, 3u);
    ASSERT_EQ(result->history.size(), 3u);
    EXPECT_EQ(result->history[0].outcome.kind, outcome_kind::connection_refused);
    EXPECT_EQ(result->history[1].outcome.kind, outcome_kind::connection_refused);
    EXPECT_EQ(result->history[2].outcome.status, 200);
}

TEST(http_client, connection_refused_exhausts_the_attempts) {
    asio::io_context io;
    std::uint16_t port = 0;
    {
        asio::ip::tcp::acceptor probe{io, {asio::ip::make_address_v4("127.0.0.1"), 0}};
        port = probe.local_endpoint().port();
    }
    http_client client{io.get_executor(), "127.0.0.1", port, quick_policy(3)};
    const auto result = run_one(io, client, make_request(http::verb::get, "/"));
    ASSERT_TRUE(result.has_value());
    EXPECT_EQ(result->final_decision, decision::attempts_exhausted);
    EXPECT_EQ(result->attempts, 3u);
    EXPECT_EQ(result->last_outcome.kind, outcome_kind::connection_refused);
}

TEST(http_client, retry_after_is_the_minimum_wait) {
    // The hook sees the chosen delay (the server's 2 s, not the 1 ms backoff); the test then cancels
    // the wait instead of sleeping through it.
    asio::io_context io;
    http_test_server server{io};
    server.script({server_step::respond(429, "slow down", {{"Retry-After", "2"}})});
    http_client client{io.get_executor(), "127.0.0.1", server.port(), quick_policy(3)};
    asio::cancellation_signal signal;
    std::vector<decision_event> events;
    request_options options;
    options.on_decision = [&](const decision_event& e) {
        events.push_back(e);
        if (e.verdict == decision::retry) asio::post(io, [&] { signal.emit(asio::cancellation_type::terminal); });
    };
    std::optional<http_result> result;
    client.async_request(make_request(http::verb::get, "/kv/a"), options,
                         asio::bind_cancellation_slot(signal.slot(), [&](http_result r) { result = std::move(r); }));
    run_until(io, [&] { return result.has_value(); });
    ASSERT_TRUE(result.has_value());
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[0].verdict, decision::retry);
    EXPECT_EQ(events[0].delay, 2s);
    EXPECT_EQ(events[1].verdict, decision::cancelled);
    EXPECT_EQ(result->final_decision, decision::cancelled);
    EXPECT_EQ(result->attempts, 1u);
    EXPECT_EQ(result->status, 429);
    EXPECT_EQ(result->body, "slow down");
    ASSERT_TRUE(result->history[0].outcome.retry_after.has_value());
    EXPECT_EQ(*result->history[0].outcome.retry_after, 2s);
    EXPECT_EQ(server.requests().size(), 1u);
}

TEST(http_client, retry_after_as_an_http_date_uses_the_clock_wall_time) {
    asio::io_context io;
    http_test_server server{io};
    manual_clock clk;
    const std::string date = format_http_date(clk.wall_now() + 5s);
    server.script({server_step::respond(503, {}, {{"Retry-After", date}})});
    // 5 s is above max_retry_after: the client gives up at once rather than waiting less.
    http_client client{io.get_executor(), "127.0.0.1", server.port(), quick_policy(3).with_max_retry_after(3s),
                       http_client_options{.clk = &clk, .max_idle_connections = 4, .body_limit = 1u << 20}};
    const auto result = run_one(io, client, make_request(http::verb::get, "/kv/a"));
    ASSERT_TRUE(result.has_value());
    EXPECT_EQ(result->final_decision, decision::retry_after_too_long);
    ASSERT_TRUE(result->last_outcome.retry_after.has_value());
    EXPECT_EQ(*result->last_outcome.retry_after, 5s);
}

TEST(http_client, retry_after_as_an_http_date_is_measured_from_the_response_date) {
    asio::io_context io;
    http_test_server server{io};
    manual_clock clk;
    // The server's clock is an hour behind ours: against our clock its date would be long past (0 s).
    const auto server_now = clk.wall_now() - 1h;
    server.script({server_step::respond(
        503, {}, {{"Date", format_http_date(server_now)}, {"Retry-After", format_http_date(server_now + 5s)}})});
    http_client client{io.get_executor(), "127.0.0.1", server.port(), quick_policy(3).with_max_retry_after(3s),
                       http_client_options{.clk = &clk, .max_idle_connections = 4, .body_limit = 1u << 20}};
    const auto result = run_one(io, client, make_request(http::verb::get, "/kv/a"));
    ASSERT_TRUE(result.has_value());
    EXPECT_EQ(result->final_decision, decision::retry_after_too_long);
    ASSERT_TRUE(result->last_outcome.retry_after.has_value());
    EXPECT_EQ(*result->last_outcome.retry_after, 5s);
}

TEST(http_client, retry_after_zero_retries_at_once) {
    asio::io_context io;
    http_test_server server{io};
    server.script({server_step::respond(503, {}, {{"Retry-After", "0"}}), server_step::respond(200, "fine")});
    http_client client{io.get_executor(), "127.0.0.1", server.port(), quick_policy(3)};
    const auto result = run_one(io, client, make_request(http::verb::get, "/kv/a"));
    ASSERT_TRUE(result.has_value());
    EXPECT_EQ(result->final_decision, decision::success);
    EXPECT_EQ(result->history[0].delay, 1ms);  // max(backoff 1 ms, Retry-After 0)
    EXPECT_EQ(result->body, "fine");
}

TEST(http_client, a_409_is_retried_only_when_the_key_is_in_use) {
    asio::io_context io;
    http_test_server server{io};
    http_client client{io.get_executor(), "127.0.0.1", server.port(), quick_policy(3)};

    server.script({server_step::respond(409, {}, {{"Faultline-Idempotency", "in-flight"}}), server_step::respond(200)});
    const auto in_use = run_one(io, client, make_request(http::verb::post, "/payments", "p"));
    ASSERT_TRUE(in_use.has_value());
    EXPECT_TRUE(in_use->history[0].outcome.idempotency_key_in_use);
    EXPECT_EQ(in_use->final_decision, decision::success);
    EXPECT_EQ(in_use->attempts, 2u);

    server.script({server_step::respond(409), server_step::respond(200)});
    const auto conflict = run_one(io, client, make_request(http::verb::post, "/payments", "p"));
    ASSERT_TRUE(conflict.has_value());
    EXPECT_EQ(conflict->final_decision, decision::not_retryable);
    EXPECT_EQ(conflict->status, 409);
}

TEST(http_client, cancellation_interrupts_a_hung_attempt) {
    asio::io_context io;
    http_test_server server{io};
    server.script({server_step::hang()});
    asio::cancellation_signal signal;
    // Once the server holds the request, the caller gives up.
    server.on_request([&](const testing::recorded_request&) {
        asio::post(io, [&] { signal.emit(asio::cancellation_type::terminal); });
    });
    http_client client{io.get_executor(), "127.0.0.1", server.port(), quick_policy(3)};
    std::optional<http_result> result;
    client.async_request(make_request(http::verb::put, "/kv/a", "v"), request_options{},
                         asio::bind_cancellation_slot(signal.slot(), [&](http_result r) { result = std::move(r); }));
    run_until(io, [&] { return result.has_value(); });
    ASSERT_TRUE(result.has_value());
    EXPECT_EQ(result->final_decision, decision::cancelled);
    EXPECT_EQ(result->attempts, 1u);
    EXPECT_EQ(result->last_outcome.kind, outcome_kind::cancelled);
    EXPECT_EQ(server.requests().size(), 1u);
}

TEST(http_client, concurrent_requests_use_separate_connections) {
    asio::io_context io;
    http_test_server server{io};
    http_client client{io.get_executor(), "127.0.0.1", server.port(), quick_policy(3)};
    std::vector<http_result> results;
    for (int i = 0; i < 3; ++i) {
        client.async_request(make_request(http::verb::get, "/kv/" + std::to_string(i)),
                             [&](http_result r) { results.push_back(std::move(r)); });
    }
    run_until(io, [&] { return results.size() == 3; });
    ASSERT_EQ(results.size(), 3u);
    for (const auto& r : results) EXPECT_EQ(r.final_decision, decision::success);
    EXPECT_EQ(server.requests().size(), 3u);
    EXPECT_EQ(static_cast<std::uint64_t>(server.accepted_connections()), client.connections_opened());
}

}  // namespace
}  // namespace faultline::retry
