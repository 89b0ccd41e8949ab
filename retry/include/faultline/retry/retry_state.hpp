// The retry loop as a pure state machine. The synchronous `execute` (execute.hpp) and the
// asynchronous Asio loop (async_execute.hpp) both drive one `retry_state` per operation:
//
//   retry_state state{policy, clock, random, safety, deadline};
//   for (;;) {
//       attempt_plan plan = state.before_attempt();
//       if (plan.stop) -> finished with *plan.stop (circuit_open or deadline_exceeded)
//       attempt_outcome out = <run the attempt with plan.timeout, plan headers>;
//       step s = state.after_attempt(out);
//       if (s.verdict != decision::retry) -> finished with s.verdict
//       <sleep until s.resume_at>            (the only waiting; the state never blocks)
//   }
//
// Rules:
// - max_attempts counts every attempt, the first included.
// - No attempt starts at or after the deadline, and no sleep begins that would end at or after it:
//   the operation ends at once with deadline_exceeded (the seed's "200 ms left, 500 ms backoff").
// - Retry-After (when honoured) is a minimum wait: delay = max(backoff, retry_after). A Retry-After
//   above max_retry_after ends the operation with retry_after_too_long (giving up is safer than
//   quietly waiting less than the server asked); one that would end past the deadline ends it with
//   deadline_exceeded.
// - The budget: each first attempt deposits (on_request); each success / retryable failure is
//   reported; a retry must be withdrawn last, after every other check passed, so refused or
//   pointless retries never consume it. A refusal ends the operation with budget_exhausted.
// - The breaker (optional) is asked before every attempt and told every attempt's result.
// - A non-idempotent request without a key gets a key when policy.keys.auto_add is on, and is then
//   treated as keyed (safe to repeat); the same key is used on every attempt. Safety
//   `idempotency_key` without a key (none given, none generated) is `unsafe`: no key is sent.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "faultline/core/clock.hpp"
#include "faultline/core/random.hpp"
#include "faultline/retry/backoff.hpp"
#include "faultline/retry/idempotency.hpp"
#include "faultline/retry/outcome.hpp"
#include "faultline/retry/policy.hpp"

namespace faultline::retry {

// What to do for the next attempt.
struct attempt_plan {
    // Set when the attempt must not start: circuit_open or deadline_exceeded.
    std::optional<decision> stop;
    std::uint32_t attempt = 0;                // 1-based; the Faultline-Attempt header value
    std::optional<duration> timeout;          // min(per_attempt, remaining); nullopt = unbounded
    std::optional<std::int64_t> deadline_ms;  // Faultline-Deadline-Ms value; nullopt without deadline
    std::string_view idempotency_key;         // Idempotency-Key header value (formatted); empty = none
};

// The decision after an attempt.
struct step {
    decision verdict = decision::success;
    duration delay{0};       // the wait before the next attempt (verdict == retry), else 0
    time_point resume_at{};  // now + delay when verdict == retry
    classification cls = classification::success;
};

// One operation's retry state. Holds references to the policy, clock and random source, which must
// outlive it. Not thread-safe (one operation = one logical thread of control; the shared budget and
// breaker are thread-safe themselves). Never blocks and never allocates.
class retry_state {
public:
    // `safety` is the request's own safety; `deadline` an absolute deadline (the earlier of it and
    // now + policy.overall_timeout applies). `key`, if given, is used instead of generating one.
    retry_state(const retry_policy& policy, clock& clk, random_source& random, request_safety safety,
                std::optional<time_point> deadline = std::nullopt,
                std::optional<idempotency_key> key = std::nullopt);

    attempt_plan before_attempt();
    step after_attempt(const attempt_outcome& outcome);

    std::uint32_t attempts() const { return attempts_; }  // attempts started so far
    std::optional<time_point> deadline() const { return deadline_; }
    request_safety safety() const { return safety_; }     // after any automatic key
    const std::optional<idempotency_key>& key() const { return key_; }
    std::string_view key_header() const { return header_.view(); }

private:
    const retry_policy& policy_;
    clock& clock_;
    random_source& random_;
    request_safety safety_;
    std::optional<time_point> deadline_;
    std::optional<idempotency_key> key_;
    key_header_value header_;
    backoff backoff_;
    std::uint32_t attempts_ = 0;
    bool in_flight_ = false;  // an attempt was admitted by the breaker and not yet recorded
};

}  // namespace faultline::retry
