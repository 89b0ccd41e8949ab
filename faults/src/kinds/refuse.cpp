// refuse: connections are refused — reset (RST) as soon as they are accepted. A connection-level
// kind with no keys of its own; the window comes from the rule's trigger (`from`, `for`).
#include "faultline/faults/kind.hpp"

namespace faultline::faults {
namespace {

class refuse final : public fault_kind {
public:
    static std::shared_ptr<const fault_kind> make(config::table_reader&) { return std::make_shared<refuse>(); }

    fault_level level() const override { return fault_level::connection; }

    connection_verdict on_connection(const connection_context&) const override { return connection_verdict::reset; }
};

const kind_registration registered{"refuse", "refuse connections (RST on accept), e.g. for a window",
                                   &refuse::make};

}  // namespace
}  // namespace faultline::faults
