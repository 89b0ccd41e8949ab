// The synchronous retry loop: runs an operation under a retry_policy, sleeping between attempts
// through the injected clock (`clock::sleep_until`), and reports every decision to a hook.
//
//   auto result = execute(policy, [&](const attempt_context& ctx) {
//       return call_service(ctx.attempt, ctx.timeout, ctx.idempotency_key);  // -> attempt_outcome
//   });
//   if (result.final_decision != decision::success) ...
//
// The success path allocates nothing (no std::function, no strings): the operation and the hook are
// template parameters and the state lives on the stack. The asynchronous version for Asio is in
// async_execute.hpp; both drive the same `retry_state`.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

#include "faultline/core/clock.hpp"
#include "faultline/core/random.hpp"
#include "faultline/retry/outcome.hpp"
#include "faultline/retry/policy.hpp"
#include "faultline/retry/retry_state.hpp"

namespace faultline::retry {

// What the operation gets for one attempt.
struct attempt_context {
    std::uint32_t attempt = 1;                // 1-based (Faultline-Attempt)
    std::optional<duration> timeout;          // bound this attempt by it; nullopt = unbounded
    std::optional<std::int64_t> deadline_ms;  // Faultline-Deadline-Ms; nullopt without a deadline
    std::string_view idempotency_key;         // formatted Idempotency-Key value; empty = none
};

// One decision, as the hook sees it. `outcome` is null for decisions taken before an attempt
// (circuit_open, deadline_exceeded before starting); `delay` is the wait for `retry`, else 0.
struct decision_event {
    decision verdict = decision::success;
    std::uint32_t attempt = 0;
    const attempt_outcome* outcome = nullptr;
    duration delay{0};
};

struct no_hook {
    void operator()(const decision_event&) const noexcept {}
};

// Injected dependencies and per-operation facts. Null clock / random mean the defaults: the
// process-wide steady clock and a thread_local mt19937_64 (`default_random()`).
struct execution_env {
    clock* clk = nullptr;
    random_source* random = nullptr;
    request_safety safety = request_safety::idempotent;
    std::optional<time_point> deadline;  // absolute; combined with policy.overall_timeout
    std::optional<idempotency_key> key;  // a caller-supplied key, used instead of a generated one
};

struct execution_result {
    decision final_decision = decision::success;
    std::uint32_t attempts = 0;      // attempts started
    attempt_outcome last_outcome{};  // the last attempt's outcome (default if none ran)
};

// This thread's default random source: a mt19937_64 constructed on first use in each thread, seeded
// with mix64(default_seed, n) where n counts threads that used it, so a single-threaded program is
// reproducible. thread_local, so never shared between threads (random_source is not thread-safe).
inline constexpr std::uint64_t default_seed = 0x6661756c746c696eULL;  // "faultlin"
random_source& default_random();

template <class Op, class Hook = no_hook>
execution_result execute(const retry_policy& policy, Op&& op, execution_env env = {}, Hook&& hook = {}) {
    static_assert(std::is_invocable_r_v<attempt_outcome, Op&, const attempt_context&>,
                  "the operation must be callable as attempt_outcome(const attempt_context&)");
    validate(policy);
    clock& clk = env.clk != nullptr ? *env.clk : steady_clock_source::instance();
    random_source& random = env.random != nullptr ? *env.random : default_random();
    retry_state state{policy, clk, random, env.safety, env.deadline, env.key};
    execution_result result;
    // Bounded: every pass either returns or starts one more attempt, and retry_state stops at
    // max_attempts.
    for (;;) {
        const attempt_plan plan = state.before_attempt();
        if (plan.stop) {
            result.final_decision = *plan.stop;
            hook(decision_event{*plan.stop, plan.attempt, nullptr, duration{0}});
            return result;
        }
        result.attempts = plan.attempt;
        result.last_outcome = op(attempt_context{plan.attempt, plan.timeout, plan.deadline_ms, plan.idempotency_key});
        const step s = state.after_attempt(result.last_outcome);
        hook(decision_event{s.verdict, plan.attempt, &result.last_outcome, s.delay});
        if (s.verdict != decision::retry) {
            result.final_decision = s.verdict;
            return result;
        }
        clk.sleep_until(s.resume_at);
    }
}

}  // namespace faultline::retry
