// The attempt barrier: exact release at the count-th arrival, at the deadline and on demand; its
// [fault.when] keys and their errors; and the engine handing out tickets only for fired attempts.
#include "faultline/faults/barrier.hpp"

#include <vector>

#include <gtest/gtest.h>

#include "faultline/faults/engine.hpp"
#include "test_support.hpp"

namespace faultline::faults {
namespace {

using namespace std::chrono_literals;
using testing::attempt_builder;
using testing::one_error;
using testing::one_rule;

barrier_config config_of(std::uint32_t count, std::chrono::nanoseconds timeout) {
    barrier_config c;
    c.count = count;
    c.timeout = timeout;
    return c;
}

// Counts the wakes each ticket received.
struct wake_log {
    std::vector<int> wakes;

    void watch(const barrier_ticket& ticket) {
        const std::size_t i = wakes.size();
        wakes.push_back(0);
        ticket.on_release([this, i] { ++wakes[i]; });
    }
};

TEST(attempt_barrier, the_count_th_arrival_releases_the_whole_group_once) {
    attempt_barrier barrier{config_of(3, 1s)};
    wake_log log;
    const barrier_ticket first = barrier.arrive(10ms);
    log.watch(first);
    const barrier_ticket second = barrier.arrive(250ms);
    log.watch(second);
    EXPECT_EQ(log.wakes, (std::vector<int>{0, 0}));
    EXPECT_FALSE(first.released());

    const barrier_ticket third = barrier.arrive(400ms);
    EXPECT_EQ(log.wakes, (std::vector<int>{1, 1}));
    // The last to arrive finds its group released and is woken at once.
    log.watch(third);
    EXPECT_EQ(log.wakes, (std::vector<int>{1, 1, 1}));
    EXPECT_EQ(first.position(), 1U);
    EXPECT_EQ(third.position(), 3U);
    // The deadline is the first arrival's time plus the timeout, for every member.
    EXPECT_EQ(first.deadline(), 1010ms);
    EXPECT_EQ(third.deadline(), 1010ms);

    // Releasing again (a late timer) wakes nobody twice.
    first.release_group();
    EXPECT_EQ(log.wakes, (std::vector<int>{1, 1, 1}));
}

TEST(attempt_barrier, the_next_arrival_after_a_release_starts_a_new_group) {
    attempt_barrier barrier{config_of(2, 1s)};
    const barrier_ticket a = barrier.arrive(0ms);
    const barrier_ticket b = barrier.arrive(5ms);
    const barrier_ticket c = barrier.arrive(7ms);
    EXPECT_TRUE(a.released());
    EXPECT_TRUE(b.released());
    EXPECT_FALSE(c.released());
    EXPECT_EQ(c.position(), 1U);
    EXPECT_EQ(c.deadline(), 1007ms);
}

TEST(attempt_barrier, a_timed_out_group_releases_what_has_gathered) {
    attempt_barrier barrier{config_of(5, 200ms)};
    wake_log log;
    const barrier_ticket a = barrier.arrive(0ms);
    log.watch(a);
    log.watch(barrier.arrive(50ms));
    // The server's timer at the deadline releases the group, short of its count.
    a.release_group();
    EXPECT_EQ(log.wakes, (std::vector<int>{1, 1}));
    const barrier_ticket next = barrier.arrive(210ms);
    EXPECT_EQ(next.position(), 1U);
    EXPECT_EQ(next.deadline(), 410ms);
}

TEST(attempt_barrier, an_arrival_past_the_deadline_releases_the_old_group_and_starts_anew) {
    // Group membership follows time, not how late the timer is.
    attempt_barrier barrier{config_of(5, 200ms)};
    wake_log log;
    const barrier_ticket a = barrier.arrive(0ms);
    log.watch(a);
    const barrier_ticket late = barrier.arrive(200ms);
    EXPECT_EQ(log.wakes, (std::vector<int>{1}));
    EXPECT_FALSE(late.released());
    EXPECT_EQ(late.position(), 1U);
    EXPECT_EQ(late.deadline(), 400ms);
}

TEST(attempt_barrier, a_deadline_near_the_end_of_time_does_not_overflow) {
    attempt_barrier barrier{config_of(2, 1h)};
    const auto late = std::chrono::nanoseconds::max() - 1ms;
    EXPECT_EQ(barrier.arrive(late).deadline(), std::chrono::nanoseconds::max());
}

TEST(barrier_format, reads_the_count_and_the_timeout) {
    const rule r = one_rule("[[fault]]\nkind = \"status\"\n[fault.when]\nattempts = [1]\nbarrier = 20\n"
                            "barrier_timeout = \"2s\"\n");
    ASSERT_TRUE(r.when.barrier);
    EXPECT_EQ(r.when.barrier->count, 20U);
    EXPECT_EQ(r.when.barrier->timeout, 2s);
    const rule defaulted = one_rule("[[fault]]\nkind = \"status\"\n[fault.when]\nbarrier = 2\n");
    ASSERT_TRUE(defaulted.when.barrier);
    EXPECT_EQ(defaulted.when.barrier->timeout, 1s);
    EXPECT_FALSE(one_rule("[[fault]]\nkind = \"status\"\n").when.barrier);
}

TEST(barrier_format, errors_name_the_key) {
    EXPECT_EQ(one_error("[[fault]]\nkind = \"status\"\n[fault.when]\nbarrier = 1\n"),
              "rules.toml:4:11: [fault.when]: barrier: must be in [2, 1000000], got 1");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"status\"\n[fault.when]\nbarrier = \"20\"\n"),
              "rules.toml:4:11: [fault.when]: barrier: expected an integer, got a string");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"status\"\n[fault.when]\nbarrier = 3\nbarrier_timeout = \"0s\"\n"),
              "rules.toml:5:19: [fault.when]: barrier_timeout: must be in [1ms, 1h], got \"0s\"");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"status\"\n[fault.when]\nbarrier_timeout = \"2s\"\n"),
              "rules.toml:4:19: [fault.when]: barrier_timeout: only applies with \"barrier\" (the number of "
              "attempts to gather)");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"refuse\"\n[fault.when]\nbarrier = 3\n"),
              "rules.toml:3:1: [fault.when]: barrier: a connection-level fault (\"refuse\" here) acts on accept "
              "and has no attempts to hold");
}

TEST(barrier_engine, tickets_go_only_to_attempts_the_rule_fires_on) {
    fault_engine engine{7, {one_rule("[[fault]]\nname = \"herd\"\nkind = \"status\"\n[fault.when]\n"
                                     "attempts = [1]\nbarrier = 2\nbarrier_timeout = \"500ms\"\n")}};
    attempt_builder a;
    a.since_start = 100ms;
    const fault_decision first = engine.on_attempt(a.build());
    ASSERT_TRUE(first.barrier());
    EXPECT_EQ(first.barrier()->deadline(), 600ms);
    EXPECT_FALSE(first.barrier()->released());

    // A retry does not match `attempts`: served at once, not counted towards the group.
    a.attempt = 2;
    const fault_decision retry = engine.on_attempt(a.build());
    EXPECT_FALSE(retry.has_fault());
    EXPECT_FALSE(retry.barrier());
    EXPECT_FALSE(first.barrier()->released());

    a.attempt = 1;
    a.operation_hash = 43;
    const fault_decision second = engine.on_attempt(a.build());
    ASSERT_TRUE(second.barrier());
    EXPECT_EQ(second.plan()->phase, commit_phase::before);
    EXPECT_TRUE(first.barrier()->released());
    EXPECT_EQ(second.barrier()->position(), 2U);
}

TEST(barrier_engine, an_overflowed_attempt_is_not_held) {
    engine_limits limits;
    limits.max_active_faults = 1;
    fault_engine engine{7, {one_rule("[[fault]]\nkind = \"status\"\n[fault.when]\nbarrier = 3\n")}, limits};
    attempt_builder a;
    const fault_decision held = engine.on_attempt(a.build());
    EXPECT_TRUE(held.barrier());
    const fault_decision overflowed = engine.on_attempt(a.build());
    EXPECT_TRUE(overflowed.overflowed());
    EXPECT_FALSE(overflowed.barrier());
}

}  // namespace
}  // namespace faultline::faults
