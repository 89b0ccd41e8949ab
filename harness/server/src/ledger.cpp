#include "faultline/server/ledger.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <stdexcept>
#include <unordered_map>

namespace faultline::server {

namespace {

bool in_scope(const ledger_entry& e, commit_scope scope) {
    switch (scope) {
        case commit_scope::non_idempotent: return e.semantics == effect_semantics::non_idempotent;
        case commit_scope::all: return true;
    }
    return false;
}

std::vector<double_effect> find_doubles(const std::vector<ledger_entry>& entries, commit_scope scope) {
    // Group in first-commit order: the index of each operation's group in `groups`.
    std::unordered_map<std::string_view, std::size_t> index;
    std::vector<double_effect> groups;
    for (const auto& e : entries) {
        if (!in_scope(e, scope)) continue;
        auto [it, inserted] = index.try_emplace(e.operation, groups.size());
        if (inserted) groups.push_back(double_effect{e.operation.str(), {}});
        groups[it->second].commits.push_back(e);
    }
    std::vector<double_effect> doubles;
    for (auto& g : groups) {
        if (g.commits.size() >= 2) doubles.push_back(std::move(g));
    }
    return doubles;
}

}  // namespace

void ledger::record(ledger_entry entry) {
    std::lock_guard lock{mutex_};
    ++recorded_;
    if (keeps_ == ledger_keeps::entries) entries_.push_back(std::move(entry));
}

void ledger::require_entries() const {
    if (keeps_ != ledger_keeps::entries) throw std::logic_error{"this ledger keeps only the count of its commits"};
}

std::size_t ledger::commits_for(std::string_view operation, commit_scope scope) const {
    require_entries();
    std::lock_guard lock{mutex_};
    std::size_t n = 0;
    for (const auto& e : entries_) {
        if (e.operation == operation && in_scope(e, scope)) ++n;
    }
    return n;
}

std::vector<double_effect> ledger::double_effects(commit_scope scope) const {
    return find_doubles(snapshot(), scope);
}

std::vector<ledger_entry> ledger::snapshot() const {
    require_entries();
    std::lock_guard lock{mutex_};
    return entries_;
}

std::size_t ledger::size() const {
    std::lock_guard lock{mutex_};
    return recorded_;
}

void ledger::reset() {
    std::lock_guard lock{mutex_};
    entries_.clear();
    recorded_ = 0;
}

boost::json::object entry_to_json(const ledger_entry& entry) {
    boost::json::object o;
    o["op"] = entry.operation.view();
    o["attempt"] = entry.attempt;
    o["seq"] = entry.seq;
    o["conn"] = entry.connection;
    o["t"] = entry.time_ns;
    o["method"] = entry.method.view();
    o["target"] = entry.target.view();
    o["semantics"] = to_string(entry.semantics);
    o["effect"] = entry.effect;
    return o;
}

boost::json::value ledger::to_json() const {
    const auto entries = snapshot();
    boost::json::array list;
    list.reserve(entries.size());
    for (const auto& e : entries) list.push_back(entry_to_json(e));
    boost::json::array doubles;
    for (const auto& d : find_doubles(entries, commit_scope::non_idempotent)) {
        boost::json::array seqs;
        for (const auto& c : d.commits) seqs.push_back(c.seq);
        doubles.push_back(boost::json::object{{"op", d.operation}, {"commits", d.commits.size()}, {"seqs", seqs}});
    }
    return boost::json::object{{"entries", std::move(list)}, {"double_effects", std::move(doubles)}};
}

}  // namespace faultline::server
