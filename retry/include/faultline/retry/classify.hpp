// Classification: is an attempt's outcome worth another attempt, and is it *safe* to send the request
// again? The answer depends on the outcome and on the request's safety (idempotent method, or an
// idempotency key the server deduplicates on). The status defaults are the standard profile of the
// status table (status_rules.hpp, one row per status with its RFC 9110 section); every status is
// configurable.
//
// Rules (defaults):
// - 2xx/3xx: success.
// - Retryable statuses {408, 429, 500, 502, 503, 504}. Of these, 408, 429 and 503 say the server did
//   not process the request (`unprocessed` set) and are retryable for any request. 500, 502 and 504 may
//   come after the server acted, so for an unsafe request (non-idempotent, no key) they are
//   `unsafe_to_repeat`.
// - Retryable only under a condition, then for any request (the server did not act): 413 when the
//   response carries Retry-After (the wait is honoured like any Retry-After), 409 when the outcome says
//   it is an idempotency "key in use" conflict (the first request with that key is in flight).
// - Never retried {400, 401, 403, 404, 405, 410, 414, 415, 422, 431, 451, 501, 505}, nor 409 and 413
//   without their condition.
// - Any other status: not retryable.
// - connection_refused, reset_before_write: retryable for any request (the server never saw it).
// - reset_after_write, eof_after_write, timeout_after_write: retryable only for idempotent or keyed
//   requests, otherwise `unsafe_to_repeat`.
// - deadline_exceeded and cancelled: never retried (their own classifications); local_error: not
//   retryable.
#pragma once

#include <bitset>
#include <initializer_list>
#include <optional>
#include <string_view>

#include "faultline/retry/outcome.hpp"
#include "faultline/retry/status_rules.hpp"

namespace faultline::retry {

// Whether the request may be sent twice without a second effect.
enum class request_safety {
    unsafe,           // non-idempotent method, no idempotency key
    idempotent,       // GET, HEAD, OPTIONS, TRACE, PUT, DELETE (RFC 9110 §9.2.2)
    idempotency_key,  // non-idempotent but carries an Idempotency-Key the server deduplicates on
};

std::string_view to_string(request_safety safety);

// RFC 9110 §9.2.2 idempotent methods (case-sensitive, as methods are).
bool is_idempotent_method(std::string_view method);
// The safety of a request with this method, with or without an idempotency key.
request_safety safety_of(std::string_view method, bool has_idempotency_key);

enum class classification {
    success,
    retryable,
    not_retryable,     // permanent: 4xx, unknown statuses, local errors
    unsafe_to_repeat,  // might have taken effect, and repeating it is not safe for this request
    deadline_exceeded, // the overall deadline passed
    cancelled,         // the caller cancelled
};

std::string_view to_string(classification c);

// The status sets. A value type (small bitsets, no heap); thread-safe for concurrent reads.
class classifier {
public:
    static constexpr int max_status = 1000;

    classifier();  // the defaults above

    // Configuration; chainable. A status has one treatment: setting it replaces the previous one.
    classifier& treat(int status, status_treatment t);
    classifier& retry_on(int status);     // treat(status, retry)
    classifier& never_retry(int status);  // treat(status, never)
    classifier& retry_on(std::initializer_list<int> statuses);
    classifier& never_retry(std::initializer_list<int> statuses);
    // Statuses that mean "not processed": retryable even for unsafe requests (default 408, 409, 413,
    // 429, 503; 409 and 413 only under their conditions).
    classifier& unprocessed(int status, bool value = true);

    // The status's treatment, or none when it is not listed (not retried).
    std::optional<status_treatment> treatment_of(int status) const;
    bool is_retryable_status(int status) const;    // treated as `retry`
    bool is_never_retry_status(int status) const;  // never retried, or only under a condition
    bool is_unprocessed_status(int status) const;

    classification classify(const attempt_outcome& outcome, request_safety safety) const;

private:
    std::bitset<max_status> retryable_;
    std::bitset<max_status> never_;  // every treatment but `retry`; the two below narrow it
    std::bitset<max_status> unless_retry_after_;
    std::bitset<max_status> unless_key_in_use_;
    std::bitset<max_status> unprocessed_;
};

}  // namespace faultline::retry
