#include "faultline/retry/async_execute.hpp"

#include <gtest/gtest.h>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_future.hpp>

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <future>
#include <optional>
#include <vector>

namespace faultline::retry {
namespace {

using namespace std::chrono_literals;

constexpr auto run_bound = 10s;

// A fixed, jitter-free policy with tiny delays: 1 ms, 2 ms, 4 ms ...
retry_policy small_policy(std::uint32_t attempts) {
    return retry_policy{}.with_max_attempts(attempts).with_backoff(
        backoff_policy{}.with_base(1ms).with_cap(1s).with_jitter(jitter_kind::none));
}

struct recorded_event {
    decision verdict;
    std::uint32_t attempt;
    std::optional<outcome_kind> outcome;
    duration delay;
};

struct recording_hook {
    std::vector<recorded_event>* events;
    void operator()(const decision_event& e) const {
        events->push_back({e.verdict, e.attempt,
                           e.outcome != nullptr ? std::optional<outcome_kind>{e.outcome->kind} : std::nullopt,
                           e.delay});
    }
};

// Answers with the given statuses in turn, counting calls and recording each context.
struct scripted_op {
    std::vector<int> statuses;
    std::vector<attempt_context>* seen;
    asio::awaitable<attempt_outcome> operator()(const attempt_context& ctx) const {
        seen->push_back(ctx);
        const std::size_t i = seen->size() - 1;
        co_return attempt_outcome::http(i < statuses.size() ? statuses[i] : 200);
    }
};

TEST(async_execute, use_awaitable_retries_until_success_and_reports_delays) {
    asio::io_context io;
    manual_clock clk;
    std::vector<attempt_context> seen;
    std::vector<recorded_event> events;
    std::optional<execution_result> result;
    // Built outside the coroutine: GCC 12 rejects initializer lists inside a co_await expression.
    const scripted_op op{{503, 502}, &seen};
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
            result = co_await async_execute(io.get_executor(), small_policy(4), op,
                                            execution_env{&clk, nullptr, request_safety::idempotent, {}, {}},
                                            recording_hook{&events}, asio::use_awaitable);
        },
        asio::detached);
    io.run_for(run_bound);
    ASSERT_TRUE(result.has_value());
    EXPECT_EQ(result->final_decision, decision::success);
    EXPECT_EQ(result->attempts, 3u);
    ASSERT_EQ(seen.size(), 3u);
    EXPECT_EQ(seen[0].attempt, 1u);
    EXPECT_EQ(seen[2].attempt, 3u);
    ASSERT_EQ(events.size(), 3u);
    EXPECT_EQ(events[0].verdict, decision::retry);
    EXPECT_EQ(events[0].delay, 1ms);
    EXPECT_EQ(events[1].verdict, decision::retry);
    EXPECT_EQ(events[1].delay, 2ms);
    EXPECT_EQ(events[2].verdict, decision::success);
    EXPECT_EQ(events[2].delay, 0ns);
}

// Validated before the loop is spawned: thrown inside the coroutine, the error would have been lost
// and the handler given a value-initialised result ("success" after 0 attempts).
TEST(async_execute, an_invalid_policy_throws_to_the_caller) {
    asio::io_context io;
    std::vector<attempt_context> seen;
    auto policy = small_policy(3);
    policy.backoff.with_jitter(jitter_kind::proportional).with_jitter_fraction(std::nan(""));
    bool completed = false;
    EXPECT_THROW(async_execute(io.get_executor(), policy, scripted_op{{503}, &seen}, execution_env{}, no_hook{},
                               [&](execution_result) { completed = true; }),
                 std::invalid_argument);
    io.run_for(run_bound);
    EXPECT_FALSE(completed);
    EXPECT_TRUE(seen.empty());
}

TEST(async_execute, plain_callback_gets_the_result) {
    asio::io_context io;
    std::vector<attempt_context> seen;
    std::vector<recorded_event> events;
    std::optional<execution_result> result;
    async_execute(io.get_executor(), small_policy(2), scripted_op{{503, 503, 503}, &seen}, execution_env{},
                  recording_hook{&events}, [&](execution_result r) { result = r; });
    io.run_for(run_bound);
    ASSERT_TRUE(result.has_value());
    EXPECT_EQ(result->final_decision, decision::attempts_exhausted);
    EXPECT_EQ(result->attempts, 2u);
    EXPECT_EQ(result->last_outcome.status, 503);
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[1].verdict, decision::attempts_exhausted);
}

TEST(async_execute, use_future_gets_the_result) {
    asio::io_context io;
    std::vector<attempt_context> seen;
    std::future<execution_result> future = async_execute(
        io.get_executor(), small_policy(3), scripted_op{{404}, &seen}, execution_env{}, no_hook{}, asio::use_future);
    io.run_for(run_bound);
    ASSERT_EQ(future.wait_for(0s), std::future_status::ready);
    const execution_result result = future.get();
    EXPECT_EQ(result.final_decision, decision::not_retryable);
    EXPECT_EQ(result.attempts, 1u);
}

TEST(async_execute, gives_up_at_once_when_the_backoff_would_pass_the_deadline) {
    // The seed's case: 200 ms left and a 500 ms backoff -> deadline_exceeded, no sleep, no attempt 2.
    asio::io_context io;
    manual_clock clk;
    std::vector<attempt_context> seen;
    std::vector<recorded_event> events;
    std::optional<execution_result> result;
    const auto policy = retry_policy{}
                            .with_max_attempts(5)
                            .with_overall_timeout(200ms)
                            .with_backoff(backoff_policy{}.with_base(500ms).with_jitter(jitter_kind::none));
    async_execute(io.get_executor(), policy, scripted_op{{503}, &seen},
                  execution_env{&clk, nullptr, request_safety::idempotent, {}, {}}, recording_hook{&events},
                  [&](execution_result r) { result = r; });
    io.run_for(run_bound);
    ASSERT_TRUE(result.has_value());
    EXPECT_EQ(result->final_decision, decision::deadline_exceeded);
    EXPECT_EQ(seen.size(), 1u);
    ASSERT_TRUE(seen[0].deadline_ms.has_value());
    EXPECT_EQ(*seen[0].deadline_ms, 200);
}

TEST(async_execute, an_exception_from_the_operation_is_a_local_error) {
    asio::io_context io;
    std::optional<execution_result> result;
    int calls = 0;
    auto op = [&](const attempt_context&) -> asio::awaitable<attempt_outcome> {
        ++calls;
        throw std::runtime_error{"boom"};
        co_return attempt_outcome::http(200);
    };
    async_execute(io.get_executor(), small_policy(3), op, execution_env{}, no_hook{},
                  [&](execution_result r) { result = r; });
    io.run_for(run_bound);
    ASSERT_TRUE(result.has_value());
    EXPECT_EQ(result->final_decision, decision::not_retryable);
    EXPECT_EQ(result->last_outcome.kind, outcome_kind::local_error);
    EXPECT_EQ(calls, 1);
}

TEST(async_execute, cancellation_during_an_attempt_ends_with_cancelled) {
    asio::io_context io;
    asio::cancellation_signal signal;
    std::vector<recorded_event> events;
    std::optional<execution_result> result;
    int calls = 0;
    auto op = [&](const attempt_context&) -> asio::awaitable<attempt_outcome> {
        ++calls;
        asio::steady_timer long_wait{io, 1h};
        // Runs once this coroutine is suspended on the timer.
        asio::post(io, [&] { signal.emit(asio::cancellation_type::terminal); });
        co_await long_wait.async_wait(asio::use_awaitable);
        co_return attempt_outcome::http(200);
    };
    async_execute(io.get_executor(), small_policy(3), op, execution_env{}, recording_hook{&events},
                  asio::bind_cancellation_slot(signal.slot(), [&](execution_result r) { result = r; }));
    io.run_for(run_bound);
    ASSERT_TRUE(result.has_value());
    EXPECT_EQ(result->final_decision, decision::cancelled);
    EXPECT_EQ(result->last_outcome.kind, outcome_kind::cancelled);
    EXPECT_EQ(calls, 1);
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].verdict, decision::cancelled);
    EXPECT_EQ(events[0].outcome, outcome_kind::cancelled);
}

TEST(async_execute, cancellation_during_the_backoff_wait_starts_no_new_attempt) {
    asio::io_context io;
    asio::cancellation_signal signal;
    std::vector<recorded_event> events;
    std::optional<execution_result> result;
    int calls = 0;
    auto op = [&](const attempt_context&) -> asio::awaitable<attempt_outcome> {
        ++calls;
        // Runs once the loop is suspended in its (one hour) backoff wait.
        asio::post(io, [&] { signal.emit(asio::cancellation_type::terminal); });
        co_return attempt_outcome::http(503);
    };
    const auto policy =
        retry_policy{}.with_max_attempts(3).with_backoff(
            backoff_policy{}.with_base(1h).with_cap(2h).with_jitter(jitter_kind::none));
    async_execute(io.get_executor(), policy, op, execution_env{}, recording_hook{&events},
                  asio::bind_cancellation_slot(signal.slot(), [&](execution_result r) { result = r; }));
    io.run_for(run_bound);
    ASSERT_TRUE(result.has_value());
    EXPECT_EQ(result->final_decision, decision::cancelled);
    EXPECT_EQ(calls, 1);
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[0].verdict, decision::retry);
    EXPECT_EQ(events[0].delay, 1h);
    EXPECT_EQ(events[1].verdict, decision::cancelled);
    EXPECT_FALSE(events[1].outcome.has_value());
}

TEST(async_execute, a_cancelled_awaiting_coroutine_cancels_the_loop) {
    // The cancellation reaches the loop through use_awaitable: the parent coroutine is cancelled.
    asio::io_context io;
    asio::cancellation_signal signal;
    std::optional<execution_result> result;
    auto op = [&](const attempt_context&) -> asio::awaitable<attempt_outcome> {
        asio::post(io, [&] { signal.emit(asio::cancellation_type::terminal); });
        co_return attempt_outcome::http(503);
    };
    const auto policy = retry_policy{}.with_max_attempts(3).with_backoff(
        backoff_policy{}.with_base(1h).with_cap(2h).with_jitter(jitter_kind::none));
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
            result = co_await async_execute(io.get_executor(), policy, op, execution_env{}, no_hook{},
                                            asio::use_awaitable);
        },
        asio::bind_cancellation_slot(signal.slot(), asio::detached));
    io.run_for(run_bound);
    ASSERT_TRUE(result.has_value());
    EXPECT_EQ(result->final_decision, decision::cancelled);
    EXPECT_EQ(result->attempts, 1u);
}

}  // namespace
}  // namespace faultline::retry
