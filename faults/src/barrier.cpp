#include "faultline/faults/barrier.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace faultline::faults {

// One cycle of a barrier: the attempts gathered so far and the wakes of those still waiting.
class barrier_group {
public:
    explicit barrier_group(std::chrono::nanoseconds deadline) : deadline_{deadline} {}

    std::chrono::nanoseconds deadline() const { return deadline_; }

    bool released() const {
        std::lock_guard lock{mutex_};
        return released_;
    }

    // Counted under the barrier's lock, which serialises arrivals; returns the 1-based position.
    std::uint32_t join() { return ++arrived_; }

    void on_release(std::function<void()> wake) {
        {
            std::lock_guard lock{mutex_};
            if (!released_) {
                wakes_.push_back(std::move(wake));
                return;
            }
        }
        wake();
    }

    void release() {
        std::vector<std::function<void()>> wakes;
        {
            std::lock_guard lock{mutex_};
            if (released_) return;
            released_ = true;
            wakes.swap(wakes_);
        }
        // Outside the lock: a wake may be the last owner of a connection and end up back here.
        for (auto& wake : wakes) wake();
    }

private:
    const std::chrono::nanoseconds deadline_;
    std::uint32_t arrived_ = 0;
    mutable std::mutex mutex_;
    bool released_ = false;
    std::vector<std::function<void()>> wakes_;
};

std::chrono::nanoseconds barrier_ticket::deadline() const { return group_->deadline(); }
bool barrier_ticket::released() const { return group_->released(); }
void barrier_ticket::on_release(std::function<void()> wake) const { group_->on_release(std::move(wake)); }
void barrier_ticket::release_group() const { group_->release(); }

barrier_ticket attempt_barrier::arrive(std::chrono::nanoseconds since_start) {
    std::shared_ptr<barrier_group> expired;
    std::shared_ptr<barrier_group> complete;
    std::shared_ptr<barrier_group> group;
    std::uint32_t position = 0;
    {
        std::lock_guard lock{mutex_};
        if (gathering_ && !gathering_->released() && since_start >= gathering_->deadline()) {
            expired = std::move(gathering_);
        }
        if (!gathering_ || gathering_->released()) {
            // Compared as a remaining span so that since_start + timeout cannot overflow.
            const auto room = std::chrono::nanoseconds::max() - since_start;
            gathering_ = std::make_shared<barrier_group>(since_start + std::min(config_.timeout, room));
        }
        group = gathering_;
        position = group->join();
        if (position >= config_.count) complete = std::exchange(gathering_, nullptr);
    }
    // Released outside the barrier's lock: wakes hand work to other threads, which may arrive here.
    if (expired) expired->release();
    if (complete) complete->release();
    return barrier_ticket{std::move(group), position};
}

}  // namespace faultline::faults
