// hang: read the request and never answer, until the client gives up or `limit` passes (then the
// connection is closed). Nothing is committed.
#include "faultline/faults/kind.hpp"

namespace faultline::faults {
namespace {

class hang final : public fault_kind {
public:
    static std::shared_ptr<const fault_kind> make(config::table_reader& keys) {
        auto kind = std::make_shared<hang>();
        kind->drop_.mode = drop_mode::hang;
        kind->drop_.hang_limit =
            keys.duration("limit", std::chrono::nanoseconds{1}).value_or(kind->drop_.hang_limit);
        return kind;
    }

    kind_outcome on_attempt(const attempt_context&, random_source&) const override {
        return {fault_plan{drop_, commit_phase::before}, {}};
    }

    std::optional<wait_bound> longest_wait() const override { return wait_bound{"limit", drop_.hang_limit}; }

private:
    drop_action drop_;
};

const kind_registration registered{"hang", "read the request, never answer (until the client leaves or a limit)",
                                   &hang::make};

}  // namespace
}  // namespace faultline::faults
