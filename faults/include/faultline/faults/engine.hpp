// The fault engine: decides, for each new connection and each attempt, which rule (if any) fires
// and what the server must do. Rules apply in order and the first that fires wins; later rules are
// not consulted. A decision is a pure function of (seed, rule, operation identity, attempt) except
// for the triggers that are about order or time by nature (first, every, from/for, barrier groups)
// and for overload's capacity state. A cap on concurrently active faults protects the harness: when it is
// reached, the attempt is served without a fault and counted as overflowed (Envoy's
// faults_overflow).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/fwd.hpp>

#include "faultline/faults/action.hpp"
#include "faultline/faults/barrier.hpp"
#include "faultline/faults/kind.hpp"
#include "faultline/faults/request.hpp"
#include "faultline/faults/rule.hpp"

namespace faultline::faults {

struct engine_limits {
    // Attempts with a fault in progress at once (a fault is in progress while its fault_decision
    // lives). Beyond this, attempts are served normally and counted in `overflowed`.
    std::size_t max_active_faults = 1000;
};

// The engine's answer for one attempt. Move-only. It holds capacity (an active-fault slot, an
// overload in-flight slot) until destroyed: the server keeps it alive until the attempt is over
// (response sent, connection dropped, or hang ended).
class fault_decision {
public:
    fault_decision() = default;
    fault_decision(fault_decision&&) noexcept = default;
    fault_decision& operator=(fault_decision&&) noexcept = default;
    fault_decision(const fault_decision&) = delete;
    fault_decision& operator=(const fault_decision&) = delete;
    ~fault_decision() = default;

    bool has_fault() const { return plan_.has_value(); }
    const std::optional<fault_plan>& plan() const { return plan_; }
    const std::string& rule() const { return rule_; }  // "" when no fault
    const std::string& kind() const { return kind_; }  // "" when no fault
    bool overflowed() const { return overflowed_; }     // a rule fired but the active cap was full
    // Set when the rule that fired has a barrier: hold the attempt until the ticket's group is
    // released, then carry out the plan.
    const std::optional<barrier_ticket>& barrier() const { return barrier_; }

private:
    friend class fault_engine;
    std::optional<fault_plan> plan_;
    std::string rule_;
    std::string kind_;
    bool overflowed_ = false;
    std::vector<held_slot> holds_;
    std::optional<barrier_ticket> barrier_;
};

struct connection_decision {
    connection_verdict verdict = connection_verdict::accept;
    std::string rule;  // "" when accepted
    std::string kind;  // "" when accepted
};

// What the service port's listener is to do at one time (fault_engine::on_listener).
struct listener_decision {
    std::optional<listener_verdict> verdict;  // none: listen and accept as usual
    std::string rule;                         // "" when none
    std::string kind;                         // "" when none
    // The next time (since the run's start) the answer may change: the nearest start or end of a
    // listener-level rule's window after the time asked about; none when no window lies ahead.
    std::optional<std::chrono::nanoseconds> next_change;
};

struct engine_counters {
    std::map<std::string, std::uint64_t> fired_by_kind;  // every registered kind, zeros included
    std::vector<std::pair<std::string, std::uint64_t>> fired_by_rule;  // current rules, in order
    std::uint64_t overflowed = 0;
    std::uint64_t active = 0;  // faults in progress now
};

// Result of a runtime change; `error` says why it was refused (e.g. a duplicate name).
struct change_result {
    bool ok = true;
    std::string error;
};

// Owned by the server. Thread-safe: decisions take a shared lock on the rule list, runtime changes
// an exclusive one; counters are atomics. Decisions may outlive the engine.
class fault_engine {
public:
    // Throws std::invalid_argument if two rules share a name (the parser never produces that).
    fault_engine(std::uint64_t seed, std::vector<rule> rules, engine_limits limits = {});
    ~fault_engine();
    fault_engine(const fault_engine&) = delete;
    fault_engine& operator=(const fault_engine&) = delete;

    connection_decision on_connection(const connection_context& connection);
    fault_decision on_attempt(const attempt_context& attempt);
    // The listener-level rules (refuse with how = closed_port / unanswered_syn) at `since_start`:
    // the first whose window holds it, in rule order. A pure query: the server asks again at
    // `next_change` and whenever the rules change (watch_rules), and carries the answer out.
    listener_decision on_listener(std::chrono::nanoseconds since_start) const;
    // The server carried out the window of listener-level rule `rule`: that is the rule's one firing.
    // The connects refused or left unanswered in it are the kernel's and never reach the server, so
    // they cannot be counted. Ignored when no such rule is installed.
    void listener_window_began(std::string_view rule);
    // `on_change` is called after every change of the rules (add, remove, replace, clear), on the
    // changing thread and outside the engine's lock, so a server re-reads its listener schedule. One
    // watcher; a new one replaces it, an empty function removes it.
    void watch_rules(std::function<void()> on_change);

    // Runtime control (the control API). Names stay unique; positions are 0-based, clamped to the end.
    std::vector<rule> rules() const;
    boost::json::array list() const;  // each rule's source, with "name" and "kind" filled in
    change_result add(rule r, std::optional<std::size_t> position = std::nullopt);
    bool remove(std::string_view name);
    change_result replace(std::vector<rule> rules);
    void clear();

    engine_counters counters() const;
    boost::json::object counters_json() const;  // {"fired_by_kind":{...},"fired_by_rule":{...},"overflowed":n,"active":n}
    std::uint64_t seed() const { return seed_; }

private:
    struct entry;
    void count_fired(entry& e);
    void rules_changed();

    std::uint64_t seed_;
    capacity active_;
    mutable std::shared_mutex mutex_;
    std::vector<std::shared_ptr<entry>> entries_;
    std::map<std::string, std::atomic<std::uint64_t>, std::less<>> fired_by_kind_;
    std::atomic<std::uint64_t> overflowed_{0};
    std::mutex watch_mutex_;
    std::function<void()> watch_;
};

}  // namespace faultline::faults
