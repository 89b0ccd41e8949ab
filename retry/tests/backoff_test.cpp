#include "faultline/retry/backoff.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

namespace faultline::retry {
namespace {

using namespace std::chrono_literals;

backoff_policy policy_of(jitter_kind kind) {
    return backoff_policy{}.with_base(100ms).with_cap(1s).with_multiplier(2.0).with_jitter(kind);
}

std::vector<duration> draws(jitter_kind kind, random_source& random, int n) {
    backoff b{policy_of(kind)};
    std::vector<duration> out;
    for (int i = 0; i < n; ++i) out.push_back(b.next(random));
    return out;
}

TEST(ExponentialDelay, GrowsAndCaps) {
    const auto p = policy_of(jitter_kind::none);
    EXPECT_EQ(exponential_delay(p, 0), 100ms);
    EXPECT_EQ(exponential_delay(p, 1), 200ms);
    EXPECT_EQ(exponential_delay(p, 3), 800ms);
    EXPECT_EQ(exponential_delay(p, 4), 1s);
    EXPECT_EQ(exponential_delay(p, 50), 1s);
}

// multiplier 2 takes its own path (ldexp instead of pow); it must be exact at every index, from
// base * 2^n with no rounding to saturation at the cap, and an odd base keeps every bit.
TEST(ExponentialDelay, DoublingIsExactAtEveryIndex) {
    auto p = policy_of(jitter_kind::none);
    p.base = duration{7};
    p.cap = duration::max();
    for (std::uint32_t n = 0; n <= 59; ++n) EXPECT_EQ(exponential_delay(p, n), duration{std::int64_t{7} << n}) << n;
    EXPECT_EQ(exponential_delay(p, 61), duration::max());  // 7 * 2^61 > 2^63 - 1
    EXPECT_EQ(exponential_delay(p, 1100), duration::max());  // 2^1100 is +inf in double
    EXPECT_EQ(exponential_delay(p, std::numeric_limits<std::uint32_t>::max()), duration::max());
    p.base = duration{0};
    EXPECT_EQ(exponential_delay(p, 3000), duration{0});
}

TEST(ExponentialDelay, HugeRetryIndicesDoNotOverflow) {
    const auto p = policy_of(jitter_kind::none);
    EXPECT_EQ(exponential_delay(p, 4'000'000'000U), 1s);
    EXPECT_EQ(exponential_delay(p, std::numeric_limits<std::uint32_t>::max()), 1s);
    auto wide = p;
    wide.cap = duration::max();
    wide.multiplier = 10.0;
    EXPECT_EQ(exponential_delay(wide, 400), duration::max());  // 10^400 is +inf in double
    EXPECT_EQ(exponential_delay(wide, 4'000'000'000U), duration::max());
    wide.base = duration::max() / 2;
    wide.multiplier = 3.0;
    EXPECT_EQ(exponential_delay(wide, 1), duration::max());
    EXPECT_EQ(exponential_delay(wide, 0), duration::max() / 2);
}

TEST(ExponentialDelay, DegenerateInputsStayInRange) {
    auto p = policy_of(jitter_kind::none);
    p.base = -5ms;
    EXPECT_EQ(exponential_delay(p, 3), 0ns);
    p = policy_of(jitter_kind::none);
    p.multiplier = 1.0;
    EXPECT_EQ(exponential_delay(p, 1'000'000), 100ms);
    p.base = 5s;  // base above cap: the cap wins
    EXPECT_EQ(exponential_delay(p, 0), 1s);
}

TEST(Backoff, NoJitterExactDelays) {
    auto random = sequence_random::of_units({0.5});
    EXPECT_EQ(draws(jitter_kind::none, random, 6), (std::vector<duration>{100ms, 200ms, 400ms, 800ms, 1s, 1s}));
}

TEST(Backoff, FullJitterExactDelays) {
    auto random = sequence_random::of_units({0.5, 0.25, 0.75, 0.0, 0.5, 0.5});
    // U[0, t): 0.5*100, 0.25*200, 0.75*400, 0*800, 0.5*1000, 0.5*1000 (capped range)
    EXPECT_EQ(draws(jitter_kind::full, random, 6), (std::vector<duration>{50ms, 50ms, 300ms, 0ms, 500ms, 500ms}));
}

TEST(Backoff, EqualJitterExactDelays) {
    auto random = sequence_random::of_units({0.5, 0.0, 0.25, 0.5, 0.75});
    // t/2 + U[0, t/2)
    EXPECT_EQ(draws(jitter_kind::equal, random, 5),
              (std::vector<duration>{75ms, 100ms, 250ms, 600ms, 875ms}));
}

TEST(Backoff, DecorrelatedJitterExactDelays) {
    auto random = sequence_random::of_units({0.5, 0.5, 0.5, 0.5, 0.0, 0.75});
    // U[base, min(cap, 3*prev)), prev starts at base = 100 ms:
    // [100,300)->200; [100,600)->350; [100,1000)->550; [100,1000)->550; ->100; [100,300)->250
    EXPECT_EQ(draws(jitter_kind::decorrelated, random, 6),
              (std::vector<duration>{200ms, 350ms, 550ms, 550ms, 100ms, 250ms}));
}

TEST(Backoff, ProportionalJitterExactDelays) {
    auto random = sequence_random::of_units({0.5, 0.0, 0.5, 0.75, 0.5});
    // U[0.8t, min(1.2t, cap)): [80,120)->100; [160,240)->160; [320,480)->400; [640,960)->880;
    // t = cap: [800, 1000)->900
    EXPECT_EQ(draws(jitter_kind::proportional, random, 5),
              (std::vector<duration>{100ms, 160ms, 400ms, 880ms, 900ms}));
}

// A NaN fraction used to pass std::clamp unchanged and turn every proportional delay into 0.
TEST(Backoff, RejectsFractionsAndMultipliersThatAreNotNumbersInRange) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    for (const double bad : {nan, inf, -inf, -0.1, 1.5})
        EXPECT_THROW(backoff{policy_of(jitter_kind::proportional).with_jitter_fraction(bad)}, std::invalid_argument)
            << "jitter_fraction " << bad;
    for (const double bad : {nan, inf, -inf, 0.0, -2.0})
        EXPECT_THROW(backoff{policy_of(jitter_kind::full).with_multiplier(bad)}, std::invalid_argument)
            << "multiplier " << bad;
    EXPECT_NO_THROW(backoff{policy_of(jitter_kind::proportional).with_jitter_fraction(0.0)});
    EXPECT_NO_THROW(backoff{policy_of(jitter_kind::proportional).with_jitter_fraction(1.0)});
    EXPECT_NO_THROW(backoff{policy_of(jitter_kind::full).with_multiplier(1e300)});
}

TEST(Backoff, ResetStartsOver) {
    auto random = sequence_random::of_units({0.5});
    backoff b{policy_of(jitter_kind::decorrelated)};
    EXPECT_EQ(b.next(random), 200ms);
    EXPECT_EQ(b.next(random), 350ms);
    EXPECT_EQ(b.retry_index(), 2U);
    b.reset();
    EXPECT_EQ(b.retry_index(), 0U);
    EXPECT_EQ(b.next(random), 200ms);
}

TEST(Backoff, DrawNearOneNeverReachesTheUpperEnd) {
    // The largest unit draw (1 - 2^-53) must still land strictly below the range's end.
    sequence_random random{{~std::uint64_t{0}}};
    for (const auto kind : {jitter_kind::full, jitter_kind::equal, jitter_kind::proportional}) {
        backoff b{policy_of(kind)};
        for (int i = 0; i < 10; ++i) {
            const auto t = exponential_delay(b.policy(), b.retry_index());
            const auto d = b.next(random);
            EXPECT_LT(d, kind == jitter_kind::proportional ? std::min<duration>(t * 12 / 10, 1s) : t)
                << to_string(kind);
        }
    }
}

TEST(Backoff, HugeIndicesStayInsideTheCap) {
    seeded_random random{7};
    for (const auto kind : {jitter_kind::none, jitter_kind::full, jitter_kind::equal, jitter_kind::decorrelated,
                            jitter_kind::proportional}) {
        auto p = policy_of(kind).with_cap(duration::max()).with_base(duration::max() / 4).with_multiplier(1e300);
        backoff b{p};
        for (int i = 0; i < 100; ++i) {
            const auto d = b.next(random);
            EXPECT_GE(d, 0ns) << to_string(kind);
            EXPECT_LE(d, duration::max()) << to_string(kind);
        }
    }
}

// 10,000 draws per kind and retry index: every draw inside its envelope, the mean near the
// envelope's expected value.
constexpr int draws_per_kind = 10'000;
constexpr int indices = 8;

struct envelope {
    double low, high, mean;  // in ns
};

envelope expected(jitter_kind kind, double t, double cap) {
    switch (kind) {
        case jitter_kind::none: return {t, t, t};
        case jitter_kind::full: return {0, t, t / 2};
        case jitter_kind::equal: return {t / 2, t, 3 * t / 4};
        case jitter_kind::proportional: {
            const double hi = std::min(1.2 * t, cap);
            return {0.8 * t, hi, (0.8 * t + hi) / 2};
        }
        case jitter_kind::decorrelated: break;
    }
    return {0, cap, cap / 2};
}

class JitterDistribution : public ::testing::TestWithParam<jitter_kind> {};

TEST_P(JitterDistribution, EnvelopeAndMeanPerRetryIndex) {
    const jitter_kind kind = GetParam();
    const auto p = policy_of(kind);
    seeded_random random{42};
    std::array<double, indices> sum{};
    for (int i = 0; i < draws_per_kind; ++i) {
        backoff b{p};
        for (int n = 0; n < indices; ++n) {
            const double t = static_cast<double>(exponential_delay(p, static_cast<std::uint32_t>(n)).count());
            const double d = static_cast<double>(b.next(random).count());
            const auto e = expected(kind, t, static_cast<double>(p.cap.count()));
            ASSERT_GE(d, e.low) << "index " << n;
            if (kind == jitter_kind::none)
                ASSERT_EQ(d, e.high);
            else
                ASSERT_LT(d, e.high) << "index " << n;
            sum[static_cast<std::size_t>(n)] += d;
        }
    }
    for (int n = 0; n < indices; ++n) {
        const double t = static_cast<double>(exponential_delay(p, static_cast<std::uint32_t>(n)).count());
        const auto e = expected(kind, t, static_cast<double>(p.cap.count()));
        EXPECT_NEAR(sum[static_cast<std::size_t>(n)] / draws_per_kind, e.mean, 0.02 * t) << "index " << n;
    }
}

INSTANTIATE_TEST_SUITE_P(Kinds, JitterDistribution,
                         ::testing::Values(jitter_kind::none, jitter_kind::full, jitter_kind::equal,
                                           jitter_kind::proportional),
                         [](const auto& param_info) { return std::string{to_string(param_info.param)}; });

TEST(DecorrelatedJitter, EnvelopeOverManyDraws) {
    const auto p = policy_of(jitter_kind::decorrelated);
    seeded_random random{42};
    double first_sum = 0;
    for (int i = 0; i < draws_per_kind; ++i) {
        backoff b{p};
        duration prev = p.base;
        for (int n = 0; n < indices; ++n) {
            const duration d = b.next(random);
            ASSERT_GE(d, p.base);
            ASSERT_LT(d, std::min<duration>(p.cap, prev * 3));
            if (n == 0) first_sum += static_cast<double>(d.count());
            prev = d;
        }
    }
    // The first delay is U[base, 3 base): mean 2 base.
    EXPECT_NEAR(first_sum / draws_per_kind, 2.0 * static_cast<double>(p.base.count()),
                0.02 * static_cast<double>(p.base.count()));
}

class NoSpikeAtCap : public ::testing::TestWithParam<jitter_kind> {};

TEST_P(NoSpikeAtCap, DrawsDoNotPileUpAtTheCap) {
    // Retry index 20 is far past saturation (100 ms * 2^20 >> 1 s); clamping after the draw would put
    // ~all proportional and ~2/3 of decorrelated draws exactly on the cap.
    const auto p = policy_of(GetParam());
    seeded_random random{1234};
    int at_cap = 0;
    int above_cap = 0;
    for (int i = 0; i < draws_per_kind; ++i) {
        backoff b{p};
        duration d{};
        for (int n = 0; n <= 20; ++n) d = b.next(random);
        at_cap += d == p.cap ? 1 : 0;
        above_cap += d > p.cap ? 1 : 0;
    }
    EXPECT_EQ(above_cap, 0);
    EXPECT_LT(at_cap, draws_per_kind / 100);
}

INSTANTIATE_TEST_SUITE_P(Kinds, NoSpikeAtCap,
                         ::testing::Values(jitter_kind::full, jitter_kind::equal, jitter_kind::decorrelated,
                                           jitter_kind::proportional),
                         [](const auto& param_info) { return std::string{to_string(param_info.param)}; });

}  // namespace
}  // namespace faultline::retry
