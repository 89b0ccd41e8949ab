#include "faultline/retry/retry_state.hpp"

#include <algorithm>

#include "faultline/retry/deadline.hpp"

namespace faultline::retry {

namespace {

std::optional<time_point> combine_deadline(std::optional<time_point> explicit_deadline,
                                           std::optional<duration> overall_timeout, clock& clk) {
    if (!overall_timeout) return explicit_deadline;  // no clock read needed
    const time_point now = clk.now();
    // Saturate: a huge timeout must not wrap the time point into the past.
    const time_point from_timeout =
        *overall_timeout >= time_point::max() - now ? time_point::max() : now + *overall_timeout;
    return explicit_deadline ? std::min(*explicit_deadline, from_timeout) : from_timeout;
}

call_result breaker_result(classification c) {
    switch (c) {
        case classification::success:
        case classification::not_retryable: return call_result::success;  // the dependency answered
        case classification::retryable:
        case classification::unsafe_to_repeat: return call_result::failure;
        case classification::deadline_exceeded:
        case classification::cancelled: return call_result::ignored;
    }
    return call_result::ignored;
}

}  // namespace

retry_state::retry_state(const retry_policy& policy, clock& clk, random_source& random, request_safety safety,
                         std::optional<time_point> deadline, std::optional<idempotency_key> key)
    : policy_{policy},
      clock_{clk},
      random_{random},
      safety_{safety},
      deadline_{combine_deadline(deadline, policy.overall_timeout, clk)},
      key_{key},
      backoff_{policy.backoff} {
    const bool needs_key = safety_ != request_safety::idempotent;
    if (!key_ && needs_key && policy_.keys.auto_add) key_ = idempotency_key::generate(random_);
    // The safety a key gives holds only with the key on the wire: declared keyed but sent without
    // one, the request is what it is without it (a server cannot deduplicate its retries).
    if (key_) {
        header_ = key_header_value{*key_, policy_.keys.format};
        if (safety_ == request_safety::unsafe) safety_ = request_safety::idempotency_key;
    } else if (safety_ == request_safety::idempotency_key) {
        safety_ = request_safety::unsafe;
    }
}

attempt_plan retry_state::before_attempt() {
    attempt_plan plan;
    plan.attempt = attempts_ + 1;
    // The clock is read only when something needs the time: the bare success path stays cheap.
    if (!deadline_ && !policy_.breaker && !policy_.budget) {
        attempts_ = plan.attempt;
        plan.timeout = policy_.per_attempt_timeout;
        plan.idempotency_key = header_.view();
        return plan;
    }
    const time_point now = clock_.now();
    if (deadline_ && now >= *deadline_) {
        plan.stop = decision::deadline_exceeded;
        return plan;
    }
    if (policy_.breaker && !policy_.breaker->try_acquire(now)) {
        plan.stop = decision::circuit_open;
        return plan;
    }
    in_flight_ = policy_.breaker != nullptr;
    // Only first attempts deposit: the budget limits retries as a share of original requests.
    if (attempts_ == 0 && policy_.budget) policy_.budget->on_request(now);
    attempts_ = plan.attempt;
    plan.timeout = attempt_timeout(policy_.per_attempt_timeout, deadline_, now);
    if (deadline_) plan.deadline_ms = deadline_header_ms(remaining(*deadline_, now));
    plan.idempotency_key = header_.view();
    return plan;
}

step retry_state::after_attempt(const attempt_outcome& outcome) {
    step s;
    s.cls = policy_.classify.classify(outcome, safety_);
    // Read the clock only when the breaker or a retry needs it (not on the bare success path).
    std::optional<time_point> read_now;
    const auto now = [&] { return read_now ? *read_now : *(read_now = clock_.now()); };
    if (in_flight_) {
        policy_.breaker->record(now(), breaker_result(s.cls));
        in_flight_ = false;
    }
    if (policy_.budget) {
        if (s.cls == classification::success) policy_.budget->on_success();
        if (s.cls == classification::retryable) policy_.budget->on_failure();
    }
    switch (s.cls) {
        case classification::success: s.verdict = decision::success; return s;
        case classification::not_retryable:
        case classification::unsafe_to_repeat: s.verdict = decision::not_retryable; return s;
        case classification::deadline_exceeded: s.verdict = decision::deadline_exceeded; return s;
        case classification::cancelled: s.verdict = decision::cancelled; return s;
        case classification::retryable: break;
    }
    if (attempts_ >= std::max<std::uint32_t>(policy_.max_attempts, 1)) {
        s.verdict = decision::attempts_exhausted;
        return s;
    }
    duration delay = backoff_.next(random_);
    if (policy_.honour_retry_after && outcome.retry_after) {
        if (*outcome.retry_after > policy_.max_retry_after) {
            s.verdict = decision::retry_after_too_long;
            return s;
        }
        delay = std::max(delay, *outcome.retry_after);
    }
    // No sleep may end at or past the deadline: there would be no time left for the attempt.
    if (deadline_ && delay >= remaining(*deadline_, now())) {
        s.verdict = decision::deadline_exceeded;
        return s;
    }
    // Last, so that retries refused for any other reason never consume the budget.
    if (policy_.budget && !policy_.budget->try_withdraw_retry(now())) {
        s.verdict = decision::budget_exhausted;
        return s;
    }
    s.verdict = decision::retry;
    s.delay = delay;
    s.resume_at = now() + delay;
    return s;
}

}  // namespace faultline::retry
