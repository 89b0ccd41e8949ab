#include "faultline/score/property.hpp"

#include <algorithm>
#include <array>

namespace faultline::score {

namespace {

constexpr std::array<property_info, 17> catalogue{{
    // First: when a client reset the server or changed its rules, the rows below judged a doctored run.
    {"evidence_intact", "evidence intact: no control-API tampering", applicability::always, "evidence_intact",
     scorecard_kind::both},
    {"single_execution", "no second execution of a committed non-idempotent request", applicability::always, {},
     scorecard_kind::both},
    {"retryable_statuses", "only retryable statuses retried (RFC 9110)", applicability::always},
    {"retry_after", "Retry-After honoured", applicability::probe_retried},
    {"unsent_retried", "failures before anything was sent retried (refused, RST before read)",
     applicability::retried_unsent},
    {"stable_key", "idempotency key stable across attempts", applicability::keys_sent, {}, scorecard_kind::both},
    // Judged whatever the client declares: a client declared not to jitter still sends its herd back
    // as one wave (--jitter only refines the backoff curve judged).
    {"jittered", "retries jittered (no lock-step herd)", applicability::probe_retried},
    // Spaced and growing is judged of every client that retried (`spacing`); the curve (`backoff`) only
    // when declared: the probes judge it only then (run_probes.cpp).
    {"backoff", "backoff spaced and growing (and as declared)", applicability::probe_retried},
    {"attempt_limit", "attempts within the declared limit", applicability::max_attempts_declared},
    {"deadline", "deadline kept", applicability::deadline_declared},
    {"attempt_timeout", "unanswered attempt given up at its timeout", applicability::attempt_timeout_declared},
    // gRPC A6, judged against the declared service config (`--service-config`).
    {"grpc_retryable_codes", "only retryableStatusCodes retried, never past the commit (A6)", applicability::always,
     {}, scorecard_kind::grpc},
    {"grpc_attempt_limit", "attempts within min(maxAttempts, 5) (A6)", applicability::always, {}, scorecard_kind::grpc},
    {"grpc_backoff", "backoff within random(0, min(initial × multiplier^(n−1), max)) (A6)",
     applicability::probe_retried, {}, scorecard_kind::grpc},
    {"grpc_pushback", "grpc-retry-pushback-ms honoured (A6)", applicability::always, {}, scorecard_kind::grpc},
    {"grpc_throttling", "retryThrottling tokens honoured (A6)", applicability::grpc_throttling_declared, {},
     scorecard_kind::grpc},
    // grpc-timeout is on every call a gRPC client makes with a deadline: judged whether declared or not.
    {"grpc_deadline", "grpc-timeout propagated and kept: no attempt after the deadline", applicability::always, {},
     scorecard_kind::grpc},
}};

}  // namespace

std::span<const property_info> properties() { return catalogue; }

bool on_scorecard(const property_info& p, bool grpc) {
    return p.kind == scorecard_kind::both || p.kind == (grpc ? scorecard_kind::grpc : scorecard_kind::http);
}

const property_info* find_property(std::string_view id) {
    const auto it = std::find_if(catalogue.begin(), catalogue.end(), [&](const property_info& p) { return p.id == id; });
    return it == catalogue.end() ? nullptr : &*it;
}

const property_info* property_of_run_verdict(std::string_view check) {
    const auto it = std::find_if(catalogue.begin(), catalogue.end(),
                                 [&](const property_info& p) { return !p.run_verdict.empty() && p.run_verdict == check; });
    return it == catalogue.end() ? nullptr : &*it;
}

}  // namespace faultline::score
