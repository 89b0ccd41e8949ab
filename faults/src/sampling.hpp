// Continuous distributions on top of core's uniform_unit, for delay kinds. Our own formulas (Box–
// Muller), never the std distributions, whose output differs between standard libraries.
#pragma once

#include <cmath>
#include <numbers>

#include "faultline/core/random.hpp"

namespace faultline::faults::detail {

// A standard normal draw from two uniform draws (Box–Muller, cosine branch). 1 - u keeps the
// logarithm's argument in (0, 1].
inline double standard_normal(random_source& random) {
    const double u1 = uniform_unit(random);
    const double u2 = uniform_unit(random);
    return std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

}  // namespace faultline::faults::detail
