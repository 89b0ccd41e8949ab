// malformed: send bytes that are not an HTTP response (no valid status line), then close. Phase
// "before" skips the service; "after" lets it commit first.
#include "faultline/faults/kind.hpp"

namespace faultline::faults {
namespace {

class malformed final : public fault_kind {
public:
    static std::shared_ptr<const fault_kind> make(config::table_reader& keys) {
        auto kind = std::make_shared<malformed>();
        kind->bytes_ = keys.string("bytes").value_or("FAULTLINE-GARBAGE \x01\x02\r\n\r\n");
        if (kind->bytes_.empty()) {
            keys.fail("bytes", "must not be empty");
        }
        kind->phase_ = keys.choice("phase", {"before", "after"}) == "after" ? commit_phase::after
                                                                                             : commit_phase::before;
        return kind;
    }

    kind_outcome on_attempt(const attempt_context&, random_source&) const override {
        return {fault_plan{malformed_action{bytes_}, phase_}, {}};
    }

private:
    std::string bytes_;
    commit_phase phase_ = commit_phase::before;
};

const kind_registration registered{"malformed", "send garbage instead of a status line, then close",
                                   &malformed::make};

}  // namespace
}  // namespace faultline::faults
