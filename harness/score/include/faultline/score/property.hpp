// The properties a scorecard judges: the rows of `faultline score`. A property is proven by one or
// more checks in the conformance probes (each probe maps its checks to properties in `[probe]`), and
// says when it applies at all, so a client that never retries, or whose deadline was not declared,
// gets "not applicable" rather than a pass it did not earn.
#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace faultline::score {

// When a property can be judged.
enum class applicability {
    always,             // every client: not retrying at all also satisfies it
    // The client retries at all (in some probe) and retried this probe's failure: one that gave up
    // before anything reached the server broke no rule (RFC 9110 never requires a retry), so that
    // is "n/a", not a failure.
    retried_unsent,
    probe_retried,      // the probe itself saw a retry (e.g. after the Retry-After it sent)
    keys_sent,          // the probe saw an idempotency key and a retry
    deadline_declared,  // the user declared the client's deadline (`--deadline`)
    max_attempts_declared,  // the user declared the client's attempt limit (`--max-attempts`)
    attempt_timeout_declared,  // the user declared the client's per-attempt timeout (`--attempt-timeout`)
    grpc_throttling_declared,  // the declared gRPC service config has retryThrottling
};

// Which scorecards a property is a row of: an HTTP client's (`faultline score`), a gRPC client's
// (`faultline score --grpc`, judged against its service config), or both.
enum class scorecard_kind { http, grpc, both };

struct property_info {
    std::string_view id;     // the name probes use in `[probe.properties]`
    std::string_view title;  // the scorecard row
    applicability applies;
    // The verdict every run gets besides its [[expect]] checks (checks/run_verdicts.hpp) that proves
    // this property in every probe; no probe maps a check to such a property. "" for the others.
    std::string_view run_verdict = {};
    scorecard_kind kind = scorecard_kind::http;
};

// Every property, in scorecard order.
std::span<const property_info> properties();
// Whether the property is a row of the HTTP (grpc = false) or the gRPC scorecard.
bool on_scorecard(const property_info& p, bool grpc);
const property_info* find_property(std::string_view id);
// The property a run's own verdict proves (`evidence_intact`), or null.
const property_info* property_of_run_verdict(std::string_view check);

}  // namespace faultline::score
