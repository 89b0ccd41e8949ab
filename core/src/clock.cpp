#include "faultline/core/clock.hpp"

#include <thread>

namespace faultline {

time_point steady_clock_source::now() const { return std::chrono::steady_clock::now(); }

wall_time_point steady_clock_source::wall_now() const { return std::chrono::system_clock::now(); }

void steady_clock_source::sleep_until(time_point t) { std::this_thread::sleep_until(t); }

steady_clock_source& steady_clock_source::instance() {
    static steady_clock_source source;
    return source;
}

manual_clock::manual_clock(time_point start, wall_time_point wall_start)
    : start_{start}, wall_start_{wall_start} {}

time_point manual_clock::now() const { return start_ + duration{elapsed_.load()}; }

wall_time_point manual_clock::wall_now() const {
    return wall_start_ + std::chrono::duration_cast<wall_time_point::duration>(duration{elapsed_.load()});
}

void manual_clock::sleep_until(time_point t) {
    // Never moves backwards: a sleep into the past returns at once, as a real sleep would.
    const auto target = (t - start_).count();
    auto current = elapsed_.load();
    while (current < target && !elapsed_.compare_exchange_weak(current, target)) {
    }
}

void manual_clock::advance(duration d) { elapsed_.fetch_add(d.count()); }

}  // namespace faultline
