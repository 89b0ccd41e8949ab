#include "faultline/retry/execute.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include <string>
#include <thread>
#include <vector>

#include "alloc_counter.hpp"
#include "faultline/retry/deadline.hpp"
#include "faultline/retry/retry_after.hpp"

namespace faultline::retry {
namespace {

using namespace std::chrono_literals;

struct recorded_attempt {
    std::uint32_t attempt;
    std::optional<duration> timeout;
    std::optional<std::int64_t> deadline_ms;
    std::string key;
    time_point at;
};

// Plays a fixed list of outcomes and records what each attempt was given.
struct scripted_op {
    manual_clock& clock;
    std::vector<attempt_outcome> script;
    std::vector<recorded_attempt> seen{};

    attempt_outcome operator()(const attempt_context& ctx) {
        seen.push_back({ctx.attempt, ctx.timeout, ctx.deadline_ms, std::string{ctx.idempotency_key}, clock.now()});
        return script.at(seen.size() - 1);
    }
};

struct recording_hook {
    std::vector<decision_event>* events;
    void operator()(const decision_event& e) const { events->push_back(e); }
};

attempt_outcome with_retry_after(int status, duration d) {
    auto o = attempt_outcome::http(status);
    o.retry_after = d;
    return o;
}

class ExecuteTest : public ::testing::Test {
protected:
    manual_clock clock;
    sequence_random random = sequence_random::of_units({0.5});
    time_point start = clock.now();
    std::vector<decision_event> events;

    execution_env env(request_safety safety = request_safety::idempotent,
                      std::optional<time_point> deadline = std::nullopt) {
        return execution_env{&clock, &random, safety, deadline, std::nullopt};
    }
    recording_hook hook() { return recording_hook{&events}; }
};

TEST_F(ExecuteTest, SucceedsFirstTime) {
    scripted_op op{clock, {attempt_outcome::http(200)}};
    const auto r = execute(retry_policy{}, op, env(), hook());
    EXPECT_EQ(r.final_decision, decision::success);
    EXPECT_EQ(r.attempts, 1U);
    ASSERT_EQ(events.size(), 1U);
    EXPECT_EQ(events[0].verdict, decision::success);
    EXPECT_EQ(clock.now(), start);
}

TEST_F(ExecuteTest, AnInvalidPolicyThrowsBeforeAnyAttempt) {
    scripted_op op{clock, {attempt_outcome::http(503), attempt_outcome::http(200)}};
    const auto policy = retry_policy{}.with_backoff(
        backoff_policy{}.with_jitter(jitter_kind::proportional).with_jitter_fraction(std::nan("")));
    EXPECT_THROW(execute(policy, op, env(), hook()), std::invalid_argument);
    EXPECT_TRUE(events.empty());
    EXPECT_EQ(clock.now(), start);
}

TEST_F(ExecuteTest, RetriesWithBackoffUntilExhausted) {
    scripted_op op{clock, {attempt_outcome::http(503), attempt_outcome::http(502), attempt_outcome::http(500)}};
    const auto policy = retry_policy{}.with_max_attempts(3).with_backoff(
        backoff_policy{}.with_base(100ms).with_jitter(jitter_kind::full));
    const auto r = execute(policy, op, env(), hook());
    EXPECT_EQ(r.final_decision, decision::attempts_exhausted);
    EXPECT_EQ(r.attempts, 3U);
    EXPECT_EQ(r.last_outcome.status, 500);
    ASSERT_EQ(events.size(), 3U);
    EXPECT_EQ(events[0].verdict, decision::retry);
    EXPECT_EQ(events[0].delay, duration{50ms});   // U[0, 100ms) at 0.5
    EXPECT_EQ(events[1].delay, duration{100ms});  // U[0, 200ms) at 0.5
    EXPECT_EQ(events[2].verdict, decision::attempts_exhausted);
    EXPECT_EQ(events[2].outcome->status, 500);
    EXPECT_EQ(op.seen[1].at - start, duration{50ms});
    EXPECT_EQ(op.seen[2].at - start, duration{150ms});
    EXPECT_EQ(op.seen[2].attempt, 3U);
}

// Seed case: 200 ms left and a 500 ms backoff -> give up at once, without sleeping.
TEST_F(ExecuteTest, GivesUpImmediatelyWhenTheBackoffWouldPassTheDeadline) {
    scripted_op op{clock, {attempt_outcome::http(503), attempt_outcome::http(200)}};
    const auto policy = retry_policy{}.with_backoff(backoff_policy{}.with_base(500ms).with_jitter(jitter_kind::none));
    const auto r = execute(policy, op, env(request_safety::idempotent, start + 200ms), hook());
    EXPECT_EQ(r.final_decision, decision::deadline_exceeded);
    EXPECT_EQ(r.attempts, 1U);
    EXPECT_EQ(clock.now(), start);  // no sleep happened
    EXPECT_EQ(op.seen[0].deadline_ms, 200);
    EXPECT_EQ(op.seen[0].timeout, duration{200ms});
}

// Seed case: 400 and 404 are not retried.
TEST_F(ExecuteTest, ClientErrorsAreNotRetried) {
    for (const int status : {400, 404}) {
        scripted_op op{clock, {attempt_outcome::http(status), attempt_outcome::http(200)}};
        const auto r = execute(retry_policy{}, op, env());
        EXPECT_EQ(r.final_decision, decision::not_retryable) << status;
        EXPECT_EQ(r.attempts, 1U) << status;
    }
    EXPECT_EQ(clock.now(), start);
}

// Seed case: 429 with Retry-After: 2 waits at least 2 s.
TEST_F(ExecuteTest, RetryAfterSecondsIsAMinimumWait) {
    const auto ra = parse_retry_after("2", clock.wall_now());
    ASSERT_TRUE(ra);
    scripted_op op{clock, {with_retry_after(429, *ra), attempt_outcome::http(200)}};
    const auto r = execute(retry_policy{}, op, env(), hook());
    EXPECT_EQ(r.final_decision, decision::success);
    EXPECT_EQ(r.attempts, 2U);
    EXPECT_GE(op.seen[1].at - start, duration{2s});
    EXPECT_EQ(events[0].delay, duration{2s});  // max(backoff 50 ms, Retry-After 2 s)
}

// RFC 9110 §15.5.14: a 413 with Retry-After is temporary; the retry waits for it, even for a POST.
TEST_F(ExecuteTest, ContentTooLargeWithRetryAfterIsRetriedAfterTheWait) {
    scripted_op op{clock, {with_retry_after(413, 3s), attempt_outcome::http(200)}};
    const auto r = execute(retry_policy{}, op, env(request_safety::unsafe), hook());
    EXPECT_EQ(r.final_decision, decision::success);
    EXPECT_EQ(r.attempts, 2U);
    EXPECT_EQ(events[0].delay, duration{3s});
    EXPECT_EQ(op.seen[1].at - start, duration{3s});
}

TEST_F(ExecuteTest, ContentTooLargeWithoutRetryAfterIsFinal) {
    scripted_op op{clock, {attempt_outcome::http(413), attempt_outcome::http(200)}};
    const auto r = execute(retry_policy{}, op, env(), hook());
    EXPECT_EQ(r.final_decision, decision::not_retryable);
    EXPECT_EQ(r.attempts, 1U);
    EXPECT_EQ(clock.now(), start);
}

TEST_F(ExecuteTest, BackoffLongerThanRetryAfterWins) {
    scripted_op op{clock, {with_retry_after(503, 1s), attempt_outcome::http(200)}};
    const auto policy = retry_policy{}.with_backoff(backoff_policy{}.with_base(3s).with_jitter(jitter_kind::none));
    execute(policy, op, env(), hook());
    EXPECT_EQ(events[0].delay, duration{3s});
}

// Seed case: Retry-After as an HTTP-date.
TEST_F(ExecuteTest, RetryAfterHttpDate) {
    const auto header = format_http_date(clock.wall_now() + 3s);
    const auto ra = parse_retry_after(header, clock.wall_now());
    ASSERT_EQ(ra, duration{3s});
    scripted_op op{clock, {with_retry_after(503, *ra), attempt_outcome::http(200)}};
    const auto r = execute(retry_policy{}, op, env());
    EXPECT_EQ(r.final_decision, decision::success);
    EXPECT_EQ(op.seen[1].at - start, duration{3s});
}

TEST_F(ExecuteTest, RetryAfterAboveTheLimitGivesUp) {
    scripted_op op{clock, {with_retry_after(503, 61s), attempt_outcome::http(200)}};
    const auto r = execute(retry_policy{}.with_max_retry_after(60s), op, env());
    EXPECT_EQ(r.final_decision, decision::retry_after_too_long);
    EXPECT_EQ(clock.now(), start);
}

TEST_F(ExecuteTest, RetryAfterPastTheDeadlineGivesUpAtOnce) {
    scripted_op op{clock, {with_retry_after(429, 5s), attempt_outcome::http(200)}};
    const auto r = execute(retry_policy{}.with_overall_timeout(3s), op, env());
    EXPECT_EQ(r.final_decision, decision::deadline_exceeded);
    EXPECT_EQ(clock.now(), start);
}

TEST_F(ExecuteTest, RetryAfterCanBeIgnored) {
    scripted_op op{clock, {with_retry_after(503, 61s), attempt_outcome::http(200)}};
    const auto r = execute(retry_policy{}.with_honour_retry_after(false), op, env(), hook());
    EXPECT_EQ(r.final_decision, decision::success);
    EXPECT_EQ(events[0].delay, duration{50ms});
}

// Seed case: DeadlineExceeded is not retried.
TEST_F(ExecuteTest, DeadlineExceededOutcomeIsNotRetried) {
    scripted_op op{clock, {attempt_outcome::transport(outcome_kind::deadline_exceeded), attempt_outcome::http(200)}};
    const auto r = execute(retry_policy{}, op, env());
    EXPECT_EQ(r.final_decision, decision::deadline_exceeded);
    EXPECT_EQ(r.attempts, 1U);
}

TEST_F(ExecuteTest, CancellationIsNotRetried) {
    scripted_op op{clock, {attempt_outcome::transport(outcome_kind::cancelled), attempt_outcome::http(200)}};
    EXPECT_EQ(execute(retry_policy{}, op, env()).final_decision, decision::cancelled);
}

// Seed case: a POST without a key is not retried after a reset-after-write...
TEST_F(ExecuteTest, UnkeyedPostIsNotRetriedAfterResetAfterWrite) {
    scripted_op op{clock, {attempt_outcome::transport(outcome_kind::reset_after_write), attempt_outcome::http(201)}};
    const auto policy = retry_policy{}.with_keys(idempotency_options{}.with_auto_add(false));
    const auto r = execute(policy, op, env(request_safety::unsafe));
    EXPECT_EQ(r.final_decision, decision::not_retryable);
    EXPECT_EQ(r.attempts, 1U);
    EXPECT_TRUE(op.seen[0].key.empty());
}

// ...and is retried with a key, the same key on every attempt.
TEST_F(ExecuteTest, KeyedPostIsRetriedWithAStableKey) {
    scripted_op op{clock,
                   {attempt_outcome::transport(outcome_kind::reset_after_write),
                    attempt_outcome::transport(outcome_kind::timeout_after_write), attempt_outcome::http(201)}};
    const auto r = execute(retry_policy{}, op, env(request_safety::unsafe));
    EXPECT_EQ(r.final_decision, decision::success);
    ASSERT_EQ(op.seen.size(), 3U);
    const std::string& key = op.seen[0].key;
    ASSERT_EQ(key.size(), 38U);
    EXPECT_EQ(key.front(), '"');
    EXPECT_EQ(key.back(), '"');
    EXPECT_TRUE(is_uuid_v4(key.substr(1, 36))) << key;
    EXPECT_EQ(op.seen[1].key, key);
    EXPECT_EQ(op.seen[2].key, key);
}

// Keyed safety is what the key on the wire makes: declared without one, a key is generated (auto_add)...
TEST_F(ExecuteTest, KeyedSafetyWithoutAKeyGetsAGeneratedOne) {
    scripted_op op{clock, {attempt_outcome::transport(outcome_kind::reset_after_write), attempt_outcome::http(201)}};
    const auto r = execute(retry_policy{}, op, env(request_safety::idempotency_key));
    EXPECT_EQ(r.final_decision, decision::success);
    ASSERT_EQ(op.seen.size(), 2U);
    EXPECT_TRUE(is_uuid_v4(op.seen[0].key.substr(1, 36))) << op.seen[0].key;
    EXPECT_EQ(op.seen[1].key, op.seen[0].key);
}

// ...and with auto_add off none is sent, so the request is unsafe and an ambiguous failure not retried.
TEST_F(ExecuteTest, KeyedSafetyWithNoKeySentIsUnsafe) {
    scripted_op op{clock, {attempt_outcome::transport(outcome_kind::reset_after_write), attempt_outcome::http(201)}};
    const auto policy = retry_policy{}.with_keys(idempotency_options{}.with_auto_add(false));
    const auto r = execute(policy, op, env(request_safety::idempotency_key));
    EXPECT_EQ(r.final_decision, decision::not_retryable);
    EXPECT_EQ(r.attempts, 1U);
    EXPECT_TRUE(op.seen[0].key.empty());
}

TEST_F(ExecuteTest, IdempotentRequestsGetNoKey) {
    scripted_op op{clock, {attempt_outcome::http(200)}};
    execute(retry_policy{}, op, env(request_safety::idempotent));
    EXPECT_TRUE(op.seen[0].key.empty());
}

TEST_F(ExecuteTest, BareKeyFormat) {
    scripted_op op{clock, {attempt_outcome::http(200)}};
    execute(retry_policy{}.with_keys(idempotency_options{}.with_format(key_format::bare)), op,
            env(request_safety::unsafe));
    EXPECT_TRUE(is_uuid_v4(op.seen[0].key)) << op.seen[0].key;
}

TEST_F(ExecuteTest, AttemptTimeoutAndDeadlineHeaderShrink) {
    // Every attempt hangs for its whole timeout, then reports timeout_after_write.
    struct hanging_op {
        manual_clock& clock;
        std::vector<recorded_attempt> seen{};
        attempt_outcome operator()(const attempt_context& ctx) {
            seen.push_back({ctx.attempt, ctx.timeout, ctx.deadline_ms, {}, clock.now()});
            clock.advance(*ctx.timeout);
            return attempt_outcome::transport(outcome_kind::timeout_after_write);
        }
    } op{clock};
    const auto policy = retry_policy{}
                            .with_max_attempts(10)
                            .with_per_attempt_timeout(1s)
                            .with_overall_timeout(2500ms)
                            .with_backoff(backoff_policy{}.with_base(100ms).with_jitter(jitter_kind::none));
    const auto r = execute(policy, op, env(), hook());
    ASSERT_EQ(op.seen.size(), 3U);
    EXPECT_EQ(op.seen[0].timeout, duration{1s});
    EXPECT_EQ(op.seen[0].deadline_ms, 2500);
    EXPECT_EQ(op.seen[1].timeout, duration{1s});      // at 1.1 s
    EXPECT_EQ(op.seen[1].deadline_ms, 1400);
    EXPECT_EQ(op.seen[2].timeout, duration{200ms});   // at 2.3 s (after a 200 ms backoff): 200 ms left
    EXPECT_EQ(op.seen[2].deadline_ms, 200);
    EXPECT_EQ(r.final_decision, decision::deadline_exceeded);  // at 2.5 s, nothing left for a 400 ms backoff
    EXPECT_EQ(clock.now() - start, duration{2500ms});
}

TEST_F(ExecuteTest, NoAttemptStartsAtTheDeadline) {
    struct slow_op {
        manual_clock& clock;
        attempt_outcome operator()(const attempt_context&) {
            clock.advance(100ms);
            return attempt_outcome::http(200);
        }
    } op{clock};
    const auto r = execute(retry_policy{}, op, env(request_safety::idempotent, start), hook());
    EXPECT_EQ(r.final_decision, decision::deadline_exceeded);
    EXPECT_EQ(r.attempts, 0U);
    ASSERT_EQ(events.size(), 1U);
    EXPECT_EQ(events[0].outcome, nullptr);
    EXPECT_EQ(clock.now(), start);
}

TEST_F(ExecuteTest, EarlierOfExplicitDeadlineAndOverallTimeout) {
    scripted_op op{clock, {attempt_outcome::http(200), attempt_outcome::http(200)}};
    execute(retry_policy{}.with_overall_timeout(1s), op, env(request_safety::idempotent, start + 300ms));
    EXPECT_EQ(op.seen[0].deadline_ms, 300);
    execute(retry_policy{}.with_overall_timeout(100ms), op, env(request_safety::idempotent, start + 300ms));
    EXPECT_EQ(op.seen[1].deadline_ms, 100);
}

TEST_F(ExecuteTest, BudgetRefusalEndsTheOperation) {
    auto budget = std::make_shared<token_bucket_budget>(10, 0.1);
    for (int i = 0; i < 4; ++i) budget->on_failure();  // 6 tokens
    scripted_op op{clock, {attempt_outcome::http(503), attempt_outcome::http(503), attempt_outcome::http(200)}};
    const auto r = execute(retry_policy{}.with_budget(budget), op, env());
    // The first failure leaves 5 tokens: not above half, so the retry is refused at once.
    EXPECT_EQ(r.final_decision, decision::budget_exhausted);
    EXPECT_EQ(r.attempts, 1U);
    EXPECT_EQ(budget->refused(), 1U);
    EXPECT_EQ(clock.now(), start);
}

TEST_F(ExecuteTest, RatioBudgetDepositsOnlyFirstAttempts) {
    auto budget = std::make_shared<ratio_budget>(
        ratio_budget_options{}.with_percent_can_retry(0.5).with_min_retries_per_sec(0));
    const auto policy = retry_policy{}.with_budget(budget).with_max_attempts(5);
    scripted_op a{clock, {attempt_outcome::http(200)}};
    execute(policy, a, env());
    scripted_op b{clock, {attempt_outcome::http(200)}};
    execute(policy, b, env());
    scripted_op c{clock, {attempt_outcome::http(503), attempt_outcome::http(503), attempt_outcome::http(503)}};
    const auto r = execute(policy, c, env());
    // 3 deposits at 0.5 allow one retry: the second is refused.
    EXPECT_EQ(r.final_decision, decision::budget_exhausted);
    EXPECT_EQ(r.attempts, 2U);
    EXPECT_EQ(budget->allowed(), 1U);
    EXPECT_EQ(budget->refused(), 1U);
}

TEST_F(ExecuteTest, NonRetryableFailuresDoNotTouchTheBudget) {
    auto budget = std::make_shared<token_bucket_budget>(10, 0.1);
    scripted_op op{clock, {attempt_outcome::http(404)}};
    execute(retry_policy{}.with_budget(budget), op, env());
    EXPECT_EQ(budget->milli_tokens(), 10'000);
    EXPECT_EQ(budget->allowed() + budget->refused(), 0U);
}

TEST_F(ExecuteTest, OpenCircuitRefusesBeforeTheAttempt) {
    auto breaker = std::make_shared<circuit_breaker>(
        circuit_breaker_options{}.with_window_size(2).with_minimum_calls(2).with_open_duration(10s));
    const auto policy = retry_policy{}.with_breaker(breaker).with_max_attempts(5);
    scripted_op op{clock, {attempt_outcome::http(503), attempt_outcome::http(503), attempt_outcome::http(200)}};
    const auto r = execute(policy, op, env(), hook());
    EXPECT_EQ(r.final_decision, decision::circuit_open);
    EXPECT_EQ(r.attempts, 2U);
    EXPECT_EQ(events.back().verdict, decision::circuit_open);
    EXPECT_EQ(events.back().attempt, 3U);
    EXPECT_EQ(events.back().outcome, nullptr);
    EXPECT_EQ(breaker->times_opened(), 1U);
    EXPECT_EQ(breaker->rejected(), 1U);
}

TEST_F(ExecuteTest, RetryStateCanBeDrivenStepByStep) {
    const auto policy = retry_policy{}.with_overall_timeout(10s);
    retry_state state{policy, clock, random, request_safety::idempotent};
    const auto plan = state.before_attempt();
    ASSERT_FALSE(plan.stop);
    EXPECT_EQ(plan.attempt, 1U);
    const auto s = state.after_attempt(attempt_outcome::http(503));
    EXPECT_EQ(s.verdict, decision::retry);
    EXPECT_EQ(s.cls, classification::retryable);
    EXPECT_EQ(s.resume_at, start + s.delay);
    EXPECT_EQ(clock.now(), start);  // the state never sleeps
    clock.sleep_until(s.resume_at);
    EXPECT_EQ(state.before_attempt().attempt, 2U);
    EXPECT_EQ(state.attempts(), 2U);
}

TEST(ExecuteDefaults, SuccessPathAllocatesNothing) {
    const auto policy = retry_policy{}.with_overall_timeout(5s).with_per_attempt_timeout(1s);
    auto op = [](const attempt_context& ctx) {
        return attempt_outcome::http(ctx.attempt == 1 ? 200 : 500);
    };
    ASSERT_EQ(execute(policy, op).final_decision, decision::success);  // warm up thread_local state
    const long before = testing::allocation_count();
    int ok = 0;
    for (int i = 0; i < 1000; ++i) {
        ok += execute(policy, op).final_decision == decision::success ? 1 : 0;
        ok += execute(policy, op, execution_env{nullptr, nullptr, request_safety::unsafe, std::nullopt, std::nullopt}).final_decision ==
                      decision::success
                  ? 1
                  : 0;
    }
    EXPECT_EQ(testing::allocation_count() - before, 0);
    EXPECT_EQ(ok, 2000);
}

TEST(ExecuteDefaults, DefaultRandomIsPerThread) {
    random_source* mine = &default_random();
    random_source* other = nullptr;
    std::thread t{[&] { other = &default_random(); }};
    t.join();
    EXPECT_NE(mine, other);
    EXPECT_EQ(mine, &default_random());
}

}  // namespace
}  // namespace faultline::retry
