// The ziggurat normal sampler: its tables close (256 layers of equal area meet the curve's top at
// 0), and a million draws have the standard normal's moments, its central mass and its tail beyond
// r, within a few standard errors (the seed is fixed, so these never flake).
#include "../src/normal.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace faultline::storm {
namespace {

TEST(ziggurat_tables, the_layers_have_equal_area_and_close_at_the_top) {
    const ziggurat_tables& t = ziggurat_tables::instance();
    EXPECT_EQ(t.edge[1], ziggurat_tables::r);
    for (std::size_t i = 1; i < ziggurat_tables::layers - 1; ++i) {
        EXPECT_GT(t.edge[i], t.edge[i + 1]);
        EXPECT_NEAR(t.edge[i] * (t.density[i + 1] - t.density[i]), ziggurat_tables::v, 1e-15) << i;
    }
    // The top layer, [0, edge[255]] x [f(edge[255]), 1], must have the same area: the recurrence
    // would put edge[256] at 0 up to rounding.
    const double top = t.edge[255] * (1.0 - t.density[255]);
    EXPECT_NEAR(top, ziggurat_tables::v, 1e-9);
    // The base strip: its rectangle up to r plus the tail beyond r has area v too.
    const double tail = std::sqrt(std::acos(-1.0) / 2.0) * std::erfc(ziggurat_tables::r / std::sqrt(2.0));
    EXPECT_NEAR(ziggurat_tables::r * t.density[1] + tail, ziggurat_tables::v, 1e-12);
}

TEST(normal_sampler, a_million_draws_are_standard_normal) {
    fast_random random{2015};
    normal_sampler normal;
    constexpr int n = 1'000'000;
    double sum = 0;
    double squares = 0;
    double fourth = 0;
    int within_one = 0;
    int beyond_r = 0;
    for (int i = 0; i < n; ++i) {
        const double z = normal.next(random);
        sum += z;
        squares += z * z;
        fourth += z * z * z * z;
        within_one += std::fabs(z) < 1.0 ? 1 : 0;
        beyond_r += std::fabs(z) > ziggurat_tables::r ? 1 : 0;
    }
    EXPECT_NEAR(sum / n, 0.0, 0.005);         // standard error 0.001
    EXPECT_NEAR(squares / n, 1.0, 0.007);     // 0.0014
    EXPECT_NEAR(fourth / n, 3.0, 0.05);       // 0.01
    EXPECT_NEAR(within_one / double{n}, 0.682689, 0.0025);  // 0.00047
    // 2 (1 - Phi(r)) = 2.58e-4: 258 of a million, standard error 16.
    EXPECT_GT(beyond_r, 258 - 80);
    EXPECT_LT(beyond_r, 258 + 80);
}

TEST(normal_sampler, the_same_words_give_the_same_variates) {
    fast_random a{7};
    fast_random b{7};
    normal_sampler na;
    normal_sampler nb;
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(na.next(a), nb.next(b));
}

}  // namespace
}  // namespace faultline::storm
