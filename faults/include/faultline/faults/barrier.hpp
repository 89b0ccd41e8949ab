// A barrier for attempts (`barrier` in a rule's [fault.when]): the attempts a rule fires on are held
// until `count` of them have gathered or `timeout` has passed since the first, then released all at
// once, each with the fault the rule decided for it. This lets the server, not client process
// start-up, line up a thundering herd: clients started together reach the server spread over their
// start-up time, which would hide a client that retries back to back.
//
// No I/O and no timers here. The engine joins each fired attempt to its rule's barrier and hands the
// server a ticket; the server waits for the release, and arms a timer at the group's deadline for
// each attempt it holds. Whichever timer fires first releases the whole group, so a group is
// released exactly once: at its count-th arrival, at its deadline, or when the server stops — never
// later than the deadline.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

namespace faultline::faults {

struct barrier_config {
    std::uint32_t count = 2;                           // attempts that make a group
    std::chrono::nanoseconds timeout{std::chrono::seconds{1}};  // from the group's first arrival
};

class barrier_group;

// One attempt's place in a group. Copies share the group; thread-safe.
class barrier_ticket {
public:
    // Run time (since start) at which the group is released if it has not gathered by then.
    std::chrono::nanoseconds deadline() const;
    // 1-based order of arrival within the group.
    std::uint32_t position() const { return position_; }
    bool released() const;
    // `wake` runs once, when the group is released: at once on this thread if it already has been,
    // else on the thread that releases it (so it must only hand work to the attempt's own thread).
    void on_release(std::function<void()> wake) const;
    // The deadline has passed, or the server is stopping: releases every attempt of the group now.
    // Releasing a released group does nothing.
    void release_group() const;

private:
    friend class attempt_barrier;
    barrier_ticket(std::shared_ptr<barrier_group> group, std::uint32_t position)
        : group_{std::move(group)}, position_{position} {}

    std::shared_ptr<barrier_group> group_;
    std::uint32_t position_;
};

// One rule's barrier: the group now gathering. Owned by the engine's entry for the rule; thread-safe.
class attempt_barrier {
public:
    explicit attempt_barrier(barrier_config config) : config_{config} {}

    // Joins the group now gathering, or starts one (deadline `since_start` + timeout) when there is
    // none or the last one was released or is past its deadline (whose release then happens here,
    // so timing alone decides group membership, not timer latency). The count-th arrival releases
    // the group and the next arrival starts a new one.
    barrier_ticket arrive(std::chrono::nanoseconds since_start);

    const barrier_config& config() const { return config_; }

private:
    const barrier_config config_;
    std::mutex mutex_;
    std::shared_ptr<barrier_group> gathering_;
};

}  // namespace faultline::faults
