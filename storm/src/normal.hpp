// Normal variates from a random_source, with our own transform (the standard distributions differ
// between standard libraries, and a seed must replay everywhere): Marsaglia's polar method, which
// yields two variates per accepted pair of uniforms and needs no trigonometry. It draws from the
// concrete `fast_random` (final, inline) rather than a `random_source&`, so each uniform is an
// inlined splitmix64 step instead of a virtual call; `unit_from_hash` maps a word to [0, 1) exactly
// as core's `uniform_unit` does, so the variates are the same either way.
#pragma once

#include <cmath>

#include "faultline/core/random.hpp"
#include "fast_random.hpp"

namespace faultline::storm {

class normal_sampler {
public:
    // A standard normal variate.
    double next(fast_random& random) {
        if (has_spare_) {
            has_spare_ = false;
            return spare_;
        }
        double u = 0;
        double v = 0;
        double s = 0;
        do {
            u = 2.0 * unit_from_hash(random.next()) - 1.0;
            v = 2.0 * unit_from_hash(random.next()) - 1.0;
            s = u * u + v * v;
        } while (s >= 1.0 || s == 0.0);
        const double factor = std::sqrt(-2.0 * std::log(s) / s);
        spare_ = v * factor;
        has_spare_ = true;
        return u * factor;
    }

private:
    double spare_ = 0;
    bool has_spare_ = false;
};

}  // namespace faultline::storm
