#include "faultline/retry/deadline.hpp"

#include <gtest/gtest.h>

namespace faultline::retry {
namespace {

using namespace std::chrono_literals;

const time_point t0{std::chrono::hours{1}};

TEST(Deadline, Remaining) {
    EXPECT_EQ(remaining(t0 + 250ms, t0), duration{250ms});
    EXPECT_EQ(remaining(t0, t0), duration{0});
    EXPECT_EQ(remaining(t0, t0 + 1s), duration{0});
}

TEST(Deadline, AttemptTimeoutIsTheSmallerBound) {
    EXPECT_EQ(attempt_timeout(1s, t0 + 300ms, t0), duration{300ms});
    EXPECT_EQ(attempt_timeout(100ms, t0 + 300ms, t0), duration{100ms});
    EXPECT_EQ(attempt_timeout(std::nullopt, t0 + 300ms, t0), duration{300ms});
    EXPECT_EQ(attempt_timeout(100ms, std::nullopt, t0), duration{100ms});
    EXPECT_EQ(attempt_timeout(std::nullopt, std::nullopt, t0), std::nullopt);
    EXPECT_EQ(attempt_timeout(1s, t0, t0 + 5ms), duration{0});
}

TEST(Deadline, HeaderMillisecondsRoundUpAndAreNeverZero) {
    EXPECT_EQ(deadline_header_ms(1500ms), 1500);
    EXPECT_EQ(deadline_header_ms(1ms + 1ns), 2);
    EXPECT_EQ(deadline_header_ms(999'999ns), 1);
    EXPECT_EQ(deadline_header_ms(1ns), 1);
    EXPECT_EQ(deadline_header_ms(0ns), 1);
    EXPECT_EQ(deadline_header_ms(-5ms), 1);
    EXPECT_EQ(deadline_header_ms(duration::max()), duration::max().count() / 1'000'000 + 1);
}

TEST(Deadline, HeaderNames) {
    EXPECT_EQ(attempt_header, "Faultline-Attempt");
    EXPECT_EQ(deadline_header, "Faultline-Deadline-Ms");
    EXPECT_EQ(idempotency_key_header, "Idempotency-Key");
}

}  // namespace
}  // namespace faultline::retry
