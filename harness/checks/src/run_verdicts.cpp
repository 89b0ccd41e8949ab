#include "faultline/checks/run_verdicts.hpp"

#include <map>
#include <string>

#include "faultline/record/run_record.hpp"
#include "support.hpp"

namespace faultline::checks {

namespace {

// "2 reset, 1 rule_removed" in the order of the kinds.
std::string count_by_kind(const std::map<record::server_event_kind, std::size_t>& counts) {
    std::string out;
    for (const auto& [kind, n] : counts) {
        out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + std::string(to_string(kind));
    }
    return out;
}

std::string times(std::uint64_t n) { return std::to_string(n) + (n == 1 ? " time" : " times"); }

std::string describe(const record::server_event& e) {
    std::string out = std::string(to_string(e.kind));
    if (!e.rule.empty()) out += " of rule `" + e.rule + "`";
    out += " at " + checks::format_ms(e.at_ns);
    out += " by " + (e.peer.empty() ? std::string{"an unknown peer"} : e.peer);
    if (!e.detail.empty()) out += " (" + e.detail + ")";
    return out;
}

}  // namespace

record::verdict evidence_intact(const record::run_record& run) {
    record::verdict v;
    v.check = "evidence_intact";
    std::map<record::server_event_kind, std::size_t> actions;
    std::map<record::server_event_kind, std::size_t> limits;
    for (const record::server_event& e : run.server_events) {
        // The server's own schedule (a listener-level fault's window), what it told of unmatched
        // requests and the spells it ran late are neither actions nor limits.
        if (e.kind == record::server_event_kind::listener_closed || e.kind == record::server_event_kind::listener_reopened ||
            e.kind == record::server_event_kind::unmatched_route || e.kind == record::server_event_kind::server_late) {
            continue;
        }
        if (!is_control_action(e.kind)) {
            ++limits[e.kind];
            continue;
        }
        ++actions[e.kind];
        checks::add_evidence(v, record::evidence_item{"", {e.seq}, describe(e)});
    }
    v.passed = actions.empty();
    const std::string limit_note = limits.empty() ? "" : "; limits enforced: " + count_by_kind(limits);
    // Altered evidence is no control action: something behind the server's back changed its spill file.
    const auto altered = actions.extract(record::server_event_kind::evidence_altered);
    std::string cause;
    if (!actions.empty()) cause = "the control API changed the server during the run (" + count_by_kind(actions) + ")";
    if (altered) {
        cause += (cause.empty() ? "" : "; ") + std::string{"the journal's spill file was altered during the run ("} +
                 std::to_string(altered.mapped()) + " evidence_altered)";
    }
    v.summary = v.passed ? "no reset or rule change during the run" + limit_note
                         : cause + ": the journal no longer shows the whole run" + limit_note;
    return v;
}

std::vector<record::verdict> firing_verdicts(const record::run_record& run) {
    std::vector<record::verdict> out;
    for (const record::rule_firing& f : run.rule_firings) {
        const std::uint64_t required = f.min_fired.value_or(run.strict ? 1 : 0);
        if (required == 0) continue;
        record::verdict v;
        v.check = "fired:" + f.rule;
        v.passed = f.fired >= required;
        const std::string source = f.min_fired ? "min_fired = " + std::to_string(required) : std::string{"strict"};
        v.summary = "rule `" + f.rule + "` (" + f.kind + ") fired " + times(f.fired) + " (" + source + ")";
        if (!v.passed) {
            const std::size_t attempts = run.journal.size();
            // Whether the client reached the server at all tells a template that never names it from
            // a client that sent a request the rule does not match.
            const std::string reached = attempts == 0 ? "the client never reached the server (no request was read)"
                                                      : "the client reached the server with " +
                                                            std::to_string(attempts) +
                                                            (attempts == 1 ? " attempt" : " attempts");
            checks::add_evidence(v, record::evidence_item{"", {},
                                                  "rule `" + f.rule + "` (" + f.kind + ") fired " +
                                                      std::to_string(f.fired) + " of the " + times(required) +
                                                      " required; " + reached + ": the fault it stands for was " +
                                                      (f.fired == 0 ? "never exercised" : "exercised too little")});
        }
        out.push_back(std::move(v));
    }
    return out;
}

}  // namespace faultline::checks
