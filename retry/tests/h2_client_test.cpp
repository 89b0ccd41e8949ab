// The retry client over HTTP/2 cleartext (h2c by prior knowledge) against a scripted nghttp2 server:
// streams multiplexed on one connection, the stream limit, and each HTTP/2 way of failing mapped to
// the outcome that decides whether an unkeyed POST may be sent again.
#include "faultline/retry/http_client.hpp"

#include <gtest/gtest.h>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "faultline/retry/idempotency.hpp"
#include "h2_test_server.hpp"

namespace faultline::retry {
namespace {

using namespace std::chrono_literals;
namespace h2 = testing::h2;

constexpr auto run_bound = 10s;

retry_policy quick_policy(std::uint32_t attempts) {
    return retry_policy{}.with_max_attempts(attempts).with_backoff(
        backoff_policy{}.with_base(1ms).with_cap(1s).with_jitter(jitter_kind::none));
}

retry_policy unkeyed(retry_policy policy) { return policy.with_keys(idempotency_options{}.with_auto_add(false)); }

http_client_options h2c_options() {
    http_client_options options;
    options.protocol = http_protocol::http2;
    return options;
}

http_request make_request(http::verb method, std::string target, std::string body = {}) {
    http_request request;
    request.method = method;
    request.target = std::move(target);
    request.body = std::move(body);
    return request;
}

template <class Done>
bool run_until(asio::io_context& io, Done done) {
    const auto until = std::chrono::steady_clock::now() + run_bound;
    io.restart();
    while (!done() && std::chrono::steady_clock::now() < until) io.run_one_until(until);
    return done();
}

std::optional<http_result> run_one(asio::io_context& io, http_client& client, http_request request) {
    std::optional<http_result> result;
    client.async_request(std::move(request), [&](http_result r) { result = std::move(r); });
    run_until(io, [&] { return result.has_value(); });
    return result;
}

TEST(h2_client, a_request_over_h2c_carries_the_retry_headers_and_gets_its_response) {
    asio::io_context io;
    h2::server server{io};
    server.script({h2::step::respond(201, "created")});
    manual_clock clk;
    http_client_options options = h2c_options();
    options.clk = &clk;
    http_client client{io.get_executor(), "127.0.0.1", server.port(), quick_policy(3).with_overall_timeout(10s), options};
    const std::string body = R"({"amount":1700})";
    const auto result = run_one(io, client, make_request(http::verb::post, "/payments", body));
    ASSERT_TRUE(result.has_value());
    EXPECT_EQ(result->final_decision, decision::success);
    EXPECT_EQ(result->status, 201);
    EXPECT_EQ(result->body, "created");
    EXPECT_EQ(result->headers.at(http::field::content_length), "7");
    ASSERT_EQ(server.requests().size(), 1u);
    const h2::request& seen = server.requests()[0];
    EXPECT_EQ(seen.method, "POST");
    EXPECT_EQ(seen.path, "/payments");
    EXPECT_EQ(seen.body, body);
    EXPECT_EQ(seen.headers.at(":scheme"), "http");
    EXPECT_EQ(seen.headers.at(":authority"), "127.0.0.1");
    EXPECT_EQ(seen.headers.at("faultline-attempt"), "1");
    EXPECT_EQ(seen.headers.at("faultline-deadline-ms"), "10000");
    EXPECT_TRUE(is_uuid_v4(seen.headers.at("idempotency-key").substr(1, idempotency_key::size)));
    // HTTP/1.1's connection-specific fields are not sent (RFC 9113 8.2.2).
    EXPECT_EQ(seen.headers.count("host"), 0u);
    EXPECT_EQ(seen.headers.count("connection"), 0u);
    EXPECT_EQ(client.connections_opened(), 1u);
}

TEST(h2_client, concurrent_requests_are_streams_of_one_connection) {
    constexpr std::size_t requests = 5;
    asio::io_context io;
    h2::server server{io};
    // No reply until all five are in: they can only all arrive if they are in flight at once.
    server.hold_replies_until(requests);
    http_client client{io.get_executor(), "127.0.0.1", server.port(), quick_policy(1), h2c_options()};
    std::vector<http_result> results;
    for (std::size_t i = 0; i < requests; ++i) {
        client.async_request(make_request(http::verb::get, "/kv/" + std::to_string(i)),
                             [&](http_result r) { results.push_back(std::move(r)); });
    }
    ASSERT_TRUE(run_until(io, [&] { return results.size() == requests; }));
    for (const auto& r : results) EXPECT_EQ(r.status, 200);
    EXPECT_EQ(client.connections_opened(), 1u);
    EXPECT_EQ(server.accepted_connections(), 1);
    ASSERT_EQ(server.requests().size(), requests);
    for (const auto& r : server.requests()) EXPECT_EQ(r.connection, 1);
}

TEST(h2_client, a_request_beyond_the_servers_stream_limit_opens_another_connection) {
    asio::io_context io;
    h2::server server{io, 1};
    server.hold_replies_until(2);
    http_client client{io.get_executor(), "127.0.0.1", server.port(), quick_policy(1), h2c_options()};
    std::vector<http_result> results;
    const auto collect = [&](http_result r) { results.push_back(std::move(r)); };
    // The second request starts once the client has applied the server's SETTINGS (limit 1).
    bool second_started = false;
    server.on_settings_acked([&] {
        if (std::exchange(second_started, true)) return;
        asio::post(io, [&] { client.async_request(make_request(http::verb::get, "/kv/b"), collect); });
    });
    client.async_request(make_request(http::verb::get, "/kv/a"), collect);
    ASSERT_TRUE(run_until(io, [&] { return results.size() == 2; }));
    for (const auto& r : results) EXPECT_EQ(r.status, 200);
    EXPECT_EQ(client.connections_opened(), 2u);
    EXPECT_EQ(server.accepted_connections(), 2);
}

TEST(h2_client, a_refused_stream_is_retried_even_for_a_post_without_a_key) {
    asio::io_context io;
    h2::server server{io};
    server.script({h2::step::refuse(), h2::step::respond(201, "created")});
    http_client client{io.get_executor(), "127.0.0.1", server.port(), unkeyed(quick_policy(3)), h2c_options()};
    const auto result = run_one(io, client, make_request(http::verb::post, "/payments", "p"));
    ASSERT_TRUE(result.has_value());
    EXPECT_EQ(result->final_decision, decision::success);
    ASSERT_EQ(result->history.size(), 2u);
    EXPECT_EQ(result->history[0].outcome.kind, outcome_kind::reset_before_write);
    EXPECT_EQ(result->history[0].verdict, decision::retry);
    ASSERT_EQ(server.requests().size(), 2u);
    EXPECT_EQ(server.requests()[0].headers.count("idempotency-key"), 0u);
    // The refused stream leaves the connection usable: the retry is its next stream.
    EXPECT_EQ(server.requests()[1].connection, 1);
    EXPECT_EQ(server.requests()[1].stream, 3);
}

TEST(h2_client, a_stream_reset_after_the_request_was_read_is_not_retried_for_a_post_without_a_key) {
    for (const h2::step& reset : {h2::step::reset(NGHTTP2_CANCEL), h2::step::reset(NGHTTP2_INTERNAL_ERROR),
                                  h2::step::headers_then_reset(NGHTTP2_CANCEL)}) {
        SCOPED_TRACE(static_cast<int>(reset.kind) * 100 + static_cast<int>(reset.code));
        asio::io_context io;
        h2::server server{io};
        server.script({reset, h2::step::respond(201)});
        http_client client{io.get_executor(), "127.0.0.1", server.port(), unkeyed(quick_policy(3)), h2c_options()};
        const auto post = run_one(io, client, make_request(http::verb::post, "/payments", "p"));
        ASSERT_TRUE(post.has_value());
        EXPECT_EQ(post->final_decision, decision::not_retryable);
        EXPECT_EQ(post->attempts, 1u);
        EXPECT_EQ(post->last_outcome.kind, outcome_kind::reset_after_write);
        EXPECT_EQ(server.requests().size(), 1u);
    }
}

TEST(h2_client, a_stream_reset_after_the_request_was_read_is_retried_with_a_key) {
    asio::io_context io;
    h2::server server{io};
    server.script({h2::step::reset(NGHTTP2_CANCEL), h2::step::respond(201)});
    http_client client{io.get_executor(), "127.0.0.1", server.port(), quick_policy(3), h2c_options()};
    const auto post = run_one(io, client, make_request(http::verb::post, "/payments", "p"));
    ASSERT_TRUE(post.has_value());
    EXPECT_EQ(post->final_decision, decision::success);
    EXPECT_EQ(post->history[0].outcome.kind, outcome_kind::reset_after_write);
    ASSERT_EQ(server.requests().size(), 2u);
    EXPECT_EQ(server.requests()[0].headers.at("idempotency-key"), server.requests()[1].headers.at("idempotency-key"));
}

TEST(h2_client, a_goaway_below_the_stream_is_retried_on_a_new_connection_for_a_post_without_a_key) {
    asio::io_context io;
    h2::server server{io};
    server.script({h2::step::goaway_before(), h2::step::respond(201, "created")});
    http_client client{io.get_executor(), "127.0.0.1", server.port(), unkeyed(quick_policy(3)), h2c_options()};
    const auto result = run_one(io, client, make_request(http::verb::post, "/payments", "p"));
    ASSERT_TRUE(result.has_value());
    EXPECT_EQ(result->final_decision, decision::success);
    ASSERT_EQ(result->history.size(), 2u);
    EXPECT_EQ(result->history[0].outcome.kind, outcome_kind::reset_before_write);
    EXPECT_EQ(result->body, "created");
    ASSERT_EQ(server.requests().size(), 2u);
    EXPECT_EQ(server.requests()[1].connection, 2);
    EXPECT_EQ(client.connections_opened(), 2u);
}

TEST(h2_client, a_goaway_covering_the_stream_then_the_end_of_the_connection_is_eof_after_write) {
    asio::io_context io;
    h2::server server{io};
    server.script({h2::step::goaway_after(), h2::step::respond(201)});
    http_client client{io.get_executor(), "127.0.0.1", server.port(), unkeyed(quick_policy(3)), h2c_options()};
    const auto post = run_one(io, client, make_request(http::verb::post, "/payments", "p"));
    ASSERT_TRUE(post.has_value());
    EXPECT_EQ(post->final_decision, decision::not_retryable);
    EXPECT_EQ(post->last_outcome.kind, outcome_kind::eof_after_write);
    EXPECT_EQ(server.requests().size(), 1u);
}

TEST(h2_client, the_per_attempt_timeout_cancels_the_stream_and_the_connection_carries_the_retry) {
    asio::io_context io;
    h2::server server{io};
    server.script({h2::step::hang(), h2::step::respond(200, "done")});
    http_client client{io.get_executor(), "127.0.0.1", server.port(),
                       quick_policy(3).with_per_attempt_timeout(200ms), h2c_options()};
    const auto result = run_one(io, client, make_request(http::verb::put, "/kv/a", "v"));
    ASSERT_TRUE(result.has_value());
    EXPECT_EQ(result->final_decision, decision::success);
    ASSERT_EQ(result->history.size(), 2u);
    EXPECT_EQ(result->history[0].outcome.kind, outcome_kind::timeout_after_write);
    EXPECT_EQ(result->body, "done");
    ASSERT_TRUE(run_until(io, [&] { return !server.client_resets().empty(); }));
    const auto reset = server.client_resets().find({1, 1});
    ASSERT_NE(reset, server.client_resets().end());
    EXPECT_EQ(reset->second, static_cast<std::uint32_t>(NGHTTP2_CANCEL));
    // Only the stream was given up, not the connection.
    EXPECT_EQ(client.connections_opened(), 1u);
    EXPECT_EQ(server.requests()[1].stream, 3);
}

TEST(h2_client, cancellation_resets_the_stream) {
    asio::io_context io;
    h2::server server{io};
    server.script({h2::step::hang()});
    http_client client{io.get_executor(), "127.0.0.1", server.port(), quick_policy(3), h2c_options()};
    asio::cancellation_signal signal;
    std::optional<http_result> result;
    client.async_request(make_request(http::verb::get, "/kv/a"), request_options{},
                         asio::bind_cancellation_slot(signal.slot(), [&](http_result r) { result = std::move(r); }));
    ASSERT_TRUE(run_until(io, [&] { return !server.requests().empty(); }));
    signal.emit(asio::cancellation_type::terminal);
    ASSERT_TRUE(run_until(io, [&] { return result.has_value() && !server.client_resets().empty(); }));
    EXPECT_EQ(result->final_decision, decision::cancelled);
    EXPECT_EQ(result->last_outcome.kind, outcome_kind::cancelled);
    EXPECT_EQ(server.client_resets().begin()->second, static_cast<std::uint32_t>(NGHTTP2_CANCEL));
}

TEST(h2_client, a_response_body_over_the_limit_resets_the_stream_as_reset_after_write) {
    asio::io_context io;
    h2::server server{io};
    server.script({h2::step::respond(200, std::string(64, 'x'))});
    http_client_options options = h2c_options();
    options.body_limit = 16;
    http_client client{io.get_executor(), "127.0.0.1", server.port(), unkeyed(quick_policy(3)), options};
    const auto result = run_one(io, client, make_request(http::verb::post, "/payments", "p"));
    ASSERT_TRUE(result.has_value());
    EXPECT_EQ(result->final_decision, decision::not_retryable);
    EXPECT_EQ(result->last_outcome.kind, outcome_kind::reset_after_write);
    EXPECT_EQ(result->status, 0);
    ASSERT_TRUE(run_until(io, [&] { return !server.client_resets().empty(); }));
    EXPECT_EQ(server.client_resets().begin()->second, static_cast<std::uint32_t>(NGHTTP2_CANCEL));
}

// An idle HTTP/2 connection keeps a read pending; the client's destruction closes it, so the
// executor is not kept busy by a client that is gone.
TEST(h2_client, destroying_the_client_closes_its_idle_connection) {
    asio::io_context io;
    h2::server server{io};
    std::optional<http_client> client{std::in_place, io.get_executor(), "127.0.0.1", server.port(), quick_policy(1),
                                      h2c_options()};
    const auto result = run_one(io, *client, make_request(http::verb::get, "/kv/a"));
    ASSERT_TRUE(result.has_value());
    EXPECT_EQ(result->status, 200);
    EXPECT_EQ(server.closed_connections(), 0);
    client.reset();
    EXPECT_TRUE(run_until(io, [&] { return server.closed_connections() == 1; }));
}

TEST(h2_client, a_server_that_is_gone_is_connection_refused) {
    asio::io_context io;
    std::uint16_t port = 0;
    {
        asio::ip::tcp::acceptor probe{io, {asio::ip::make_address_v4("127.0.0.1"), 0}};
        port = probe.local_endpoint().port();
    }
    http_client client{io.get_executor(), "127.0.0.1", port, quick_policy(2), h2c_options()};
    const auto result = run_one(io, client, make_request(http::verb::post, "/payments", "p"));
    ASSERT_TRUE(result.has_value());
    EXPECT_EQ(result->final_decision, decision::attempts_exhausted);
    EXPECT_EQ(result->last_outcome.kind, outcome_kind::connection_refused);
    EXPECT_EQ(client.connections_opened(), 0u);
}

}  // namespace
}  // namespace faultline::retry
