#include "faultline/core/clock.hpp"

#include <gtest/gtest.h>

using namespace std::chrono_literals;

namespace faultline {
namespace {

TEST(manual_clock, advances_only_when_told) {
    manual_clock clock;
    const auto start = clock.now();
    const auto wall_start = clock.wall_now();
    EXPECT_EQ(clock.now(), start);
    clock.advance(250ms);
    EXPECT_EQ(clock.now() - start, 250ms);
    EXPECT_EQ(clock.wall_now() - wall_start, 250ms);
}

TEST(manual_clock, sleep_until_jumps_forward_and_never_back) {
    manual_clock clock;
    const auto start = clock.now();
    clock.sleep_until(start + 2s);
    EXPECT_EQ(clock.now() - start, 2s);
    clock.sleep_until(start + 1s);
    EXPECT_EQ(clock.now() - start, 2s);
}

}  // namespace
}  // namespace faultline
