// refuse: connections are refused, for the window the rule's trigger gives (`from`, `for`). `how`
// says what a client sees:
//  - "reset_on_accept" (the default): the connection is accepted and reset (RST) at once — a
//    connection-level kind, so any connection trigger applies;
//  - "closed_port": the listener stops listening but keeps the port bound, so connects fail with
//    ECONNREFUSED;
//  - "unanswered_syn": the listener holds its listen queue full and stops accepting, so SYNs go
//    unanswered and connects neither complete nor fail.
// The last two are listener-level: the listener acts on its port for the window, so they take time
// triggers only (rules_toml.cpp says so for any other key).
#include "faultline/faults/kind.hpp"

namespace faultline::faults {
namespace {

class refuse final : public fault_kind {
public:
    explicit refuse(std::optional<listener_verdict> listener) : listener_{listener} {}

    static std::shared_ptr<const fault_kind> make(config::table_reader& keys) {
        const std::optional<std::string> how = keys.choice("how", {"reset_on_accept", "closed_port", "unanswered_syn"});
        // reset_on_accept (or none) is no listener verdict: the connection-level default.
        return std::make_shared<refuse>(how ? listener_verdict_names.from(*how) : std::nullopt);
    }

    fault_level level() const override { return listener_ ? fault_level::listener : fault_level::connection; }

    connection_verdict on_connection(const connection_context&) const override { return connection_verdict::reset; }

    std::optional<listener_verdict> on_listener() const override { return listener_; }

private:
    const std::optional<listener_verdict> listener_;  // none: reset on accept
};

const kind_registration registered{
    "refuse", "refuse connections for a window: RST on accept, a closed port (ECONNREFUSED) or unanswered SYNs",
    &refuse::make};

}  // namespace
}  // namespace faultline::faults
