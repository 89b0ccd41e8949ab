// The shared vocabulary of the retry library: what one attempt ended with (`attempt_outcome`) and
// what the retry loop decided next (`decision`). Every decision is named, so callers and reports can
// count them; none is a bare bool.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

namespace faultline::retry {

// How an attempt ended, as far as the client can tell. Transport outcomes are split by whether the
// request could have reached the server's application: that decides whether a non-idempotent
// request may be re-sent.
enum class outcome_kind {
    response,               // an HTTP response arrived; see `status`
    connection_refused,     // never reached the server: safe to retry for any method
    reset_before_write,     // reset or EOF before any request byte was written: safe for any method
    reset_after_write,      // reset after the request was (partly) written: the server may have acted
    eof_after_write,        // EOF with no response after the request was written
    timeout_after_write,    // the per-attempt timeout fired while waiting for the response
    deadline_exceeded,      // the overall deadline passed: never retried
    cancelled,              // the caller cancelled: never retried
    local_error,            // the operation failed locally (bad URL, resolve failure); never retried
};

std::string_view to_string(outcome_kind kind);

struct attempt_outcome {
    outcome_kind kind = outcome_kind::response;
    int status = 0;  // HTTP status when kind == response
    // The server asked the client to wait at least this long (Retry-After, already parsed).
    std::optional<std::chrono::nanoseconds> retry_after;
    // A 409 that means "a request with this idempotency key is still in flight" (retry it later),
    // as opposed to an ordinary conflict (never retried).
    bool idempotency_key_in_use = false;

    static attempt_outcome http(int status_code) { return {outcome_kind::response, status_code, {}, false}; }
    static attempt_outcome transport(outcome_kind k) { return {k, 0, {}, false}; }
    bool succeeded() const { return kind == outcome_kind::response && status >= 200 && status < 400; }
};

// What the retry loop decided after an attempt (or before one).
enum class decision {
    success,             // the attempt succeeded; the operation is done
    retry,               // another attempt will be made after `delay`
    attempts_exhausted,  // max_attempts reached
    not_retryable,       // the outcome is permanent (4xx, or unsafe to repeat for this method)
    budget_exhausted,    // the shared retry budget refused the retry
    deadline_exceeded,   // no time left for the wait or the next attempt
    retry_after_too_long,// the server asked for a wait longer than max_retry_after
    circuit_open,        // the circuit breaker refused the attempt
    cancelled,           // the caller cancelled
};

std::string_view to_string(decision d);

}  // namespace faultline::retry
