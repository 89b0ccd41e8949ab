#include "faultline/faults/kind.hpp"

namespace faultline::faults {

held_slot::held_slot(held_slot&& other) noexcept : counter_{std::move(other.counter_)} {}

held_slot& held_slot::operator=(held_slot&& other) noexcept {
    if (this != &other) {
        release();
        counter_ = std::move(other.counter_);
    }
    return *this;
}

held_slot::~held_slot() { release(); }

void held_slot::release() {
    if (counter_) {
        counter_->fetch_sub(1, std::memory_order_acq_rel);
        counter_.reset();
    }
}

capacity::capacity(std::int64_t limit)
    : limit_{limit}, counter_{std::make_shared<std::atomic<std::int64_t>>(0)} {}

std::optional<held_slot> capacity::try_acquire() {
    std::int64_t current = counter_->load(std::memory_order_relaxed);
    // Compare-exchange rather than add-then-check, so the count never exceeds the limit even
    // transiently (in_use() is reported as "active faults").
    while (current < limit_) {
        if (counter_->compare_exchange_weak(current, current + 1, std::memory_order_acq_rel)) {
            return held_slot{counter_};
        }
    }
    return std::nullopt;
}

}  // namespace faultline::faults
