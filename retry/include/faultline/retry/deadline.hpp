// Deadlines and the headers that carry retry state to the server. An operation may have an overall
// deadline (an absolute monotonic time point spanning all attempts and sleeps) and a per-attempt
// timeout; each attempt gets min(per_attempt, remaining). The remaining budget is propagated to the
// server so it can stop working on requests the client has given up on.
//
// Headers sent on every attempt by faultline's clients (and recognised by the harness):
//   Faultline-Attempt: <n>          1-based attempt number within the operation ("1" on the first)
//   Faultline-Deadline-Ms: <ms>     remaining overall budget when the request is sent, in whole
//                                   milliseconds rounded UP, at least 1 (never 0); absent without a
//                                   deadline
//   Idempotency-Key: <key>          see idempotency.hpp (quoted by default)
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

#include "faultline/core/clock.hpp"

namespace faultline::retry {

using faultline::duration;
using faultline::time_point;

inline constexpr std::string_view attempt_header = "Faultline-Attempt";
inline constexpr std::string_view deadline_header = "Faultline-Deadline-Ms";
inline constexpr std::string_view idempotency_key_header = "Idempotency-Key";

// deadline - now, or zero once the deadline has passed.
duration remaining(time_point deadline, time_point now);

// min(per_attempt, remaining until deadline); nullopt when neither is set (the attempt is unbounded).
std::optional<duration> attempt_timeout(std::optional<duration> per_attempt, std::optional<time_point> deadline,
                                        time_point now);

// The Faultline-Deadline-Ms value for a remaining budget: ceil(remaining / 1 ms), at least 1.
std::int64_t deadline_header_ms(duration remaining_budget);

}  // namespace faultline::retry
