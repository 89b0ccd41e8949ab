#include "faultline/retry/classify.hpp"

namespace faultline::retry {

namespace {

bool in_range(int status) { return status >= 0 && status < classifier::max_status; }
std::size_t bit(int status) { return static_cast<std::size_t>(status); }

bool safe_to_repeat(request_safety safety) { return safety != request_safety::unsafe; }

}  // namespace

std::string_view to_string(request_safety safety) {
    switch (safety) {
        case request_safety::unsafe: return "unsafe";
        case request_safety::idempotent: return "idempotent";
        case request_safety::idempotency_key: return "idempotency_key";
    }
    return "unknown";
}

std::string_view to_string(classification c) {
    switch (c) {
        case classification::success: return "success";
        case classification::retryable: return "retryable";
        case classification::not_retryable: return "not_retryable";
        case classification::unsafe_to_repeat: return "unsafe_to_repeat";
        case classification::deadline_exceeded: return "deadline_exceeded";
        case classification::cancelled: return "cancelled";
    }
    return "unknown";
}

bool is_idempotent_method(std::string_view method) {
    return method == "GET" || method == "HEAD" || method == "OPTIONS" || method == "TRACE" || method == "PUT" ||
           method == "DELETE";
}

request_safety safety_of(std::string_view method, bool has_idempotency_key) {
    if (is_idempotent_method(method)) return request_safety::idempotent;
    return has_idempotency_key ? request_safety::idempotency_key : request_safety::unsafe;
}

classifier::classifier() {
    retry_on({408, 429, 500, 502, 503, 504});
    never_retry({400, 401, 403, 404, 405, 409, 422, 501});
    unprocessed(408).unprocessed(429).unprocessed(503);
}

classifier& classifier::retry_on(int status) {
    if (in_range(status)) {
        retryable_.set(bit(status));
        never_.reset(bit(status));
    }
    return *this;
}

classifier& classifier::never_retry(int status) {
    if (in_range(status)) {
        never_.set(bit(status));
        retryable_.reset(bit(status));
    }
    return *this;
}

classifier& classifier::retry_on(std::initializer_list<int> statuses) {
    for (const int s : statuses) retry_on(s);
    return *this;
}

classifier& classifier::never_retry(std::initializer_list<int> statuses) {
    for (const int s : statuses) never_retry(s);
    return *this;
}

classifier& classifier::unprocessed(int status, bool value) {
    if (in_range(status)) unprocessed_.set(bit(status), value);
    return *this;
}

bool classifier::is_retryable_status(int status) const { return in_range(status) && retryable_.test(bit(status)); }
bool classifier::is_never_retry_status(int status) const { return in_range(status) && never_.test(bit(status)); }
bool classifier::is_unprocessed_status(int status) const {
    return in_range(status) && unprocessed_.test(bit(status));
}

classification classifier::classify(const attempt_outcome& outcome, request_safety safety) const {
    switch (outcome.kind) {
        case outcome_kind::response: {
            const int s = outcome.status;
            if (s >= 200 && s < 400) return classification::success;
            // A 409 "key in use" means the first request with this key is still running: retrying
            // later gets its stored result, so it is safe (only keyed requests can receive it).
            if (s == 409 && outcome.idempotency_key_in_use) return classification::retryable;
            if (!is_retryable_status(s)) return classification::not_retryable;
            if (is_unprocessed_status(s) || safe_to_repeat(safety)) return classification::retryable;
            return classification::unsafe_to_repeat;
        }
        case outcome_kind::connection_refused:
        case outcome_kind::reset_before_write:
            return classification::retryable;  // the server never saw the request
        case outcome_kind::reset_after_write:
        case outcome_kind::eof_after_write:
        case outcome_kind::timeout_after_write:
            return safe_to_repeat(safety) ? classification::retryable : classification::unsafe_to_repeat;
        case outcome_kind::deadline_exceeded: return classification::deadline_exceeded;
        case outcome_kind::cancelled: return classification::cancelled;
        case outcome_kind::local_error: return classification::not_retryable;
    }
    return classification::not_retryable;
}

}  // namespace faultline::retry
