// The false-alarm and miss rates of `jittered` and `desynchronized`, measured on simulated herds:
// every operation's first attempt fails at the same moment, then each retries 3 times with one of the
// jitter shapes real clients use, under ±1 ms timing noise on every gap and attempt (and, in the
// last test, queueing delay). Seeded draws
// (core/random), so the counts below are exact and the test is deterministic; docs/checks.md quotes
// them. A false alarm is a jittered client failing a check; a miss is the unjittered client passing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "check_test_support.hpp"
#include "faultline/core/random.hpp"

namespace faultline::checks {
namespace {

enum class shape { none, full, equal, decorrelated, proportional, additive, above };

const char* name_of(shape s) {
    switch (s) {
        case shape::none: return "none";
        case shape::full: return "full";
        case shape::equal: return "equal";
        case shape::decorrelated: return "decorrelated";
        case shape::proportional: return "proportional ±20 %";
        case shape::additive: return "additive +U(0, 100ms)";
        case shape::above: return "+0–20 %";
    }
    return "";
}

constexpr shape jittered_shapes[] = {shape::full,         shape::equal,    shape::decorrelated,
                                     shape::proportional, shape::additive, shape::above};

constexpr int seeds = 200;
constexpr int retries = 3;
constexpr double cap_ms = 10'000;  // above every delay here: the cap is backoff's business

// The delay (ms) before retry k (1-based) of one operation; `previous` is decorrelated jitter's state.
double delay_ms(shape s, double base_ms, int k, double& previous, random_source& random) {
    const double t = std::min(cap_ms, base_ms * static_cast<double>(1 << (k - 1)));
    switch (s) {
        case shape::none: return t;
        case shape::full: return uniform(random, 0, t);
        case shape::equal: return t / 2 + uniform(random, 0, t / 2);
        case shape::decorrelated: previous = std::min(cap_ms, uniform(random, base_ms, 3 * previous)); return previous;
        case shape::proportional: return t * uniform(random, 0.8, 1.2);
        case shape::additive: return t + uniform(random, 0, 100);
        case shape::above: return t * uniform(random, 1.0, 1.2);
    }
    return t;
}

// One simulated herd: who retries how, how many operations, and how noisy the machine is.
struct herd_spec {
    shape client;
    double base_ms;
    int min_operations;
    int max_operations;  // each seed picks a count in [min, max]
    // Besides ±1 ms on every gap, each retry may wait up to this long in a queue, as when hundreds of
    // simultaneous retries share two loaded cores (the 200-client herd suites measure IQRs up to ~8 ms).
    double queue_ms = 0;
};

// The operations fail together at 0–1 ms, each then retrying `retries` times.
record::run_record herd(const herd_spec& h, int operations, std::uint64_t seed) {
    seeded_random random(seed);
    test::journal_builder j;
    for (int i = 0; i < operations; ++i) {
        j.op("op" + std::to_string(i)).at(uniform(random, 0, 1));
        double previous = h.base_ms;
        for (int k = 1; k <= retries; ++k) {
            j.attempt(503, 1 + uniform(random, -0.5, 0.5));
            const double noise = uniform(random, -1, 1) + uniform(random, 0, h.queue_ms);
            j.wait(std::max(0.0, delay_ms(h.client, h.base_ms, k, previous, random) + noise));
        }
        j.attempt(200, 1 + uniform(random, -0.5, 0.5));
    }
    return j.run();
}

struct rates {
    int jittered_failed = 0;
    int desynchronized_failed = 0;  // only judged with 20 operations or more (its min_retries)
    int insufficient = 0;
};

constexpr std::string_view default_jittered = R"(check = "jittered")";
constexpr std::string_view default_desynchronized = R"(check = "desynchronized")";

std::string one_line(std::string_view toml) {
    std::string out(toml);
    std::replace(out.begin(), out.end(), '\n', ' ');
    return out;
}

rates measure(const herd_spec& h, std::string_view jittered_toml = default_jittered,
              std::string_view desynchronized_toml = default_desynchronized) {
    const expectation jittered = test::parse_ok(jittered_toml);
    const expectation desynchronized = test::parse_ok(desynchronized_toml);
    rates out;
    for (int seed = 1; seed <= seeds; ++seed) {
        const int operations = h.min_operations + seed % (h.max_operations - h.min_operations + 1);
        const record::run_record run = herd(h, operations, static_cast<std::uint64_t>(seed));
        const record::verdict j = evaluate(jittered, run);
        out.insufficient += j.insufficient_evidence ? 1 : 0;
        out.jittered_failed += j.outcome() == record::verdict_outcome::fail ? 1 : 0;
        if (operations >= 20) {
            const record::verdict d = evaluate(desynchronized, run);
            out.insufficient += d.insufficient_evidence ? 1 : 0;
            out.desynchronized_failed += d.outcome() == record::verdict_outcome::fail ? 1 : 0;
        }
    }
    std::printf("%s, base %.0fms, %d–%d operations, queue %.0fms: [%s] failed %d/%d (insufficient %d)", name_of(h.client),
                h.base_ms, h.min_operations, h.max_operations, h.queue_ms, one_line(jittered_toml).c_str(),
                out.jittered_failed, seeds, out.insufficient);
    if (h.min_operations >= 20) {
        std::printf(", [%s] failed %d/%d", one_line(desynchronized_toml).c_str(), out.desynchronized_failed, seeds);
    }
    std::printf("\n");
    return out;
}

// At most 1 % of 200 runs: the rate each check claims in docs/checks.md.
constexpr int one_percent = seeds / 100;

// The herd suites' scale: base 400 ms, so even the narrowest shape (+0–20 %) spreads over 80 ms.
TEST(jitter_rates, jittered_herds_of_20_to_50_rarely_fail_either_check) {
    for (const shape s : jittered_shapes) {
        const rates r = measure({s, 400, 20, 50});
        EXPECT_EQ(r.insufficient, 0) << name_of(s);
        EXPECT_LE(r.jittered_failed, one_percent) << name_of(s);
        EXPECT_LE(r.desynchronized_failed, one_percent) << name_of(s);
    }
}

TEST(jitter_rates, unjittered_herds_of_20_to_50_fail_both_checks) {
    const rates r = measure({shape::none, 400, 20, 50});
    EXPECT_EQ(r.insufficient, 0);
    EXPECT_GE(r.jittered_failed, seeds - one_percent);
    EXPECT_GE(r.desynchronized_failed, seeds - one_percent);
}

TEST(jitter_rates, jittered_holds_at_its_minimum_sample) {
    for (const shape s : jittered_shapes) EXPECT_LE(measure({s, 400, 8, 8}).jittered_failed, one_percent) << name_of(s);
    EXPECT_GE(measure({shape::none, 400, 8, 8}).jittered_failed, seeds - one_percent);
}

// Base 100 ms: +0–20 % spreads the first retries over only 20 ms, four times the noise floor.
TEST(jitter_rates, narrow_jitter_needs_more_samples_or_a_finer_scale) {
    for (const shape s : jittered_shapes) {
        const rates r = measure({s, 100, 20, 50});
        // Half of 20–50 gaps spread over 20 ms sometimes fall within 5 ms by chance.
        // Those that did are insufficient evidence now: they fill the window evenly, as jitter twice
        // the window wide does, and the check no longer calls that a failure.
        EXPECT_EQ(r.jittered_failed, 0) << name_of(s);
        // 20–50 retries inside 20 ms are a wave at desynchronized's default scale (10 ms buckets,
        // 100 ms shortest window); judged at a 2 ms / 20 ms scale below they are a spread.
        EXPECT_EQ(r.desynchronized_failed, s == shape::above ? 144 : 0) << name_of(s);
    }
    constexpr std::string_view fine = "check = \"desynchronized\"\nbucket = \"2ms\"\nmin_window = \"20ms\"\n";
    EXPECT_LE(measure({shape::above, 100, 20, 50}, default_jittered, fine).desynchronized_failed, one_percent);
    EXPECT_GE(measure({shape::none, 100, 20, 50}, default_jittered, fine).desynchronized_failed, seeds - one_percent);
    // Eight gaps over 20 ms: more than half of them within 5 ms in 71 runs; in all but 3 the majority
    // fills the window evenly, which is insufficient evidence, not a failure.
    const rates eight = measure({shape::above, 100, 8, 8});
    EXPECT_EQ(eight.jittered_failed, 3);
    EXPECT_EQ(eight.insufficient, 68);
}

// Up to 10 ms of queueing per retry spreads an unjittered herd over 12 ms, wider than the default
// 5 ms floor: it is never a pass, but in all but 14 runs the gaps fill the window evenly, so the
// check cannot tell them from narrow jitter (insufficient evidence). The herd suites' 15 ms floor,
// wider than that noise, catches it every time and still passes every jitter shape at base 400 ms.
TEST(jitter_rates, queueing_noise_is_not_jitter) {
    const rates wider_than_the_floor = measure({shape::none, 400, 20, 50, 10});
    EXPECT_EQ(wider_than_the_floor.jittered_failed, 14);
    EXPECT_EQ(wider_than_the_floor.jittered_failed + wider_than_the_floor.insufficient, seeds);
    constexpr std::string_view herd_suites = "check = \"jittered\"\nnoise_floor = \"15ms\"\n";
    EXPECT_GE(measure({shape::none, 400, 20, 50, 10}, herd_suites).jittered_failed, seeds - one_percent);
    for (const shape s : jittered_shapes) {
        EXPECT_LE(measure({s, 400, 20, 50, 10}, herd_suites).jittered_failed, one_percent) << name_of(s);
    }
}

// The conformance herd probe (suites/conformance/herd.toml) meets fixed delays of a second, like
// curl's, from 24 processes on a loaded or sanitizer-slowed machine: up to 30 ms of queueing per
// retry. Its window is at least 3 % of the median gap, so that noise is not taken for jitter, and
// every shape that scales with the delay still passes. A constant +U(0, 100ms) is under 3 % of the
// later delays (2 s, 4 s): judged as too little jitter, as it is for a herd at that scale.
TEST(jitter_rates, the_herd_probe_takes_a_second_of_delay_with_heavy_noise_for_no_jitter) {
    constexpr std::string_view herd_probe = "check = \"jittered\"\nnoise_floor = \"15ms\"\nmin_relative_spread = 0.03\n";
    EXPECT_EQ(measure({shape::none, 1000, 24, 24, 30}, herd_probe).jittered_failed, seeds);
    for (const shape s : jittered_shapes) {
        EXPECT_EQ(measure({s, 1000, 24, 24, 30}, herd_probe).jittered_failed, s == shape::additive ? seeds : 0)
            << name_of(s);
    }
}

// The same herd seen by desynchronized: 30 ms of queueing spreads a 1 s fixed-delay wave over
// ~30 ms, which against the absolute 100 ms shortest window alone passes as a spread in all but 2
// of 200 runs. The window is at least 0.2 × the median wait before the retry (default
// min_relative_window), so a wave is judged at the scale of the delay: caught every time, and every
// shape that spreads in proportion to the delay still passes. +U(0, 100ms) is 100 ms over waits
// of 1–4 s: a wave at that scale in 3 of 200 runs.
TEST(jitter_rates, desynchronized_judges_a_wave_at_the_scale_of_the_delay) {
    constexpr std::string_view absolute_only = "check = \"desynchronized\"\nmin_relative_window = 0\n";
    EXPECT_EQ(measure({shape::none, 1000, 24, 24, 30}, default_jittered, absolute_only).desynchronized_failed, 2);
    EXPECT_EQ(measure({shape::none, 1000, 24, 24, 30}).desynchronized_failed, seeds);
    for (const shape s : jittered_shapes) {
        EXPECT_EQ(measure({s, 1000, 24, 24, 30}).desynchronized_failed, s == shape::additive ? 3 : 0) << name_of(s);
    }
}

// The herd suites (suites/herd-*.toml) at their settings: base 1 s, 24 operations, the client's
// own slowness under a sanitizer on a loaded machine (up to 50 ms per retry) as queueing. Strict on
// purpose: a spread must be wide at the scale of the wait, so the narrow shapes — +U(0, 100ms) and
// +0–20 % — count as waves there (the suites' good clients use full and decorrelated jitter).
TEST(jitter_rates, the_herd_suites_settings_hold_under_sanitizer_noise) {
    constexpr std::string_view jittered = "check = \"jittered\"\nnoise_floor = \"15ms\"\nmin_relative_spread = 0.05\n";
    constexpr std::string_view desynchronized = "check = \"desynchronized\"\nmin_relative_window = 1\n";
    const rates none = measure({shape::none, 1000, 24, 24, 50}, jittered, desynchronized);
    EXPECT_EQ(none.jittered_failed, seeds);
    EXPECT_EQ(none.desynchronized_failed, seeds);
    for (const shape s : jittered_shapes) {
        const rates r = measure({s, 1000, 24, 24, 50}, jittered, desynchronized);
        // +0–20 % failed 52 runs before narrow spreads became insufficient evidence.
        EXPECT_EQ(r.jittered_failed, s == shape::additive ? seeds : 0) << name_of(s);
        EXPECT_EQ(r.desynchronized_failed, s == shape::additive ? 170 : s == shape::above ? 9 : 0) << name_of(s);
    }
}

}  // namespace
}  // namespace faultline::checks
