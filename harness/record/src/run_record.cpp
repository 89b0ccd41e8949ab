#include "faultline/record/run_record.hpp"

#include <csignal>

#include <algorithm>
#include <unordered_map>

namespace faultline::harness {

std::string_view to_string(declared_jitter jitter) {
    switch (jitter) {
        case declared_jitter::none: return "none";
        case declared_jitter::full: return "full";
        case declared_jitter::equal: return "equal";
        case declared_jitter::decorrelated: return "decorrelated";
        case declared_jitter::proportional: return "proportional";
    }
    return "unknown";
}

std::string signal_name(int signal) {
    // Only the signals `faultline run` handles are named; POSIX fixes neither numbers nor names.
    if (signal == SIGINT) return "SIGINT";
    if (signal == SIGTERM) return "SIGTERM";
    return "signal " + std::to_string(signal);
}

std::vector<const rule_firing*> never_fired(const run_record& run) {
    std::vector<const rule_firing*> out;
    for (const rule_firing& f : run.rule_firings) {
        // `min_fired = 0` declares that the rule may stay silent.
        if (f.fired == 0 && f.min_fired.value_or(1) > 0) out.push_back(&f);
    }
    return out;
}

std::vector<operation_attempts> group_operations(const std::vector<journal_record>& journal) {
    std::vector<const journal_record*> ordered;
    ordered.reserve(journal.size());
    for (const auto& r : journal) ordered.push_back(&r);
    std::stable_sort(ordered.begin(), ordered.end(), [](const journal_record* a, const journal_record* b) {
        if (a->request_ns != b->request_ns) return a->request_ns < b->request_ns;
        return a->seq < b->seq;
    });
    std::vector<operation_attempts> out;
    std::unordered_map<std::string_view, std::size_t> index;
    for (const journal_record* r : ordered) {
        auto [it, inserted] = index.try_emplace(r->operation, out.size());
        if (inserted) out.push_back(operation_attempts{r->operation, {}});
        out[it->second].attempts.push_back(r);
    }
    return out;
}

std::vector<const journal_record*> committed_records(const std::vector<journal_record>& journal) {
    std::vector<const journal_record*> out;
    for (const auto& r : journal) {
        if (r.effect == effect_kind::committed) out.push_back(&r);
    }
    return out;
}

std::string_view to_string(verdict_outcome outcome) {
    switch (outcome) {
        case verdict_outcome::pass: return "pass";
        case verdict_outcome::fail: return "fail";
        case verdict_outcome::insufficient_evidence: return "insufficient_evidence";
    }
    return "unknown";
}

verdict_outcome outcome_of(const run_record& run) {
    if (!run.harness_error.empty()) return verdict_outcome::fail;
    verdict_outcome out = verdict_outcome::pass;
    for (const verdict& v : run.verdicts) {
        if (v.outcome() == verdict_outcome::fail) return verdict_outcome::fail;
        if (v.outcome() == verdict_outcome::insufficient_evidence) out = verdict_outcome::insufficient_evidence;
    }
    return out;
}

bool all_checks_passed(const run_record& run) { return outcome_of(run) == verdict_outcome::pass; }

}  // namespace faultline::harness
