#include "faultline/retry/status_rules.hpp"

#include <algorithm>
#include <array>

namespace faultline::retry {

namespace {

using enum status_treatment;

constexpr bool acted = false;       // the server may have acted on the request
constexpr bool not_acted = true;    // the status says it did not
constexpr bool not_retried = false; // never retried under either profile: whether it acted never matters

// One row per status. `standard` and `strict` differ only where RFC 9110 permits a retry of a request
// the server rejected for its own shape; why each status has its treatment is said beside it.
constexpr std::array rules{
    // The request is malformed: repeating it unchanged gets the same answer.
    status_rule{400, never, never, not_retried, "RFC 9110 §15.5.1"},
    // A repeat needs new or replaced credentials, which makes it a different request.
    status_rule{401, never, never, not_retried, "RFC 9110 §15.5.2"},
    // "SHOULD NOT automatically repeat the request with the same credentials".
    status_rule{403, never, never, not_retried, "RFC 9110 §15.5.4"},
    // No representation for the target; 404 does not say the absence is temporary.
    status_rule{404, never, never, not_retried, "RFC 9110 §15.5.5"},
    // The target does not support the method; nothing about it changes with time.
    status_rule{405, never, never, not_retried, "RFC 9110 §15.5.6"},
    // The server closed a connection on which it did not receive a complete request: "it MAY repeat
    // that request". Nothing was processed, so even a POST may be repeated.
    status_rule{408, retry, never, not_acted, "RFC 9110 §15.5.9"},
    // A conflict with the resource's state: the user must resolve it first. The exception is the
    // Idempotency-Key layer's in-flight conflict (draft-ietf-httpapi-idempotency-key-header): the first
    // request with that key is still running and a later retry gets its stored result.
    status_rule{409, unless_key_in_use, unless_key_in_use, not_acted, "RFC 9110 §15.5.10"},
    // Gone, and "likely to be permanent".
    status_rule{410, never, never, not_retried, "RFC 9110 §15.5.11"},
    // "If the condition is temporary, the server SHOULD generate a Retry-After header field ... after
    // what time the client MAY try again": without Retry-After the content is simply too large.
    status_rule{413, unless_retry_after, never, not_acted, "RFC 9110 §15.5.14"},
    // The same target is as long the next time.
    status_rule{414, never, never, not_retried, "RFC 9110 §15.5.15"},
    // The same content is in the same unsupported format the next time.
    status_rule{415, never, never, not_retried, "RFC 9110 §15.5.16"},
    // Understood but semantically wrong: the client must change the request.
    status_rule{422, never, never, not_retried, "RFC 9110 §15.5.21"},
    // Rate limited: retry, after Retry-After when given.
    status_rule{429, retry, retry, not_acted, "RFC 6585 §4"},
    // "MAY be resubmitted after reducing the size of the request header fields": a different request.
    status_rule{431, never, never, not_retried, "RFC 6585 §5"},
    // A legal demand; it does not lapse between retries.
    status_rule{451, never, never, not_retried, "RFC 7725 §3"},
    // An unexpected condition, possibly after the server acted: safe to repeat only when idempotent.
    status_rule{500, retry, retry, acted, "RFC 9110 §15.6.1"},
    // The server does not support the functionality; responses are cacheable by default: permanent.
    status_rule{501, never, never, not_retried, "RFC 9110 §15.6.2"},
    // An upstream's invalid response: the upstream may have acted.
    status_rule{502, retry, retry, acted, "RFC 9110 §15.6.3"},
    // Temporary overload or maintenance; the server did not handle the request.
    status_rule{503, retry, retry, not_acted, "RFC 9110 §15.6.4"},
    // The upstream did not answer in time, possibly after acting.
    status_rule{504, retry, retry, acted, "RFC 9110 §15.6.5"},
    // The server refuses this major version of HTTP; the same version fails the same way.
    status_rule{505, never, never, not_retried, "RFC 9110 §15.6.6"},
};

static_assert(std::is_sorted(rules.begin(), rules.end(),
                             [](const status_rule& a, const status_rule& b) { return a.status < b.status; }));

}  // namespace

std::string_view to_string(status_treatment t) {
    switch (t) {
        case status_treatment::retry: return "retry";
        case status_treatment::never: return "never";
        case status_treatment::unless_retry_after: return "unless_retry_after";
        case status_treatment::unless_key_in_use: return "unless_key_in_use";
    }
    return "unknown";
}

bool allows_retry(status_treatment t, bool has_retry_after, bool idempotency_key_in_use) {
    switch (t) {
        case status_treatment::retry: return true;
        case status_treatment::never: return false;
        case status_treatment::unless_retry_after: return has_retry_after;
        case status_treatment::unless_key_in_use: return idempotency_key_in_use;
    }
    return false;
}

std::span<const status_rule> status_rules() { return rules; }

std::optional<status_rule> find_status_rule(int status) {
    const auto it = std::lower_bound(rules.begin(), rules.end(), status,
                                     [](const status_rule& r, int s) { return r.status < s; });
    if (it == rules.end() || it->status != status) return std::nullopt;
    return *it;
}

status_treatment treatment(const status_rule& rule, status_profile profile) {
    return profile == status_profile::strict ? rule.strict : rule.standard;
}

}  // namespace faultline::retry
