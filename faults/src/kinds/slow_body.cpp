// slow_body: serve the service's response (committed as usual), but dribble it out at a fixed
// rate in small chunks.
#include "faultline/faults/kind.hpp"

namespace faultline::faults {
namespace {

class slow_body final : public fault_kind {
public:
    static std::shared_ptr<const fault_kind> make(config::table_reader& keys) {
        auto kind = std::make_shared<slow_body>();
        constexpr std::int64_t max = std::int64_t{1} << 40;
        kind->action_.bytes_per_second =
            static_cast<std::size_t>(keys.integer("bytes_per_second", 1, max, config::need::required).value_or(1));
        kind->action_.chunk_bytes = static_cast<std::size_t>(
            keys.integer("chunk_bytes", 1, max).value_or(static_cast<std::int64_t>(kind->action_.chunk_bytes)));
        return kind;
    }

    kind_outcome on_attempt(const attempt_context&, random_source&) const override {
        return {fault_plan{action_, commit_phase::after}, {}};
    }

private:
    slow_body_action action_;
};

const kind_registration registered{"slow_body", "send the response at a fixed byte rate", &slow_body::make};

}  // namespace
}  // namespace faultline::faults
