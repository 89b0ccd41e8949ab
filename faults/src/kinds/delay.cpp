// delay: wait, then serve the request normally. The wait is fixed or drawn from a uniform, normal or
// lognormal distribution (normal and lognormal are clamped to [0, max]).
#include <algorithm>
#include <cmath>

#include "faultline/faults/kind.hpp"
#include "../sampling.hpp"

namespace faultline::faults {
namespace {

using std::chrono::nanoseconds;

class delay final : public fault_kind {
public:
    enum class shape { fixed, uniform, normal, lognormal };

    static std::shared_ptr<const fault_kind> make(config::table_reader& keys) {
        auto kind = std::make_shared<delay>();
        using config::need;
        constexpr nanoseconds zero{0};
        constexpr nanoseconds unbounded = nanoseconds::max();
        const auto name = keys.choice("distribution", {"fixed", "uniform", "normal", "lognormal"}).value_or("fixed");
        if (name == "fixed") {
            kind->shape_ = shape::fixed;
            kind->a_ = keys.duration("wait", zero, unbounded, need::required).value_or(zero);
        } else if (name == "uniform") {
            kind->shape_ = shape::uniform;
            kind->a_ = keys.duration("min", zero, unbounded, need::required).value_or(zero);
            kind->b_ = keys.duration("max", zero, unbounded, need::required).value_or(zero);
            if (keys.ok() && kind->b_ < kind->a_) {
                keys.fail("max", "must not be less than \"min\"");
            }
        } else if (name == "normal") {
            kind->shape_ = shape::normal;
            kind->a_ = keys.duration("mean", zero, unbounded, need::required).value_or(zero);
            kind->b_ = keys.duration("stddev", zero, unbounded, need::required).value_or(zero);
            kind->max_ = keys.duration("max").value_or(nanoseconds::max());
        } else {
            kind->shape_ = shape::lognormal;
            kind->a_ = keys.duration("median", nanoseconds{1}, unbounded, need::required).value_or(nanoseconds{1});
            kind->sigma_ = keys.number("sigma", 0.0, 10.0, need::required).value_or(0.0);
            kind->max_ = keys.duration("max", zero, unbounded, need::required).value_or(zero);
        }
        // "after": the service commits first, then the reply waits — a committed request answered
        // after the client's own timeout.
        kind->phase_ = keys.choice("phase", {"before", "after"}) == "after" ? commit_phase::after : commit_phase::before;
        return kind;
    }

    kind_outcome on_attempt(const attempt_context&, random_source& random) const override {
        return {fault_plan{delay_action{sample(random)}, phase_}, {}};
    }

    std::optional<wait_bound> longest_wait() const override {
        switch (shape_) {
        case shape::fixed: return wait_bound{"wait", a_};
        case shape::uniform: return wait_bound{"max", b_};
        case shape::normal:
            if (max_ == nanoseconds::max()) return std::nullopt;
            return wait_bound{"max", max_};
        case shape::lognormal: return wait_bound{"max", max_};
        }
        return std::nullopt;
    }

private:
    nanoseconds sample(random_source& random) const {
        switch (shape_) {
        case shape::fixed: return a_;
        case shape::uniform:
            return a_ + nanoseconds{static_cast<nanoseconds::rep>(
                            uniform_unit(random) * static_cast<double>((b_ - a_).count()))};
        case shape::normal:
            return clamp(static_cast<double>(a_.count()) +
                         static_cast<double>(b_.count()) * detail::standard_normal(random));
        case shape::lognormal:
            return clamp(static_cast<double>(a_.count()) * std::exp(sigma_ * detail::standard_normal(random)));
        }
        return a_;
    }

    // Clamped in floating point first: a draw far in the tail must not overflow the conversion.
    nanoseconds clamp(double ns) const {
        const double bounded = std::clamp(ns, 0.0, static_cast<double>(max_.count()));
        return std::min(max_, nanoseconds{static_cast<nanoseconds::rep>(bounded)});
    }

    shape shape_ = shape::fixed;
    nanoseconds a_{0};  // fixed: wait; uniform: min; normal: mean; lognormal: median
    nanoseconds b_{0};  // uniform: max; normal: stddev
    double sigma_ = 0;  // lognormal: sigma of the underlying normal
    nanoseconds max_ = nanoseconds::max();
    commit_phase phase_ = commit_phase::before;
};

const kind_registration registered{"delay", "wait (fixed, uniform, normal or lognormal), then serve normally",
                                   &delay::make};

}  // namespace
}  // namespace faultline::faults
