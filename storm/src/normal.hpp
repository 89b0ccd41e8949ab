// Normal variates from the simulator's random source, with our own transform (the standard
// distributions differ between standard libraries, and a seed must replay everywhere): the ziggurat
// method of Marsaglia and Tsang ("The Ziggurat Method for Generating Random Variables", Journal of
// Statistical Software 5(8), 2000), written from the paper's description with 256 layers.
//
// Why not the polar method any more: the contention model draws four hop latencies per write, and
// the polar method's log, square root and division (and its 21 % rejected pairs) were over half of
// a sweep's time. The ziggurat covers the half-density exp(-x^2/2) with 255 stacked rectangles of
// equal area plus a base strip holding the tail beyond r; one 64-bit word picks a layer (8 bits),
// a sign (1 bit) and a uniform (the top 53 bits), and 98.5 % of draws end there: a multiply and a
// comparison. The rest take a second uniform (the wedge between a rectangle and the curve) or, one
// draw in ~4,000, Marsaglia's tail method with two logarithms.
//
// Deterministic: the same words give the same variates. The tables are built once from r and the
// layer area v with std::exp and std::log, as the wedge and tail draws use them; like the polar
// method before (std::log), a platform's libm must round those the same way for bit-identical runs.
// Draws from the concrete `fast_random` (final, inline): no virtual call per word.
#pragma once

#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "faultline/core/random.hpp"
#include "fast_random.hpp"

namespace faultline::storm {

// The layer edges of the 256-layer ziggurat for the half-normal density f(x) = exp(-x^2/2).
struct ziggurat_tables {
    static constexpr std::size_t layers = 256;
    // The paper's constants for 256 layers: the base strip's right edge and every layer's area.
    static constexpr double r = 3.6541528853610088;
    static constexpr double v = 4.92867323399e-3;

    // edge[i] is layer i's right edge, decreasing: edge[0] = v / f(r) (the base strip's rectangle
    // of area v, whose part beyond r stands for the tail), edge[1] = r, ..., edge[256] = 0.
    std::array<double, layers + 1> edge{};
    // density[i] = f(edge[i]); the wedge test compares against these.
    std::array<double, layers + 1> density{};

    static double f(double x) { return std::exp(-0.5 * x * x); }

    ziggurat_tables() {
        edge[0] = v / f(r);
        edge[1] = r;
        for (std::size_t i = 1; i < layers - 1; ++i) edge[i + 1] = std::sqrt(-2.0 * std::log(v / edge[i] + f(edge[i])));
        edge[layers] = 0.0;  // the recurrence lands within rounding of 0 (tested); 0 exactly keeps the top layer closed
        for (std::size_t i = 0; i <= layers; ++i) density[i] = f(edge[i]);
    }

    static const ziggurat_tables& instance() {
        static const ziggurat_tables tables;
        return tables;
    }
};

class normal_sampler {
public:
    normal_sampler() : tables_{ziggurat_tables::instance()} {}

    // A standard normal variate. The common case is this function's first lines, small enough to
    // inline into the simulation loop; the rest is out of line.
    double next(fast_random& random) {
        const std::uint64_t word = random.next();
        const auto layer = static_cast<std::size_t>(word & 0xff);
        const double x = unit_from_hash(word) * tables_.edge[layer];
        // Inside the next layer's width the whole column is under the curve.
        if (x < tables_.edge[layer + 1]) [[likely]] return signed_by(x, sign_of(word));
        return next_outside_columns(random, word, x);
    }

private:
    // Bit 8 of a word as a double's sign bit.
    static std::uint64_t sign_of(std::uint64_t word) { return (word & 0x100) << 55; }

    // The draw whose word gave `x` in `layer`'s rectangle beyond the next layer's width: the tail,
    // or the wedge test, and on a rejection new words until one is kept.
    [[gnu::noinline]] double next_outside_columns(fast_random& random, std::uint64_t word, double x) {
        for (;;) {
            const auto layer = static_cast<std::size_t>(word & 0xff);
            const std::uint64_t sign = sign_of(word);
            if (x < tables_.edge[layer + 1]) return signed_by(x, sign);
            if (layer == 0) return signed_by(tail_beyond_r(random), sign);
            // The wedge: a point uniform in the rectangle's height band, kept when under the curve.
            const double y = tables_.density[layer] +
                             unit_from_hash(random.next()) * (tables_.density[layer + 1] - tables_.density[layer]);
            if (y < ziggurat_tables::f(x)) return signed_by(x, sign);
            word = random.next();
            x = unit_from_hash(word) * tables_.edge[static_cast<std::size_t>(word & 0xff)];
        }
    }

    // A non-negative x with the sign bit set from `sign`: the sign is a coin toss, so it is set by
    // bits, not chosen by a branch that would be mispredicted every other draw.
    static double signed_by(double x, std::uint64_t sign) {
        return std::bit_cast<double>(std::bit_cast<std::uint64_t>(x) | sign);
    }

    // Marsaglia's tail method: x = r + a with a exponential of rate r, kept with probability
    // exp(-a^2/2) (as 2b >= a^2 with b exponential of rate 1).
    static double tail_beyond_r(fast_random& random) {
        for (;;) {
            // Uniforms in (0, 1]: the logarithm stays finite.
            const double a = -std::log(open_unit(random.next())) / ziggurat_tables::r;
            const double b = -std::log(open_unit(random.next()));
            if (b + b >= a * a) return ziggurat_tables::r + a;
        }
    }

    static double open_unit(std::uint64_t word) { return static_cast<double>((word >> 11) + 1) * 0x1.0p-53; }

    const ziggurat_tables& tables_;
};

}  // namespace faultline::storm
