// The status table: for each HTTP status whose retry behaviour RFC 9110 (or the RFC that defines it)
// settles, whether a client may send the same request again. It is written once, here, and read by
// both sides of faultline: the builtin retry client's `classifier` (classify.hpp) takes its defaults
// from it, and the harness's `no_retry_on_status` check takes its default never-retried list from it,
// so the client and the check cannot drift apart.
//
// Each status has a treatment under two profiles. `standard` is what RFC 9110 allows: a client that
// follows it is never flagged. `strict` also refuses the retries RFC 9110 only permits ("MAY") for a
// request the server rejected for its own shape: 408 (too slow) and 413 (too large), whose repeat is
// the same slow or large request. Statuses not in the table (418, 421, 507, …) are left alone: the
// classifier does not retry them, the check does not list them.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace faultline::retry {

enum class status_treatment : std::uint8_t {
    retry,               // transient: the same request may succeed later
    never,               // permanent: the same request gets the same answer
    unless_retry_after,  // never, unless the response carries Retry-After (the server says when to return)
    unless_key_in_use,   // never, unless it is the idempotency layer's "this key's first request is still
                         // in flight" 409: a retry later gets that request's stored result
};

std::string_view to_string(status_treatment t);

// Whether a response whose status has treatment `t` may be retried, given what the response said.
bool allows_retry(status_treatment t, bool has_retry_after, bool idempotency_key_in_use);

enum class status_profile { standard, strict };

struct status_rule {
    int status;
    status_treatment standard;
    status_treatment strict;
    // The status says the server did not act on the request, so a retry is safe even for a
    // non-idempotent request without a key (RFC 9110 §9.2.2: the client can tell it was never applied).
    bool unprocessed;
    std::string_view reference;  // where the rule comes from, e.g. "RFC 9110 §15.5.14"
};

// The table, ordered by status. Static storage; thread-safe.
std::span<const status_rule> status_rules();
// The row for `status`, or none when the table leaves it alone.
std::optional<status_rule> find_status_rule(int status);
status_treatment treatment(const status_rule& rule, status_profile profile);

}  // namespace faultline::retry
