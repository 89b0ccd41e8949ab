// A control action taken on a running server (control_api.hpp): a reset, a rule added or removed.
// Each is evidence in its own right — a reset forgets attempts, a rule change switches faults on or
// off — so the server journals it beside the attempts, numbered from the same sequence, and checks
// and reports see it (a client that resets the server mid-run must not turn a FAIL into a PASS).
// In JSON Lines a control event is one object whose first field is "event":"control":
//   {"event":"control","seq":7,"t":1200,"action":"reset","rule":"","detail":"","peer":"127.0.0.1:40112"}
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace faultline::harness {

enum class control_action {
    reset,          // ledger, journal, attempt counts and stored results forgotten
    rule_added,     // `rule` names the rule, `detail` is the rule as written
    rule_removed,   // `rule` names the rule
    rules_cleared,  // every rule removed; `detail` lists their names
};

std::string_view to_string(control_action action);
std::optional<control_action> control_action_from_string(std::string_view s);

struct control_event {
    std::uint64_t seq = 0;    // "seq": from the journal's sequence, so it orders against attempts
    std::int64_t at_ns = 0;   // "t": monotonic ns since the run started
    control_action action = control_action::reset;  // "action"
    std::string rule;         // "rule": the rule concerned, "" when none
    std::string detail;       // "detail"
    std::string peer;         // "peer": who asked, "address:port"
};

}  // namespace faultline::harness
