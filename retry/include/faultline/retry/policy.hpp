// The retry policy: everything that decides whether, when and how often an operation is retried.
// A plain value with chainable setters; the budget and the circuit breaker are shared objects
// (std::shared_ptr), because their whole point is to be shared by many operations.
//
//   auto policy = retry_policy{}
//       .with_max_attempts(4)
//       .with_backoff(backoff_policy{}.with_base(50ms).with_cap(2s).with_jitter(jitter_kind::full))
//       .with_overall_timeout(3s)
//       .with_budget(std::make_shared<token_bucket_budget>(10, 0.1));
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

#include "faultline/retry/backoff.hpp"
#include "faultline/retry/budget.hpp"
#include "faultline/retry/circuit_breaker.hpp"
#include "faultline/retry/classify.hpp"
#include "faultline/retry/idempotency.hpp"

namespace faultline::retry {

struct retry_policy {
    std::uint32_t max_attempts{3};  // attempts in all, the first included; 0 is treated as 1
    backoff_policy backoff;
    classifier classify;
    std::optional<duration> per_attempt_timeout;  // each attempt gets min(this, remaining)
    std::optional<duration> overall_timeout;      // deadline = start of the operation + this
    duration max_retry_after{std::chrono::seconds{60}};  // a longer Retry-After ends the operation
    bool honour_retry_after{true};                // Retry-After is a minimum wait
    idempotency_options keys;
    std::shared_ptr<retry_budget> budget;         // optional, shared
    std::shared_ptr<circuit_breaker> breaker;     // optional, shared

    retry_policy& with_max_attempts(std::uint32_t n) { max_attempts = n; return *this; }
    retry_policy& with_backoff(const backoff_policy& b) { backoff = b; return *this; }
    retry_policy& with_classifier(const classifier& c) { classify = c; return *this; }
    retry_policy& with_per_attempt_timeout(duration d) { per_attempt_timeout = d; return *this; }
    retry_policy& with_overall_timeout(duration d) { overall_timeout = d; return *this; }
    retry_policy& with_max_retry_after(duration d) { max_retry_after = d; return *this; }
    retry_policy& with_honour_retry_after(bool on) { honour_retry_after = on; return *this; }
    retry_policy& with_keys(const idempotency_options& k) { keys = k; return *this; }
    retry_policy& with_budget(std::shared_ptr<retry_budget> b) { budget = std::move(b); return *this; }
    retry_policy& with_breaker(std::shared_ptr<circuit_breaker> b) { breaker = std::move(b); return *this; }
};

// Throws std::invalid_argument naming the field when the policy holds a value no loop can run
// with (validate(backoff_policy)). The budget and the breaker check their own options when they are
// constructed. `execute`, `async_execute` and `http_client` call it before any attempt.
void validate(const retry_policy& policy);

}  // namespace faultline::retry
