#include "faultline/checks/backoff_curve.hpp"

#include <algorithm>
#include <cmath>

namespace faultline::checks {

backoff_curve backoff_curve::declared(const record::declared_backoff& d) {
    backoff_curve curve;
    curve.base = static_cast<double>(d.base.count());
    curve.cap = static_cast<double>(d.cap.count());
    curve.multiplier = d.multiplier;
    curve.jitter = std::string(to_string(d.jitter));
    curve.fraction = d.jitter_fraction;
    return curve;
}

std::pair<double, double> backoff_envelope(const backoff_curve& c, std::size_t k, double previous_gap) {
    // pow may overflow to +inf for a large k; min() with a finite cap keeps that finite.
    const double grown = c.growth == "linear"     ? c.base * static_cast<double>(k)
                         : c.growth == "constant" ? c.base
                                                  : c.base * std::pow(c.multiplier, static_cast<double>(k - 1));
    const double t = std::min(c.cap, grown);
    if (c.jitter == "none") return {t, t};
    if (c.jitter == "full") return {0, t};
    if (c.jitter == "equal") return {t / 2, t};
    if (c.jitter == "additive") return {t, t + c.jitter_max};
    if (c.jitter == "proportional") {
        return {c.sides == "above" ? t : t * (1 - c.fraction), c.sides == "below" ? t : t * (1 + c.fraction)};
    }
    // Decorrelated (AWS): the next gap is drawn from [base, 3 × the previous one], capped.
    const double hi = std::min(c.cap, 3 * std::max(previous_gap, c.base));
    return {c.base, std::max(hi, c.base)};
}

}  // namespace faultline::checks
