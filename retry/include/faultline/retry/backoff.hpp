// Exponential backoff with jitter: how long to wait before the next retry. `exponential_delay` is the
// pure, capped curve `min(cap, base * multiplier^n)`; `backoff` adds one of five jitter kinds and the
// little state decorrelated jitter needs. Randomness comes in as a `random_source&`, so tests pin each
// draw and assert the exact delay.
//
// Retry index: n = 0 is the wait before the FIRST retry (i.e. before attempt 2), n = 1 before the
// second retry, and so on. `backoff::next()` returns the delay for the current index and advances it.
//
// The cap: every jittered delay is drawn inside a range whose upper end is already capped (the draw
// is never clamped afterwards), so a delay is never above `cap` and delays do not pile up exactly at
// `cap` once the curve saturates — clamping after the draw would put a spike of probability mass on
// the cap and re-synchronise clients (the thundering herd jitter is meant to break up):
//   none          t                                   (t = exponential_delay(n), already <= cap)
//   full          U[0, t)
//   equal         t/2 + U[0, t/2)
//   decorrelated  U[base, min(cap, 3 * prev)), prev starts at base and becomes the returned delay
//                 (if that range is empty, i.e. cap <= base, the delay is min(base, cap))
//   proportional  U[(1 - f) * t, min((1 + f) * t, cap)), f = jitter_fraction in [0, 1]
//                 (gRPC C-core / grpc-go's x U[0.8, 1.2) with f = 0.2, drawn inside the cap)
// All draws are half-open, computed in whole nanoseconds, and the result is floored to nanoseconds.
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>

#include "faultline/core/clock.hpp"
#include "faultline/core/random.hpp"

namespace faultline::retry {

using faultline::duration;

enum class jitter_kind { none, full, equal, decorrelated, proportional };

std::string_view to_string(jitter_kind kind);

// The configuration of a backoff curve. A plain value; the chainable setters return *this.
struct backoff_policy {
    duration base{std::chrono::milliseconds{100}};
    duration cap{std::chrono::seconds{10}};
    double multiplier{2.0};
    jitter_kind jitter{jitter_kind::full};
    double jitter_fraction{0.2};  // only for jitter_kind::proportional

    backoff_policy& with_base(duration d) { base = d; return *this; }
    backoff_policy& with_cap(duration d) { cap = d; return *this; }
    backoff_policy& with_multiplier(double m) { multiplier = m; return *this; }
    backoff_policy& with_jitter(jitter_kind k) { jitter = k; return *this; }
    backoff_policy& with_jitter_fraction(double f) { jitter_fraction = f; return *this; }
};

// Throws std::invalid_argument naming the field unless multiplier is a finite number > 0 and
// jitter_fraction is in [0, 1] (NaN and infinities fail both). Durations need no check: a negative
// base or cap counts as 0.
void validate(const backoff_policy& policy);

// min(cap, base * multiplier^retry_index), never negative, for every retry_index: the power is taken
// in double, where a huge exponent saturates to +inf (compared against cap) instead of wrapping.
duration exponential_delay(const backoff_policy& policy, std::uint32_t retry_index);

// The jittered delay sequence of one operation. Holds a copy of the policy, the retry index and, for
// decorrelated jitter, the previous delay. A value type; not thread-safe (one per operation).
class backoff {
public:
    // Validates the policy (see validate).
    explicit backoff(const backoff_policy& policy);

    // The delay before the next retry; advances the retry index (saturating, never wraps).
    duration next(random_source& random);
    // Back to retry index 0 (and prev = base).
    void reset();

    std::uint32_t retry_index() const { return index_; }
    const backoff_policy& policy() const { return policy_; }

private:
    backoff_policy policy_;
    duration prev_;
    std::uint32_t index_ = 0;
};

}  // namespace faultline::retry
