#include "faultline/record/control_event.hpp"

namespace faultline::harness {

std::string_view to_string(control_action action) {
    switch (action) {
        case control_action::reset: return "reset";
        case control_action::rule_added: return "rule_added";
        case control_action::rule_removed: return "rule_removed";
        case control_action::rules_cleared: return "rules_cleared";
    }
    return "unknown";
}

std::optional<control_action> control_action_from_string(std::string_view s) {
    for (auto a : {control_action::reset, control_action::rule_added, control_action::rule_removed,
                   control_action::rules_cleared}) {
        if (to_string(a) == s) return a;
    }
    return std::nullopt;
}

}  // namespace faultline::harness
