// for_each_window_start merges four sorted sequences on the fly; it must give exactly the sorted,
// distinct union of every event time t and t - width + 1 over both lists, which is what the window
// checks (amplification, retry_budget) were judged with when they built and sorted that union.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "../src/support.hpp"

namespace faultline::checks {
namespace {

std::vector<std::int64_t> starts_by_sorting(const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b,
                                            std::int64_t width) {
    std::vector<std::int64_t> out;
    for (const auto* list : {&a, &b}) {
        for (std::int64_t t : *list) {
            out.push_back(t);
            out.push_back(t - width + 1);
        }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

std::vector<std::int64_t> starts_merged(const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b,
                                        std::int64_t width) {
    std::vector<std::int64_t> out;
    for_each_window_start(a, b, width, [&](std::int64_t s) { out.push_back(s); });
    return out;
}

TEST(window_starts, merging_gives_the_sorted_distinct_union) {
    std::mt19937_64 random{7};
    for (int trial = 0; trial < 500; ++trial) {
        std::vector<std::int64_t> a(random() % 20);
        std::vector<std::int64_t> b(random() % 20);
        // Small ranges, so times repeat and starts coincide across the lists.
        for (auto& t : a) t = static_cast<std::int64_t>(random() % 50);
        for (auto& t : b) t = static_cast<std::int64_t>(random() % 50);
        std::sort(a.begin(), a.end());
        std::sort(b.begin(), b.end());
        const std::int64_t width = 1 + static_cast<std::int64_t>(random() % 12);
        ASSERT_EQ(starts_merged(a, b, width), starts_by_sorting(a, b, width)) << "trial " << trial;
    }
}

TEST(window_starts, width_one_gives_each_time_once) {
    EXPECT_EQ(starts_merged({1, 1, 4}, {2, 4}, 1), (std::vector<std::int64_t>{1, 2, 4}));
    EXPECT_TRUE(starts_merged({}, {}, 5).empty());
}

}  // namespace
}  // namespace faultline::checks
