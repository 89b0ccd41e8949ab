// A backoff curve and the gap it allows before each retry: what the `backoff` check judges gaps
// against and the HTML report's gap histograms shade — one definition, so the picture and the
// verdict cannot disagree.
#pragma once

#include "faultline/record/run_record.hpp"

#include <cstddef>
#include <limits>
#include <string>
#include <utility>

namespace faultline::checks {

struct backoff_curve {
    double base = 0;                                     // ns
    double cap = std::numeric_limits<double>::infinity();  // ns (infinity: no cap)
    std::string growth = "exponential";                  // or "linear", "constant"
    double multiplier = 2;
    std::string jitter = "full";  // none, full, equal, decorrelated, proportional, additive
    double fraction = 0.2;        // proportional: ±fraction of t
    std::string sides = "both";   // proportional: "both", "above" or "below" t
    double jitter_max = 0;        // ns, additive: t .. t + jitter_max

    // The curve a client declared (the command driver's [client] backoff, `score --backoff`).
    static backoff_curve declared(const record::declared_backoff& d);
};

// The [lowest, highest] gap in ns before retry k (1 for the gap before attempt 2). Decorrelated
// jitter depends on the previous gap; pass infinity for the widest band any previous gap allows.
std::pair<double, double> backoff_envelope(const backoff_curve& curve, std::size_t k, double previous_gap);

}  // namespace faultline::checks
