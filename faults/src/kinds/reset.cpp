// reset: end the connection with a TCP RST. Phases: before_read (on accept, a connection-level
// verdict), after_read (the request was read, nothing committed), mid_response (the service
// commits, part of its response is sent, then RST).
#include "faultline/faults/kind.hpp"

namespace faultline::faults {
namespace {

class reset final : public fault_kind {
public:
    static std::shared_ptr<const fault_kind> make(config::table_reader& keys) {
        auto kind = std::make_shared<reset>();
        const auto phase = keys.choice("phase", {"before_read", "after_read", "mid_response"}).value_or("after_read");
        if (phase == "before_read") {
            kind->level_ = fault_level::connection;
        } else if (phase == "mid_response") {
            kind->mid_response_ = true;
            kind->body_bytes_ = static_cast<std::size_t>(
                keys.integer("body_bytes", 0, std::int64_t{1} << 40).value_or(0));
        }
        return kind;
    }

    fault_level level() const override { return level_; }

    connection_verdict on_connection(const connection_context&) const override { return connection_verdict::reset; }

    kind_outcome on_attempt(const attempt_context&, random_source&) const override {
        if (mid_response_) {
            return {fault_plan{truncate_action{body_bytes_, true}, commit_phase::after}, {}};
        }
        return {fault_plan{drop_action{drop_mode::reset}, commit_phase::before}, {}};
    }

private:
    fault_level level_ = fault_level::attempt;
    bool mid_response_ = false;
    std::size_t body_bytes_ = 0;  // mid_response: body bytes sent before the RST
};

const kind_registration registered{"reset", "TCP RST before reading, after reading, or mid-response", &reset::make};

}  // namespace
}  // namespace faultline::faults
