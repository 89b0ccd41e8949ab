// close: end the connection with a FIN and no reply, on accept (before_read, a connection-level
// verdict) or after reading the request (after_read). Nothing is committed.
#include "faultline/faults/kind.hpp"

namespace faultline::faults {
namespace {

class close final : public fault_kind {
public:
    static std::shared_ptr<const fault_kind> make(config::table_reader& keys) {
        auto kind = std::make_shared<close>();
        if (keys.choice("phase", {"before_read", "after_read"}) == "before_read") {
            kind->level_ = fault_level::connection;
        }
        return kind;
    }

    fault_level level() const override { return level_; }

    connection_verdict on_connection(const connection_context&) const override { return connection_verdict::close; }

    kind_outcome on_attempt(const attempt_context&, random_source&) const override {
        return {fault_plan{drop_action{drop_mode::close}, commit_phase::before}, {}};
    }

private:
    fault_level level_ = fault_level::attempt;
};

const kind_registration registered{"close", "FIN with no reply, on accept or after reading the request",
                                   &close::make};

}  // namespace
}  // namespace faultline::faults
