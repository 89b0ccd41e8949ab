#include "faultline/retry/outcome.hpp"

namespace faultline::retry {

std::string_view to_string(outcome_kind kind) {
    switch (kind) {
        case outcome_kind::response: return "response";
        case outcome_kind::connection_refused: return "connection_refused";
        case outcome_kind::reset_before_write: return "reset_before_write";
        case outcome_kind::reset_after_write: return "reset_after_write";
        case outcome_kind::eof_after_write: return "eof_after_write";
        case outcome_kind::timeout_after_write: return "timeout_after_write";
        case outcome_kind::deadline_exceeded: return "deadline_exceeded";
        case outcome_kind::cancelled: return "cancelled";
        case outcome_kind::local_error: return "local_error";
    }
    return "unknown";
}

std::string_view to_string(decision d) {
    switch (d) {
        case decision::success: return "success";
        case decision::retry: return "retry";
        case decision::attempts_exhausted: return "attempts_exhausted";
        case decision::not_retryable: return "not_retryable";
        case decision::budget_exhausted: return "budget_exhausted";
        case decision::deadline_exceeded: return "deadline_exceeded";
        case decision::retry_after_too_long: return "retry_after_too_long";
        case decision::circuit_open: return "circuit_open";
        case decision::cancelled: return "cancelled";
    }
    return "unknown";
}

}  // namespace faultline::retry
