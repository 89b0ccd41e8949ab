// overload: a capacity model. At most `max_in_flight` attempts admitted at once (an admitted attempt
// holds its slot until its fault_decision is destroyed) and at most `rate` per second with `burst`
// tolerance (GCRA on the attempt's since_start). Beyond capacity the attempt is rejected with
// `status` and Retry-After — or, with excess = "queue", delayed until the rate allows it (rejected
// anyway past `max_queue_wait`; a full in-flight limit always rejects). Admitted attempts within
// capacity are not faults: the rule does not fire and later rules are consulted.
//
// Capacity is per rule and depends on arrival order and time by nature; it is not a function of
// the seed.
#include <algorithm>
#include <cmath>
#include <mutex>

#include "faultline/faults/kind.hpp"
#include "../retry_after.hpp"

namespace faultline::faults {
namespace {

using std::chrono::nanoseconds;

class overload final : public fault_kind {
public:
    static std::shared_ptr<const fault_kind> make(config::table_reader& keys) {
        auto kind = std::make_shared<overload>();
        constexpr std::int64_t max_int = std::int64_t{1} << 40;
        if (auto limit = keys.integer("max_in_flight", 1, max_int)) {
            kind->in_flight_.emplace(*limit);
        }
        if (auto rate = keys.number("rate", 1e-6, 1e9)) {
            kind->interval_ = nanoseconds{static_cast<nanoseconds::rep>(std::llround(1e9 / *rate))};
            const auto burst = keys.integer("burst", 1, 1'000'000).value_or(1);
            kind->tolerance_ = kind->interval_ * (burst - 1);
        }
        if (keys.ok() && !kind->in_flight_ && kind->interval_ == nanoseconds{0}) {
            keys.fail("max_in_flight", "an overload needs \"max_in_flight\", \"rate\", or both");
        }
        kind->queue_ = keys.choice("excess", {"reject", "queue"}) == "queue";
        if (kind->queue_) {
            kind->max_queue_wait_ = keys.duration("max_queue_wait").value_or(kind->max_queue_wait_);
        }
        kind->status_ = static_cast<int>(keys.integer("status", 400, 599).value_or(503));
        kind->retry_after_ = keys.duration("retry_after").value_or(kind->retry_after_);
        if (kind->retry_after_.count() % nanoseconds{std::chrono::seconds{1}}.count() != 0) {
            keys.fail("retry_after", "must be whole seconds (Retry-After carries seconds)");
        }
        return kind;
    }

    std::optional<wait_bound> longest_wait() const override {
        if (!queue_) return std::nullopt;
        return wait_bound{"max_queue_wait", max_queue_wait_};
    }

    kind_outcome on_attempt(const attempt_context& attempt, random_source&) const override {
        held_slot hold;
        if (in_flight_) {
            std::optional<held_slot> slot = in_flight_->try_acquire();
            if (!slot) {
                return reject();
            }
            hold = std::move(*slot);
        }
        if (interval_ == nanoseconds{0}) {
            return {std::nullopt, std::move(hold)};
        }
        std::lock_guard lock{mutex_};
        // GCRA: `theoretical_arrival_` is when the schedule would next be free; an attempt may run
        // ahead of it by at most the burst tolerance.
        const nanoseconds now = attempt.since_start;
        const nanoseconds scheduled = std::max(theoretical_arrival_, now);
        const nanoseconds wait = scheduled - now - tolerance_;
        if (wait <= nanoseconds{0}) {
            theoretical_arrival_ = scheduled + interval_;
            return {std::nullopt, std::move(hold)};
        }
        if (queue_ && wait <= max_queue_wait_) {
            theoretical_arrival_ = scheduled + interval_;
            return {fault_plan{delay_action{wait}, commit_phase::before}, std::move(hold)};
        }
        // A rejected attempt does not occupy capacity: `hold` is released on return.
        return reject();
    }

private:
    kind_outcome reject() const {
        respond_action response;
        response.status = status_;
        response.headers.emplace_back(
            "Retry-After", detail::retry_after_value(std::chrono::duration_cast<std::chrono::seconds>(retry_after_),
                                                     detail::retry_after_format::seconds, {}));
        return {fault_plan{std::move(response), commit_phase::before}, {}};
    }

    // Configuration.
    nanoseconds interval_{0};   // 1 / rate; zero when there is no rate limit
    nanoseconds tolerance_{0};  // (burst - 1) * interval
    bool queue_ = false;
    nanoseconds max_queue_wait_{std::chrono::seconds{1}};
    int status_ = 503;
    nanoseconds retry_after_{std::chrono::seconds{1}};
    // Capacity state, shared by every thread deciding on this rule.
    mutable std::optional<capacity> in_flight_;
    mutable std::mutex mutex_;
    mutable nanoseconds theoretical_arrival_{0};
};

const kind_registration registered{"overload",
                                   "capacity model: max in flight and rate per second; beyond it, 503 or queueing",
                                   &overload::make};

}  // namespace
}  // namespace faultline::faults
