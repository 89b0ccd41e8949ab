// lost_response: the service commits the effect, then the reply never arrives — the connection is
// reset, closed, or left hanging. The case that makes non-idempotent retries double-charge.
#include "faultline/faults/kind.hpp"

namespace faultline::faults {
namespace {

class lost_response final : public fault_kind {
public:
    static std::shared_ptr<const fault_kind> make(config::table_reader& keys) {
        auto kind = std::make_shared<lost_response>();
        const auto then = keys.choice("then", {"reset", "close", "hang"}).value_or("reset");
        if (then == "close") {
            kind->drop_.mode = drop_mode::close;
        } else if (then == "hang") {
            kind->drop_.mode = drop_mode::hang;
            kind->drop_.hang_limit = keys.duration("hang_limit", std::chrono::nanoseconds{1})
                                         .value_or(kind->drop_.hang_limit);
        }
        return kind;
    }

    kind_outcome on_attempt(const attempt_context&, random_source&) const override {
        return {fault_plan{drop_, commit_phase::after}, {}};
    }

    std::optional<wait_bound> longest_wait() const override {
        if (drop_.mode != drop_mode::hang) return std::nullopt;
        return wait_bound{"hang_limit", drop_.hang_limit};
    }

private:
    drop_action drop_;
};

const kind_registration registered{"lost_response", "commit the effect, then reset, close or hang: no reply",
                                   &lost_response::make};

}  // namespace
}  // namespace faultline::faults
