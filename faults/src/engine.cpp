#include "faultline/faults/engine.hpp"

#include <algorithm>
#include <limits>
#include <mutex>
#include <set>
#include <stdexcept>

#include <boost/json.hpp>

#include "faultline/faults/decision_random.hpp"

namespace faultline::faults {

struct fault_engine::entry {
    explicit entry(rule r) : definition{std::move(r)} {
        if (definition.when.barrier) gathering.emplace(*definition.when.barrier);
    }

    const rule definition;
    std::atomic<std::uint64_t> fired{0};
    std::optional<attempt_barrier> gathering;  // the rule's barrier state, when it has one
};

namespace {

std::int64_t to_limit(std::size_t max_active) {
    constexpr auto max = static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max());
    return static_cast<std::int64_t>(std::min(max_active, max));
}

std::optional<std::string> duplicate_name(const std::vector<rule>& rules) {
    std::set<std::string_view> names;
    for (const rule& r : rules) {
        if (!names.insert(r.name).second) {
            return r.name;
        }
    }
    return std::nullopt;
}

}  // namespace

fault_engine::fault_engine(std::uint64_t seed, std::vector<rule> rules, engine_limits limits)
    : seed_{seed}, active_{to_limit(limits.max_active_faults)} {
    for (const std::string& name : kind_registry::instance().names()) {
        fired_by_kind_.try_emplace(name);
    }
    // A constructor cannot report a change_result; the parser already rejects duplicates, so a
    // duplicate here is the caller's programming error.
    if (const auto name = duplicate_name(rules)) {
        throw std::invalid_argument{"duplicate fault rule name: " + *name};
    }
    for (rule& r : rules) {
        entries_.push_back(std::make_shared<entry>(std::move(r)));
    }
}

fault_engine::~fault_engine() = default;

void fault_engine::count_fired(entry& e) {
    e.fired.fetch_add(1, std::memory_order_relaxed);
    // Kinds are counted by registered name; a hand-built rule may carry a kind nobody registered.
    if (const auto it = fired_by_kind_.find(e.definition.kind); it != fired_by_kind_.end()) {
        it->second.fetch_add(1, std::memory_order_relaxed);
    }
}

connection_decision fault_engine::on_connection(const connection_context& connection) {
    std::shared_lock lock{mutex_};
    for (const auto& e : entries_) {
        const rule& r = e->definition;
        if (r.level != fault_level::connection) {
            continue;
        }
        // A connection has no operation yet: its sequence number stands in for the identity.
        const std::uint64_t key = decision_key(seed_, r.name, connection.connection_seq, 0);
        const double draw = unit_from_hash(decision_subkey(key, decision_purpose::trigger));
        if (!r.when.holds(draw, 0, connection.connection_seq, connection.since_start)) {
            continue;
        }
        const connection_verdict verdict = r.fault->on_connection(connection);
        if (verdict == connection_verdict::accept) {
            continue;
        }
        count_fired(*e);
        return {verdict, r.name, r.kind};
    }
    return {};
}

namespace {

// A trigger's window as [start, end) since the run's start; no end when it has no `for`.
struct time_window {
    std::chrono::nanoseconds start{0};
    std::optional<std::chrono::nanoseconds> end;
};

time_window window_of(const trigger& when) {
    time_window out;
    out.start = when.from.value_or(std::chrono::nanoseconds{0});
    if (when.for_duration) {
        // Saturating: a window of "for = <the largest duration>" ends never rather than in the past.
        const auto room = std::chrono::nanoseconds::max() - out.start;
        out.end = *when.for_duration >= room ? std::chrono::nanoseconds::max() : out.start + *when.for_duration;
    }
    return out;
}

}  // namespace

listener_decision fault_engine::on_listener(std::chrono::nanoseconds since_start) const {
    listener_decision out;
    const auto consider_change = [&](std::chrono::nanoseconds at) {
        if (at > since_start && (!out.next_change || at < *out.next_change)) out.next_change = at;
    };
    std::shared_lock lock{mutex_};
    for (const auto& e : entries_) {
        const rule& r = e->definition;
        if (r.level != fault_level::listener) continue;
        const time_window window = window_of(r.when);
        consider_change(window.start);
        if (window.end) consider_change(*window.end);
        const bool inside = since_start >= window.start && (!window.end || since_start < *window.end);
        // The first rule whose window holds wins, as everywhere; later windows still bound the answer.
        if (inside && !out.verdict) {
            out.verdict = r.fault->on_listener();
            if (out.verdict) {
                out.rule = r.name;
                out.kind = r.kind;
            }
        }
    }
    return out;
}

void fault_engine::listener_window_began(std::string_view rule) {
    std::shared_lock lock{mutex_};
    for (const auto& e : entries_) {
        if (e->definition.name == rule && e->definition.level == fault_level::listener) {
            count_fired(*e);
            return;
        }
    }
}

void fault_engine::watch_rules(std::function<void()> on_change) {
    const std::lock_guard lock{watch_mutex_};
    watch_ = std::move(on_change);
}

void fault_engine::rules_changed() {
    std::function<void()> watch;
    {
        const std::lock_guard lock{watch_mutex_};
        watch = watch_;
    }
    if (watch) watch();
}

fault_decision fault_engine::on_attempt(const attempt_context& attempt) {
    fault_decision decision;
    std::shared_lock lock{mutex_};
    for (const auto& e : entries_) {
        const rule& r = e->definition;
        if (r.level != fault_level::attempt || !r.match.matches(attempt.request)) {
            continue;
        }
        const std::uint64_t key = decision_key(seed_, r.name, attempt.operation_hash, attempt.attempt);
        const double draw = unit_from_hash(decision_subkey(key, decision_purpose::trigger));
        if (!r.when.holds(draw, attempt.attempt, attempt.request_seq, attempt.since_start)) {
            continue;
        }
        decision_random random{decision_subkey(key, decision_purpose::kind)};
        kind_outcome outcome = r.fault->on_attempt(attempt, random);
        if (outcome.hold.holds()) {
            decision.holds_.push_back(std::move(outcome.hold));
        }
        // A kind may decline (overload admitting an attempt within capacity): not fired, go on.
        if (!outcome.plan) {
            continue;
        }
        std::optional<held_slot> slot = active_.try_acquire();
        if (!slot) {
            overflowed_.fetch_add(1, std::memory_order_relaxed);
            decision.overflowed_ = true;
            return decision;
        }
        decision.holds_.push_back(std::move(*slot));
        decision.plan_ = std::move(outcome.plan);
        decision.rule_ = r.name;
        decision.kind_ = r.kind;
        if (e->gathering) decision.barrier_ = e->gathering->arrive(attempt.since_start);
        count_fired(*e);
        return decision;
    }
    return decision;
}

std::vector<rule> fault_engine::rules() const {
    std::shared_lock lock{mutex_};
    std::vector<rule> out;
    out.reserve(entries_.size());
    for (const auto& e : entries_) {
        out.push_back(e->definition);
    }
    return out;
}

boost::json::array fault_engine::list() const {
    std::shared_lock lock{mutex_};
    boost::json::array out;
    for (const auto& e : entries_) {
        boost::json::object item = e->definition.source;
        item["name"] = e->definition.name;
        item["kind"] = e->definition.kind;
        out.push_back(std::move(item));
    }
    return out;
}

change_result fault_engine::add(rule r, std::optional<std::size_t> position) {
    if (!r.fault) {
        return {false, "fault rule \"" + r.name + "\" has no configured fault"};
    }
    std::unique_lock lock{mutex_};
    for (const auto& e : entries_) {
        if (e->definition.name == r.name) {
            return {false, "a fault rule named \"" + r.name + "\" already exists"};
        }
    }
    const std::size_t at = std::min(position.value_or(entries_.size()), entries_.size());
    entries_.insert(entries_.begin() + static_cast<std::ptrdiff_t>(at), std::make_shared<entry>(std::move(r)));
    lock.unlock();
    rules_changed();
    return {};
}

bool fault_engine::remove(std::string_view name) {
    std::unique_lock lock{mutex_};
    const auto it = std::find_if(entries_.begin(), entries_.end(),
                                 [name](const auto& e) { return e->definition.name == name; });
    if (it == entries_.end()) {
        return false;
    }
    entries_.erase(it);
    lock.unlock();
    rules_changed();
    return true;
}

change_result fault_engine::replace(std::vector<rule> rules) {
    if (const auto name = duplicate_name(rules)) {
        return {false, "duplicate fault rule name \"" + *name + "\""};
    }
    for (const rule& r : rules) {
        if (!r.fault) {
            return {false, "fault rule \"" + r.name + "\" has no configured fault"};
        }
    }
    std::vector<std::shared_ptr<entry>> fresh;
    fresh.reserve(rules.size());
    for (rule& r : rules) {
        fresh.push_back(std::make_shared<entry>(std::move(r)));
    }
    std::unique_lock lock{mutex_};
    entries_ = std::move(fresh);
    lock.unlock();
    rules_changed();
    return {};
}

void fault_engine::clear() {
    std::unique_lock lock{mutex_};
    entries_.clear();
    lock.unlock();
    rules_changed();
}

engine_counters fault_engine::counters() const {
    engine_counters out;
    for (const auto& [name, count] : fired_by_kind_) {
        out.fired_by_kind.emplace(name, count.load(std::memory_order_relaxed));
    }
    {
        std::shared_lock lock{mutex_};
        for (const auto& e : entries_) {
            out.fired_by_rule.emplace_back(e->definition.name, e->fired.load(std::memory_order_relaxed));
        }
    }
    out.overflowed = overflowed_.load(std::memory_order_relaxed);
    out.active = static_cast<std::uint64_t>(active_.in_use());
    return out;
}

boost::json::object fault_engine::counters_json() const {
    const engine_counters c = counters();
    boost::json::object by_kind;
    for (const auto& [name, count] : c.fired_by_kind) {
        by_kind[name] = count;
    }
    boost::json::object by_rule;
    for (const auto& [name, count] : c.fired_by_rule) {
        by_rule[name] = count;
    }
    boost::json::object out;
    out["fired_by_kind"] = std::move(by_kind);
    out["fired_by_rule"] = std::move(by_rule);
    out["overflowed"] = c.overflowed;
    out["active"] = c.active;
    return out;
}

}  // namespace faultline::faults
