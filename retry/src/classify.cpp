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
    for (const status_rule& rule : status_rules()) {
        treat(rule.status, rule.standard);
        if (rule.unprocessed) unprocessed(rule.status);
    }
}

classifier& classifier::treat(int status, status_treatment t) {
    if (in_range(status)) {
        const std::size_t b = bit(status);
        retryable_.set(b, t == status_treatment::retry);
        never_.set(b, t != status_treatment::retry);
        unless_retry_after_.set(b, t == status_treatment::unless_retry_after);
        unless_key_in_use_.set(b, t == status_treatment::unless_key_in_use);
    }
    return *this;
}

classifier& classifier::retry_on(int status) { return treat(status, status_treatment::retry); }
classifier& classifier::never_retry(int status) { return treat(status, status_treatment::never); }

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

std::optional<status_treatment> classifier::treatment_of(int status) const {
    if (!in_range(status)) return std::nullopt;
    const std::size_t b = bit(status);
    if (retryable_.test(b)) return status_treatment::retry;
    if (unless_retry_after_.test(b)) return status_treatment::unless_retry_after;
    if (unless_key_in_use_.test(b)) return status_treatment::unless_key_in_use;
    if (never_.test(b)) return status_treatment::never;
    return std::nullopt;
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
            const auto t = treatment_of(s);
            if (!t || !allows_retry(*t, outcome.retry_after.has_value(), outcome.idempotency_key_in_use)) {
                return classification::not_retryable;
            }
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
