#include "faultline/retry/circuit_breaker.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <limits>
#include <stdexcept>
#include <thread>

namespace faultline::retry {
namespace {

using namespace std::chrono_literals;

const time_point t0{std::chrono::hours{1}};

circuit_breaker_options small() {
    return circuit_breaker_options{}
        .with_window_size(4)
        .with_minimum_calls(4)
        .with_failure_ratio(0.5)
        .with_open_duration(5s)
        .with_half_open_probes(1);
}

void call(circuit_breaker& b, time_point now, call_result r) {
    ASSERT_TRUE(b.try_acquire(now));
    b.record(now, r);
}

TEST(CircuitBreaker, RejectsAFailureRatioOutsideZeroToOne) {
    // A NaN ratio made every comparison false: the breaker could never open.
    for (const double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(), -0.5,
                             1.5})
        EXPECT_THROW(circuit_breaker{small().with_failure_ratio(bad)}, std::invalid_argument) << bad;
    EXPECT_NO_THROW(circuit_breaker{small().with_failure_ratio(1.0)});
}

TEST(CircuitBreaker, ClosedOpenHalfOpenClosed) {
    circuit_breaker b{small()};
    call(b, t0, call_result::success);
    call(b, t0, call_result::failure);
    call(b, t0, call_result::success);
    EXPECT_EQ(b.state(t0), breaker_state::closed);  // 3 results: below minimum_calls
    call(b, t0, call_result::failure);              // 2 of 4 failed = 0.5
    EXPECT_EQ(b.state(t0), breaker_state::open);
    EXPECT_EQ(b.times_opened(), 1U);

    EXPECT_FALSE(b.try_acquire(t0 + 4999ms));
    EXPECT_EQ(b.rejected(), 1U);

    EXPECT_TRUE(b.try_acquire(t0 + 5s));  // half-open: one probe
    EXPECT_EQ(b.state(t0 + 5s), breaker_state::half_open);
    EXPECT_EQ(b.times_half_opened(), 1U);
    EXPECT_FALSE(b.try_acquire(t0 + 5s));  // the probe slot is taken
    EXPECT_EQ(b.rejected(), 2U);
    b.record(t0 + 5s, call_result::success);
    EXPECT_EQ(b.state(t0 + 5s), breaker_state::closed);
    EXPECT_EQ(b.times_closed(), 1U);
}

TEST(CircuitBreaker, FailedProbeReopens) {
    circuit_breaker b{small()};
    for (int i = 0; i < 4; ++i) call(b, t0, call_result::failure);
    ASSERT_EQ(b.state(t0), breaker_state::open);
    call(b, t0 + 5s, call_result::failure);
    EXPECT_EQ(b.state(t0 + 5s), breaker_state::open);
    EXPECT_EQ(b.times_opened(), 2U);
    EXPECT_FALSE(b.try_acquire(t0 + 9s));  // the open period restarted at t0 + 5 s
    EXPECT_TRUE(b.try_acquire(t0 + 10s));
}

TEST(CircuitBreaker, IgnoredResultsOnlyReleaseTheProbe) {
    circuit_breaker b{small()};
    for (int i = 0; i < 10; ++i) call(b, t0, call_result::ignored);
    EXPECT_EQ(b.state(t0), breaker_state::closed);
    for (int i = 0; i < 4; ++i) call(b, t0, call_result::failure);
    call(b, t0 + 5s, call_result::ignored);
    EXPECT_EQ(b.state(t0 + 5s), breaker_state::half_open);
    call(b, t0 + 5s, call_result::success);
    EXPECT_EQ(b.state(t0 + 5s), breaker_state::closed);
}

TEST(CircuitBreaker, SeveralProbesMustAllSucceed) {
    circuit_breaker b{small().with_half_open_probes(2)};
    for (int i = 0; i < 4; ++i) call(b, t0, call_result::failure);
    EXPECT_TRUE(b.try_acquire(t0 + 5s));
    EXPECT_TRUE(b.try_acquire(t0 + 5s));
    EXPECT_FALSE(b.try_acquire(t0 + 5s));
    b.record(t0 + 5s, call_result::success);
    EXPECT_EQ(b.state(t0 + 5s), breaker_state::half_open);
    b.record(t0 + 5s, call_result::success);
    EXPECT_EQ(b.state(t0 + 5s), breaker_state::closed);
}

TEST(CircuitBreaker, WindowSlides) {
    circuit_breaker b{small()};
    // F S S S: 1/4; then S pushes the failure out, F F brings it to 2/4 -> open.
    call(b, t0, call_result::failure);
    for (int i = 0; i < 4; ++i) call(b, t0, call_result::success);
    call(b, t0, call_result::failure);
    EXPECT_EQ(b.state(t0), breaker_state::closed);  // S S S F
    call(b, t0, call_result::failure);              // S S F F
    EXPECT_EQ(b.state(t0), breaker_state::open);
}

TEST(CircuitBreaker, ClosingStartsWithAnEmptyWindow) {
    circuit_breaker b{small()};
    for (int i = 0; i < 4; ++i) call(b, t0, call_result::failure);
    call(b, t0 + 5s, call_result::success);
    ASSERT_EQ(b.state(t0 + 5s), breaker_state::closed);
    for (int i = 0; i < 3; ++i) call(b, t0 + 5s, call_result::failure);
    EXPECT_EQ(b.state(t0 + 5s), breaker_state::closed);  // 3 results < minimum_calls
}

}  // namespace
}  // namespace faultline::retry

namespace faultline::retry {
namespace {

TEST(CircuitBreakerThreads, CountsStayConsistentUnderTwoThreads) {
    circuit_breaker b{circuit_breaker_options{}.with_window_size(10).with_minimum_calls(10).with_open_duration(1ms)};
    std::atomic<long> admitted{0};
    auto work = [&](call_result r) {
        for (int i = 0; i < 20'000; ++i) {
            const time_point now = t0 + std::chrono::microseconds{i * 10};
            if (b.try_acquire(now)) {
                admitted.fetch_add(1);
                b.record(now, r);
            }
        }
    };
    std::thread a{work, call_result::failure};
    std::thread c{work, call_result::success};
    a.join();
    c.join();
    EXPECT_EQ(admitted.load() + static_cast<long>(b.rejected()), 40'000);
    EXPECT_GE(b.times_opened(), 1U);
    EXPECT_LE(b.times_half_opened(), b.times_opened());
}

}  // namespace
}  // namespace faultline::retry
