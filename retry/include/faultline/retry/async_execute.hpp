// The asynchronous retry loop for Boost.Asio: the same `retry_state` as the synchronous `execute`
// (execute.hpp), driven by a C++20 coroutine, with backoff waits on an asio::steady_timer and an
// Asio completion-token interface, so it works with asio::use_awaitable, a plain callback, or
// asio::use_future:
//
//   auto result = co_await async_execute(executor, policy,
//       [&](const attempt_context& ctx) -> asio::awaitable<attempt_outcome> { co_return ...; },
//       execution_env{}, no_hook{}, asio::use_awaitable);
//
// The operation concept: `op(ctx)` with `const attempt_context&` returns
// `asio::awaitable<attempt_outcome>`. It is awaited on the loop's coroutine, so it must bound its own
// I/O by `ctx.timeout`. An exception escaping it becomes a `local_error` outcome (not retried).
// The hook is called as `hook(const decision_event&)` once per decision, on the executor, with the
// chosen delay for `retry`; it must not throw (it is called from a noexcept function).
// The completion signature is `void(execution_result)`; nothing is thrown across the boundary.
//
// Cancellation: the completion handler's cancellation slot (e.g. asio::bind_cancellation_slot, or
// the awaiting coroutine's own cancellation) is forwarded to the loop. A cancellation (terminal,
// partial or total) interrupts the current attempt's I/O or the backoff wait; the operation then
// ends with decision::cancelled — reported through the hook — and no further attempt starts. An
// attempt that succeeded before the cancellation took effect still counts as a success.
//
// Randomness: with `env.random` null, each operation owns a seeded mt19937_64 whose seed is drawn
// from this thread's `default_random()` when the operation starts, because the coroutine may resume
// on other threads of the executor and the thread_local default must never be shared between them.
// Waiting: the backoff wait is real time (the timer), whatever clock `env.clk` is; the injected clock
// only drives the deadline arithmetic.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

#include "faultline/core/clock.hpp"
#include "faultline/core/random.hpp"
#include "faultline/retry/execute.hpp"
#include "faultline/retry/idempotency.hpp"
#include "faultline/retry/outcome.hpp"
#include "faultline/retry/policy.hpp"
#include "faultline/retry/retry_state.hpp"

namespace faultline::retry {

namespace asio = boost::asio;

namespace async_detail {

inline bool is_cancelled(const asio::cancellation_state& state) {
    return state.cancelled() != asio::cancellation_type::none;
}

template <class Hook>
void report(Hook& hook, const decision_event& event) noexcept {
    hook(event);
}

template <class Op>
asio::awaitable<attempt_outcome> run_attempt(Op& op, const attempt_context& ctx) {
    try {
        co_return co_await op(ctx);
    } catch (...) {
        // Also reached when the operation awaits after a cancellation (Asio throws then).
        co_return attempt_outcome::transport(outcome_kind::local_error);
    }
}

// The loop itself, awaitable from another coroutine on the same executor.
template <class Op, class Hook>
asio::awaitable<execution_result> retry_loop(retry_policy policy, Op op, execution_env env, Hook hook) {
    // Cancellation is checked explicitly below; an exception would lose the decision.
    co_await asio::this_coro::throw_if_cancelled(false);
    // Accept every cancellation type, not only terminal (co_spawn's default filter).
    co_await asio::this_coro::reset_cancellation_state(asio::enable_total_cancellation());
    const asio::cancellation_state cancel = co_await asio::this_coro::cancellation_state;
    clock& clk = env.clk != nullptr ? *env.clk : steady_clock_source::instance();
    std::optional<seeded_random> own_random;
    if (env.random == nullptr) own_random.emplace(default_random().next());
    random_source& random = env.random != nullptr ? *env.random : *own_random;
    retry_state state{policy, clk, random, env.safety, env.deadline, env.key};
    asio::steady_timer timer{co_await asio::this_coro::executor};
    execution_result result;
    const auto finish_cancelled = [&] {
        result.final_decision = decision::cancelled;
        report(hook, decision_event{decision::cancelled, result.attempts, nullptr, duration{0}});
        return result;
    };
    // Bounded: every pass either returns or starts one more attempt, and retry_state stops at
    // max_attempts.
    for (;;) {
        if (is_cancelled(cancel)) co_return finish_cancelled();
        const attempt_plan plan = state.before_attempt();
        if (plan.stop) {
            result.final_decision = *plan.stop;
            report(hook, decision_event{*plan.stop, plan.attempt, nullptr, duration{0}});
            co_return result;
        }
        result.attempts = plan.attempt;
        const attempt_context ctx{plan.attempt, plan.timeout, plan.deadline_ms, plan.idempotency_key};
        result.last_outcome = co_await run_attempt(op, ctx);
        if (is_cancelled(cancel) && !result.last_outcome.succeeded()) {
            result.last_outcome = attempt_outcome::transport(outcome_kind::cancelled);
        }
        const step s = state.after_attempt(result.last_outcome);
        report(hook, decision_event{s.verdict, plan.attempt, &result.last_outcome, s.delay});
        if (s.verdict != decision::retry) {
            result.final_decision = s.verdict;
            co_return result;
        }
        // A cancellation that arrived while no I/O was pending (e.g. from the hook) must not
        // start the wait: nothing would interrupt it.
        if (is_cancelled(cancel)) co_return finish_cancelled();
        timer.expires_after(s.delay);
        co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    }
}

// Runs `work` (an awaitable producing T) with co_spawn and completes `token` with void(T), forwarding
// the handler's cancellation slot and executor. `work` handles its own errors, so the exception_ptr
// co_spawn reports is always null; should it not be, the handler still gets a value-initialised T.
template <class T>
struct spawn_initiation {
    template <class Handler>
    void operator()(Handler&& handler, asio::any_io_executor executor, asio::awaitable<T> work) const {
        auto slot = asio::get_associated_cancellation_slot(handler);
        auto handler_executor = asio::get_associated_executor(handler, executor);
        asio::co_spawn(executor, std::move(work),
                       asio::bind_cancellation_slot(
                           slot, asio::bind_executor(handler_executor,
                                                     [h = std::forward<Handler>(handler)](std::exception_ptr,
                                                                                          T value) mutable {
                                                         std::move(h)(std::move(value));
                                                     })));
    }
};

template <class T, class CompletionToken>
auto async_spawn(asio::any_io_executor executor, asio::awaitable<T> work, CompletionToken&& token) {
    return asio::async_initiate<CompletionToken, void(T)>(spawn_initiation<T>{}, token, std::move(executor),
                                                          std::move(work));
}

}  // namespace async_detail

// Runs `op` under `policy` on `executor`; completes `token` with void(execution_result). An invalid
// policy (validate) throws std::invalid_argument here, before anything is started.
// `policy` is copied into the operation; the budget and breaker it points to are shared.
template <class Executor, class Op, class Hook, class CompletionToken>
auto async_execute(const Executor& executor, const retry_policy& policy, Op op, execution_env env, Hook hook,
                   CompletionToken&& token) {
    static_assert(std::is_invocable_r_v<asio::awaitable<attempt_outcome>, Op&, const attempt_context&>,
                  "the operation must be callable as asio::awaitable<attempt_outcome>(const attempt_context&)");
    static_assert(std::is_invocable_v<Hook&, const decision_event&>,
                  "the hook must be callable as hook(const decision_event&)");
    // Here, not in the loop: inside the coroutine the exception would be lost (see spawn_initiation).
    validate(policy);
    return async_detail::async_spawn<execution_result>(
        asio::any_io_executor{executor},
        async_detail::retry_loop(policy, std::move(op), env, std::move(hook)),
        std::forward<CompletionToken>(token));
}

}  // namespace faultline::retry
