#include "faultline/retry/backoff.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace faultline::retry {

namespace {

using rep = duration::rep;

// A non-negative double of nanoseconds, already known to be <= limit, as a duration.
duration from_ns(double ns, rep limit) {
    if (!(ns > 0.0)) return duration{0};
    if (ns >= static_cast<double>(limit)) return duration{limit};
    return duration{static_cast<rep>(ns)};
}

// A whole number of nanoseconds in [low, high); `low` when the range is empty. Computed as
// low + floor(u * span) with the offset kept below span, so rounding can never reach `high`.
rep draw(random_source& random, rep low, rep high) {
    if (high <= low) return low;
    const rep span = high - low;
    auto offset = static_cast<rep>(uniform_unit(random) * static_cast<double>(span));
    offset = std::clamp<rep>(offset, 0, span - 1);
    return low + offset;
}

}  // namespace

std::string_view to_string(jitter_kind kind) {
    switch (kind) {
        case jitter_kind::none: return "none";
        case jitter_kind::full: return "full";
        case jitter_kind::equal: return "equal";
        case jitter_kind::decorrelated: return "decorrelated";
        case jitter_kind::proportional: return "proportional";
    }
    return "unknown";
}

duration exponential_delay(const backoff_policy& policy, std::uint32_t retry_index) {
    const rep cap = std::max<rep>(policy.cap.count(), 0);
    const rep base = std::clamp<rep>(policy.base.count(), 0, cap);
    if (retry_index == 0) return duration{base};  // exact, even where double would round
    // In double a huge power saturates to +inf, which the comparison with cap absorbs; no integer
    // multiplication that could wrap is ever made.
    // The usual doubling takes ldexp, a fraction of pow's cost on a simulator's hot path (storm/);
    // pow(2, n) is exact in double (or +inf past 2^1023), so the two give the same delay.
    const double scaled = policy.multiplier == 2.0
                              ? std::ldexp(static_cast<double>(base), static_cast<int>(std::min<std::uint32_t>(retry_index, 2000)))
                              : static_cast<double>(base) * std::pow(policy.multiplier, static_cast<double>(retry_index));
    if (std::isnan(scaled)) return duration{base};
    return from_ns(scaled, cap);
}

void validate(const backoff_policy& policy) {
    // Written so that NaN fails the comparisons: a NaN fraction would make every proportional
    // delay 0, a NaN multiplier every delay the base.
    if (!(policy.multiplier > 0.0 && policy.multiplier <= std::numeric_limits<double>::max()))
        throw std::invalid_argument{"backoff multiplier must be a finite number greater than 0"};
    if (!(policy.jitter_fraction >= 0.0 && policy.jitter_fraction <= 1.0))
        throw std::invalid_argument{"backoff jitter_fraction must be in [0, 1]"};
}

backoff::backoff(const backoff_policy& policy) : policy_{policy}, prev_{policy.base} { validate(policy_); }

void backoff::reset() {
    index_ = 0;
    prev_ = policy_.base;
}

duration backoff::next(random_source& random) {
    const rep cap = std::max<rep>(policy_.cap.count(), 0);
    const rep t = exponential_delay(policy_, index_).count();
    if (index_ != std::numeric_limits<std::uint32_t>::max()) ++index_;
    switch (policy_.jitter) {
        case jitter_kind::none: return duration{t};
        case jitter_kind::full: return duration{draw(random, 0, t)};
        case jitter_kind::equal: {
            const rep half = t / 2;
            return duration{half + draw(random, 0, t - half)};
        }
        case jitter_kind::decorrelated: {
            const rep base = std::clamp<rep>(policy_.base.count(), 0, cap);
            // prev * 3 in double for the same reason as above: no wrap, saturates at cap.
            const rep high = from_ns(static_cast<double>(prev_.count()) * 3.0, cap).count();
            prev_ = duration{draw(random, base, high)};
            return prev_;
        }
        case jitter_kind::proportional: {
            const double f = policy_.jitter_fraction;  // in [0, 1], validated
            const rep low = from_ns((1.0 - f) * static_cast<double>(t), cap).count();
            const rep high = from_ns((1.0 + f) * static_cast<double>(t), cap).count();
            return duration{draw(random, low, high)};
        }
    }
    return duration{t};
}

}  // namespace faultline::retry
