// The server's watch on its own workers: a worker kept from running (a CPU taken by other processes;
// here, a handler that holds it) is reported as one spell, from when its timer was due, as long as it
// lasted; and the watch stops with the listener.
#include "lateness_watch.hpp"

#include <boost/asio/post.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

namespace faultline::server::detail {
namespace {

using namespace std::chrono_literals;
using steady = lateness_watch::steady;

struct spell {
    steady::time_point from;
    std::chrono::nanoseconds length;
};

TEST(lateness_watch, a_worker_held_from_running_is_one_spell_from_when_its_timer_was_due) {
    listener workers{1, 100ms};
    std::promise<spell> reported;
    bool first = true;  // the worker's thread only
    // The held spell: a loaded machine (a sanitizer build) may add shorter ones of its own.
    lateness_watch watch{[&](steady::time_point from, std::chrono::nanoseconds length) {
        if (first && length >= 50ms) {
            reported.set_value({from, length});
            first = false;
        }
    }};
    watch.start(workers);
    workers.start();

    std::promise<steady::time_point> held;
    boost::asio::post(workers.context(0), [&] {
        held.set_value(steady::now());
        // What the watch is for: a worker that cannot run (this handler holds it 80 ms).
        std::this_thread::sleep_for(80ms);
    });
    const steady::time_point held_from = held.get_future().get();
    auto late = reported.get_future();
    ASSERT_EQ(late.wait_for(10s), std::future_status::ready);
    const spell s = late.get();
    // The timer was due within one period of the hold's start, and fired when the hold ended.
    EXPECT_LE(s.from, held_from + lateness_watch::period + 5ms);
    EXPECT_GE(s.length, 80ms - lateness_watch::period - 5ms);
    watch.stop();
    EXPECT_TRUE(workers.stop());  // the timer's cancelled wait keeps no worker from returning
}

}  // namespace
}  // namespace faultline::server::detail
