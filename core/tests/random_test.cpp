#include "faultline/core/random.hpp"

#include <gtest/gtest.h>

#include <array>

namespace faultline {
namespace {

TEST(random, seeded_mt19937_64_matches_the_standard_sequence) {
    // The standard fixes the 10000th output of mt19937_64 seeded with 5489.
    seeded_random random{5489};
    std::uint64_t word = 0;
    for (int i = 0; i < 10000; ++i) word = random.next();
    EXPECT_EQ(word, 9981545732273789042ULL);
}

TEST(random, sequence_of_units_replays_exact_unit_draws) {
    auto random = sequence_random::of_units({0.0, 0.25, 0.5, 0.999});
    EXPECT_EQ(uniform_unit(random), 0.0);
    EXPECT_EQ(uniform_unit(random), 0.25);
    EXPECT_EQ(uniform_unit(random), 0.5);
    EXPECT_EQ(uniform_unit(random), 0.999);
    EXPECT_EQ(uniform_unit(random), 0.0);  // cycles
}

TEST(random, uniform_maps_onto_the_half_open_range) {
    auto random = sequence_random::of_units({0.0, 0.5});
    EXPECT_EQ(uniform(random, 10.0, 20.0), 10.0);
    EXPECT_EQ(uniform(random, 10.0, 20.0), 15.0);
}

TEST(random, uniform_below_stays_in_range_and_covers_it) {
    seeded_random random{42};
    std::array<int, 7> seen{};
    for (int i = 0; i < 7000; ++i) {
        const auto v = uniform_below(random, 7);
        ASSERT_LT(v, 7u);
        ++seen[v];
    }
    for (const int count : seen) EXPECT_GT(count, 800);
}

TEST(random, bernoulli_clamps_probability) {
    seeded_random random{1};
    EXPECT_FALSE(bernoulli(random, 0.0));
    EXPECT_TRUE(bernoulli(random, 1.0));
    auto pinned = sequence_random::of_units({0.25});
    EXPECT_TRUE(bernoulli(pinned, 0.26));
    EXPECT_FALSE(bernoulli(pinned, 0.25));
}

TEST(random, hash_is_stable_across_runs) {
    EXPECT_EQ(hash_bytes("POST /payments"), hash_bytes("POST /payments"));
    EXPECT_NE(hash_bytes("POST /payments"), hash_bytes("POST /payment"));
    EXPECT_NE(mix64(1, 2), mix64(2, 1));
}

}  // namespace
}  // namespace faultline
