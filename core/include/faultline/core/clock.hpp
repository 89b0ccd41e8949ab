// Injected time. Every piece of faultline that reads the time takes a `clock&`, so unit tests drive
// a `manual_clock` and assert exact durations, while production uses `steady_clock_source`.
// Deadlines are absolute `time_point`s on the monotonic clock; wall time is only needed to turn an
// HTTP-date (Retry-After) into a duration.
#pragma once

#include <atomic>
#include <chrono>

namespace faultline {

using duration = std::chrono::nanoseconds;
using time_point = std::chrono::steady_clock::time_point;
using wall_time_point = std::chrono::system_clock::time_point;

// Thread-safety: implementations must allow concurrent calls.
class clock {
public:
    virtual ~clock() = default;
    virtual time_point now() const = 0;
    virtual wall_time_point wall_now() const = 0;
    // Blocks the calling thread until `t` (the synchronous retry loop's backoff sleep).
    virtual void sleep_until(time_point t) = 0;
};

// The real clocks. Stateless, so one shared instance serves everyone.
class steady_clock_source final : public clock {
public:
    time_point now() const override;
    wall_time_point wall_now() const override;
    void sleep_until(time_point t) override;

    static steady_clock_source& instance();
};

// A clock that moves only when told. `sleep_until` jumps straight to the requested time, so a
// synchronous retry loop runs instantly under test and its sleeps can be read off `now()`.
class manual_clock final : public clock {
public:
    explicit manual_clock(time_point start = time_point{std::chrono::hours{1}},
                          wall_time_point wall_start = wall_time_point{std::chrono::seconds{1'700'000'000}});

    time_point now() const override;
    wall_time_point wall_now() const override;
    void sleep_until(time_point t) override;

    void advance(duration d);

private:
    const time_point start_;
    const wall_time_point wall_start_;
    std::atomic<duration::rep> elapsed_{0};
};

}  // namespace faultline
