#include "faultline/drivers/builtin_driver.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "faultline/retry/idempotency.hpp"

namespace faultline::drivers {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;
using namespace std::chrono_literals;

// One request as the test server saw it.
struct seen_request {
    std::string method;
    std::string target;
    std::string body;
    std::map<std::string, std::string> headers;  // only the ones tests look at
    int attempt = 0;                             // the server's own count per Faultline-Op
};

// What the test server does with an attempt.
struct reply {
    enum class kind { respond, close, hang } action = kind::respond;
    int status = 200;
    std::string retry_after;
};

// A tiny HTTP/1.1 server on 127.0.0.1:0 with scripted replies, on its own thread. Counts attempts
// per Faultline-Op value and the most requests it ever held at once.
class test_server {
public:
    using script = std::function<reply(const seen_request&)>;

    explicit test_server(script s) : script_{std::move(s)}, acceptor_{io_, tcp::endpoint{asio::ip::make_address("127.0.0.1"), 0}} {
        asio::co_spawn(io_, accept(), asio::detached);
        thread_ = std::thread{[this] { io_.run(); }};
    }
    ~test_server() {
        io_.stop();
        thread_.join();
    }

    std::uint16_t port() const { return acceptor_.local_endpoint().port(); }
    std::vector<seen_request> requests() const {
        const std::lock_guard lock{mutex_};
        return requests_;
    }
    int peak_in_flight() const { return peak_.load(); }

private:
    asio::awaitable<void> accept() {
        for (;;) {
            auto [ec, socket] = co_await acceptor_.async_accept(asio::as_tuple(asio::use_awaitable));
            if (ec) co_return;
            asio::co_spawn(io_, session(std::move(socket)), asio::detached);
        }
    }

    asio::awaitable<void> session(tcp::socket socket) {
        beast::flat_buffer buffer;
        for (;;) {
            http::request<http::string_body> req;
            auto [ec, n] = co_await http::async_read(socket, buffer, req, asio::as_tuple(asio::use_awaitable));
            if (ec) co_return;
            seen_request seen{std::string(req.method_string()), std::string(req.target()), req.body(), {}, 0};
            for (const char* name : {"Idempotency-Key", "Faultline-Op", "Faultline-Attempt", "Faultline-Deadline-Ms", "X-Trace"}) {
                if (auto it = req.find(name); it != req.end()) seen.headers[name] = std::string(it->value());
            }
            {
                const std::lock_guard lock{mutex_};
                seen.attempt = ++attempts_[seen.headers["Faultline-Op"]];
                requests_.push_back(seen);
            }
            const int now = ++in_flight_;
            int peak = peak_.load();
            while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
            }
            const reply r = script_(seen);
            if (r.action == reply::kind::hang) {
                asio::steady_timer forever{socket.get_executor(), asio::steady_timer::time_point::max()};
                co_await forever.async_wait(asio::as_tuple(asio::use_awaitable));
                co_return;
            }
            if (r.action == reply::kind::close) {
                --in_flight_;
                co_return;
            }
            http::response<http::string_body> res{static_cast<http::status>(r.status), 11};
            if (!r.retry_after.empty()) res.set(http::field::retry_after, r.retry_after);
            res.body() = "{}";
            res.keep_alive(req.keep_alive());
            res.prepare_payload();
            --in_flight_;
            auto [wec, written] = co_await http::async_write(socket, res, asio::as_tuple(asio::use_awaitable));
            if (wec || !req.keep_alive()) co_return;
        }
    }

    script script_;
    asio::io_context io_;
    tcp::acceptor acceptor_;
    std::thread thread_;
    mutable std::mutex mutex_;
    std::vector<seen_request> requests_;
    std::map<std::string, int> attempts_;
    std::atomic<int> in_flight_{0};
    std::atomic<int> peak_{0};
};

reply ok(const seen_request&) { return reply{}; }

builtin_config parse_builtin(std::string_view text) {
    toml::table doc = toml::parse(text, std::string_view{"t.toml"});
    config_errors errors;
    config::table_reader reader{*doc["client"].as_table(), "t.toml", "[client]", errors};
    auto c = parse_builtin_config(reader);
    reader.finish();
    for (const auto& e : errors) ADD_FAILURE() << e.to_string();
    return c.value_or(builtin_config{});
}

driver_result run_against(const test_server& server, const builtin_config& config, std::uint64_t seed = 42,
                          duration limit = 20s, builtin_stats* stats = nullptr) {
    clock& clk = steady_clock_source::instance();
    const std::string url = "http://127.0.0.1:" + std::to_string(server.port());
    builtin_driver d{config};
    auto r = d.run(driver_context{"127.0.0.1", server.port(), url, seed, clk, clk.now(), limit});
    if (stats != nullptr) *stats = d.last_stats();
    return r;
}

// Fast retries for tests.
constexpr std::string_view fast_backoff = R"(
[client.policy.backoff]
base = "1ms"
cap = "4ms"
)";

TEST(BuiltinDriver, CompletesEveryOperationWithARecord) {
    test_server server{ok};
    const auto config = parse_builtin(R"(
[client]
clients = 3
operations = 4
[[client.request]]
method = "POST"
path = "/payments/{client}/{n}"
body = '{"op":{op}}'
headers = { "X-Trace" = "t{op}" }
)");
    builtin_stats stats;
    const auto r = run_against(server, config, 42, 20s, &stats);
    EXPECT_TRUE(r.error.empty()) << r.error;
    EXPECT_FALSE(r.timed_out);
    EXPECT_FALSE(r.command.has_value());
    ASSERT_EQ(r.clients.size(), 12u);
    EXPECT_EQ(stats.operations_started, 12u);
    EXPECT_EQ(stats.operations_finished, 12u);

    const auto seen = server.requests();
    ASSERT_EQ(seen.size(), 12u);
    std::map<std::string, seen_request> by_op;
    for (const auto& s : seen) by_op[s.headers.at("Faultline-Op")] = s;

    std::set<std::string> identities;
    for (const auto& rec : r.clients) {
        EXPECT_TRUE(rec.success);
        EXPECT_EQ(rec.decision, "success");
        EXPECT_EQ(rec.attempts, 1u);
        EXPECT_EQ(rec.attempt_outcomes, "200");
        EXPECT_EQ(rec.method, "POST");
        EXPECT_LE(rec.started_ns, rec.finished_ns);
        ASSERT_TRUE(rec.deadline_ns.has_value());
        EXPECT_EQ(*rec.deadline_ns, rec.started_ns + std::chrono::nanoseconds{5s}.count());
        // A POST gets a key; the identity is the key the server saw (its quotes removed).
        EXPECT_TRUE(retry::is_uuid_v4(rec.operation)) << rec.operation;
        identities.insert(rec.operation.str());

        const std::uint64_t client = std::stoull(rec.client.str());
        const std::string target_prefix = "/payments/" + rec.client + "/";
        ASSERT_EQ(rec.target.str().rfind(target_prefix, 0), 0u) << rec.target;
        const std::uint64_t n = std::stoull(rec.target.str().substr(target_prefix.size()));
        const std::uint64_t op = n * 3 + client;
        const auto& s = by_op.at(operation_name(client, n));
        EXPECT_EQ(s.headers.at("Idempotency-Key"), "\"" + rec.operation + "\"");
        EXPECT_EQ(s.headers.at("Faultline-Attempt"), "1");
        EXPECT_TRUE(s.headers.contains("Faultline-Deadline-Ms"));
        EXPECT_EQ(s.headers.at("X-Trace"), "t" + std::to_string(op));
        EXPECT_EQ(s.body, "{\"op\":" + std::to_string(op) + "}");
        EXPECT_EQ(s.target, rec.target);
    }
    EXPECT_EQ(identities.size(), 12u);
}

TEST(BuiltinDriver, RetriesAndRecordsEveryAttempt) {
    test_server server{[](const seen_request& s) { return s.attempt < 3 ? reply{reply::kind::respond, 503, ""} : reply{}; }};
    const auto config = parse_builtin(std::string(R"(
[client]
clients = 2
operations = 2
)") + std::string(fast_backoff));
    const auto r = run_against(server, config);
    ASSERT_EQ(r.clients.size(), 4u);
    for (const auto& rec : r.clients) {
        EXPECT_TRUE(rec.success);
        EXPECT_EQ(rec.attempts, 3u);
        EXPECT_EQ(rec.attempt_outcomes, "503, 503, 200");
    }
    const auto seen = server.requests();
    ASSERT_EQ(seen.size(), 12u);
    std::map<std::string, std::set<std::string>> keys_by_op;
    for (const auto& s : seen) keys_by_op[s.headers.at("Faultline-Op")].insert(s.headers.at("Idempotency-Key"));
    ASSERT_EQ(keys_by_op.size(), 4u);
    for (const auto& [op, keys] : keys_by_op) EXPECT_EQ(keys.size(), 1u) << op << ": one stable key across attempts";
}

TEST(BuiltinDriver, IdempotentRequestsAreNamedByTheOperationHeader) {
    test_server server{ok};
    const auto config = parse_builtin(R"(
[client]
clients = 2
operations = 1
[[client.request]]
method = "GET"
path = "/kv/{op}"
)");
    const auto r = run_against(server, config);
    ASSERT_EQ(r.clients.size(), 2u);
    std::set<std::string> names;
    for (const auto& rec : r.clients) names.insert(rec.operation.str());
    EXPECT_EQ(names, (std::set<std::string>{"c0-n0", "c1-n0"}));
    for (const auto& s : server.requests()) EXPECT_FALSE(s.headers.contains("Idempotency-Key"));
}

TEST(BuiltinDriver, KeysReplayWithTheSeed) {
    test_server server{ok};
    const auto config = parse_builtin("[client]\nclients = 2\noperations = 2\n");
    const auto keys = [&](std::uint64_t seed) {
        std::set<std::string> out;
        for (const auto& rec : run_against(server, config, seed).clients) out.insert(rec.operation.str());
        return out;
    };
    EXPECT_EQ(keys(1), keys(1));
    EXPECT_NE(keys(1), keys(2));
}

TEST(BuiltinDriver, NaivePresetRetriesAPostWithoutAKeyOnEveryError) {
    test_server server{[](const seen_request&) { return reply{reply::kind::respond, 400, ""}; }};
    const auto config = parse_builtin("[client]\npreset = \"naive\"\nclients = 2\n");
    const auto r = run_against(server, config);
    ASSERT_EQ(r.clients.size(), 2u);
    for (const auto& rec : r.clients) {
        EXPECT_FALSE(rec.success);
        EXPECT_EQ(rec.attempts, 5u);
        EXPECT_EQ(rec.decision, "attempts_exhausted");
        EXPECT_EQ(rec.attempt_outcomes, "400, 400, 400, 400, 400");
        EXPECT_TRUE(rec.deadline_ns.has_value());  // declared, not enforced
        EXPECT_EQ(rec.operation.str().rfind("c", 0), 0u);  // no key: named by Faultline-Op
    }
    const auto seen = server.requests();
    EXPECT_EQ(seen.size(), 10u);
    for (const auto& s : seen) {
        EXPECT_FALSE(s.headers.contains("Idempotency-Key"));
        EXPECT_FALSE(s.headers.contains("Faultline-Deadline-Ms"));
    }
}

TEST(BuiltinDriver, NoKeysPresetResendsAPostAfterALostResponse) {
    // The first attempt of every operation is read and then the connection closes: the response is lost.
    const auto script = [](const seen_request& s) { return s.attempt == 1 ? reply{reply::kind::close, 0, ""} : reply{}; };
    {
        test_server server{script};
        const auto r = run_against(server, parse_builtin(std::string("[client]\npreset = \"no_keys\"\n") + std::string(fast_backoff)));
        ASSERT_EQ(r.clients.size(), 1u);
        EXPECT_TRUE(r.clients[0].success);
        EXPECT_EQ(r.clients[0].attempt_outcomes, "eof_after_write, 200");
        EXPECT_EQ(r.clients[0].operation, "c0-n0");
        ASSERT_EQ(server.requests().size(), 2u);
        for (const auto& s : server.requests()) EXPECT_FALSE(s.headers.contains("Idempotency-Key"));
    }
    {
        // Without keys and without the misbehaviour the POST is (rightly) not re-sent.
        test_server server{script};
        const auto r = run_against(server, parse_builtin("[client.policy]\nidempotency_keys = \"none\"\n"));
        ASSERT_EQ(r.clients.size(), 1u);
        EXPECT_FALSE(r.clients[0].success);
        EXPECT_EQ(r.clients[0].decision, "not_retryable");
        EXPECT_EQ(server.requests().size(), 1u);
    }
    {
        // The good client re-sends it safely, with its key.
        test_server server{script};
        const auto r = run_against(server, parse_builtin(std::string("[client]\n") + std::string(fast_backoff)));
        ASSERT_EQ(r.clients.size(), 1u);
        EXPECT_TRUE(r.clients[0].success);
        const auto seen = server.requests();
        ASSERT_EQ(seen.size(), 2u);
        EXPECT_EQ(seen[0].headers.at("Idempotency-Key"), seen[1].headers.at("Idempotency-Key"));
    }
}

TEST(BuiltinDriver, IgnoresDeadlineRecordsTheDeadlineButDoesNotPropagateIt) {
    test_server server{ok};
    const auto r = run_against(server, parse_builtin("[client]\npreset = \"ignores_deadline\"\n"));
    ASSERT_EQ(r.clients.size(), 1u);
    ASSERT_TRUE(r.clients[0].deadline_ns.has_value());
    ASSERT_EQ(server.requests().size(), 1u);
    EXPECT_FALSE(server.requests()[0].headers.contains("Faultline-Deadline-Ms"));
}

TEST(BuiltinDriver, StopsAtTheTimeLimit) {
    test_server server{[](const seen_request&) { return reply{reply::kind::hang, 0, ""}; }};
    const auto config = parse_builtin(R"(
[client]
clients = 3
operations = 100
[client.policy]
per_attempt_timeout = "1h"
overall_timeout = "none"
)");
    const auto r = run_against(server, config, 1, 200ms);
    EXPECT_TRUE(r.error.empty()) << r.error;
    EXPECT_TRUE(r.timed_out);
    // Each lane had one operation in flight when the limit came; none started after it.
    ASSERT_EQ(r.clients.size(), 3u);
    for (const auto& rec : r.clients) {
        EXPECT_EQ(rec.decision, "cancelled");
        EXPECT_FALSE(rec.success);
    }
}

TEST(BuiltinDriver, ConcurrencyIsBounded) {
    test_server server{ok};
    const auto config = parse_builtin("[client]\nclients = 6\noperations = 5\nconcurrency = 2\n");
    const auto r = run_against(server, config);
    EXPECT_EQ(r.clients.size(), 30u);
    EXPECT_LE(server.peak_in_flight(), 2);
    EXPECT_EQ(server.requests().size(), 30u);
}

TEST(BuiltinDriver, RateWorkloadStartsExactlyItsOperations) {
    test_server server{ok};
    const auto config = parse_builtin("[client]\nclients = 4\nrate = 500\nduration = \"20ms\"\n");
    ASSERT_EQ(total_operations(config.load), 10u);
    const auto r = run_against(server, config);
    ASSERT_EQ(r.clients.size(), 10u);
    std::set<std::string> names;
    for (const auto& s : server.requests()) names.insert(s.headers.at("Faultline-Op"));
    std::set<std::string> expected;
    for (std::uint64_t op = 0; op < 10; ++op) expected.insert(operation_name(op % 4, op / 4));
    EXPECT_EQ(names, expected);
}

TEST(BuiltinDriver, WeightedTemplatesAreChosenFromTheSeed) {
    test_server server{ok};
    const auto config = parse_builtin(R"(
[client]
operations = 40
order = "weighted"
[[client.request]]
method = "GET"
path = "/a/{op}"
weight = 3
[[client.request]]
method = "GET"
path = "/b/{op}"
weight = 1
)");
    const auto targets = [&](std::uint64_t seed) {
        std::set<std::string> out;
        for (const auto& rec : run_against(server, config, seed).clients) out.insert(rec.target.str());
        return out;
    };
    const auto first = targets(5);
    EXPECT_EQ(first, targets(5));
    EXPECT_EQ(first.size(), 40u);
    const auto as = std::count_if(first.begin(), first.end(), [](const std::string& t) { return t.rfind("/a/", 0) == 0; });
    EXPECT_GT(as, 0);
    EXPECT_LT(as, 40);
}

TEST(BuiltinDriver, SharesOneBudgetAcrossClients) {
    test_server server{[](const seen_request&) { return reply{reply::kind::respond, 503, ""}; }};
    const auto config = parse_builtin(std::string(R"(
[client]
clients = 10
[client.policy]
max_attempts = 5
budget = { kind = "token_bucket", max_tokens = 4, token_ratio = 0.1 }
)") + std::string(fast_backoff));
    builtin_stats stats;
    const auto r = run_against(server, config, 3, 20s, &stats);
    ASSERT_EQ(r.clients.size(), 10u);
    // 4 tokens: retries are allowed while tokens > 2, i.e. after the first 2 failures only.
    EXPECT_EQ(stats.retries_allowed, 1u);
    EXPECT_GE(stats.retries_refused, 1u);
    EXPECT_EQ(server.requests().size(), 11u);
}

TEST(BuiltinDriver, TwoThreadsRunTheSameWorkload) {
    test_server server{[](const seen_request& s) { return s.attempt == 1 ? reply{reply::kind::respond, 502, ""} : reply{}; }};
    const auto config = parse_builtin(std::string("[client]\nclients = 8\noperations = 5\nthreads = 2\n") +
                                      std::string(fast_backoff));
    const auto r = run_against(server, config);
    EXPECT_TRUE(r.error.empty()) << r.error;
    ASSERT_EQ(r.clients.size(), 40u);
    std::set<std::string> identities;
    for (const auto& rec : r.clients) {
        EXPECT_TRUE(rec.success);
        EXPECT_EQ(rec.attempt_outcomes, "502, 200");
        identities.insert(rec.operation.str());
    }
    EXPECT_EQ(identities.size(), 40u);
    EXPECT_EQ(server.requests().size(), 80u);
}

TEST(BuiltinDriver, SharesOneCircuitBreaker) {
    test_server server{[](const seen_request&) { return reply{reply::kind::respond, 503, ""}; }};
    const auto config = parse_builtin(R"(
[client]
operations = 5
[client.policy]
max_attempts = 1
circuit_breaker = { window_size = 2, minimum_calls = 2, failure_ratio = 0.5, open_duration = "1h" }
)");
    builtin_stats stats;
    const auto r = run_against(server, config, 1, 20s, &stats);
    ASSERT_EQ(r.clients.size(), 5u);
    EXPECT_EQ(r.clients[0].decision, "attempts_exhausted");
    EXPECT_EQ(r.clients[1].decision, "attempts_exhausted");
    for (std::size_t i = 2; i < 5; ++i) {
        EXPECT_EQ(r.clients[i].decision, "circuit_open");
        EXPECT_EQ(r.clients[i].attempts, 0u);
        EXPECT_TRUE(r.clients[i].attempt_outcomes.empty());
    }
    EXPECT_EQ(stats.breaker_opened, 1u);
    EXPECT_EQ(server.requests().size(), 2u);
}

}  // namespace
}  // namespace faultline::drivers
