#include "faultline/record/run_record.hpp"

#include <csignal>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <utility>

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

namespace {

// Operations -> dense indexes in first-seen order, by open addressing with linear probing: slots
// hold index + 1 (0 = empty) and there are at least twice as many as attempts, so a probe ends soon
// and the table never grows. Operations are symbols, so a probe compares ids and the id is the hash
// (ids are dense; the order of the result is first-seen order, never the ids'). A node-based map
// keyed by strings cost more than everything else in grouping a large journal.
class operation_index {
public:
    explicit operation_index(std::size_t attempts) : slots_(std::bit_ceil(std::max<std::size_t>(2 * attempts, 16))) {}

    // The operation's index, and whether it is new.
    std::pair<std::size_t, bool> insert(symbol operation) {
        const std::size_t slot = slot_of(operation);
        if (slots_[slot] != 0) return {slots_[slot] - 1, false};
        operations_.push_back(operation);
        slots_[slot] = static_cast<std::uint32_t>(operations_.size());
        return {operations_.size() - 1, true};
    }
    // The index of an operation already inserted.
    std::size_t at(symbol operation) const { return slots_[slot_of(operation)] - 1; }

    std::size_t size() const { return operations_.size(); }

private:
    // The operation's slot, or the empty one where it would go.
    std::size_t slot_of(symbol operation) const {
        const std::size_t mask = slots_.size() - 1;
        std::size_t slot = operation.id() & mask;
        while (slots_[slot] != 0 && operations_[slots_[slot] - 1] != operation) slot = (slot + 1) & mask;
        return slot;
    }

    std::vector<std::uint32_t> slots_;
    std::vector<symbol> operations_;
};

bool earlier_request(const journal_record& a, const journal_record& b) {
    if (a.request_ns != b.request_ns) return a.request_ns < b.request_ns;
    return a.seq < b.seq;
}

}  // namespace

operation_groups group_operations(const std::vector<journal_record>& journal) {
    // A counting sort by operation, stable so that each group keeps request order: number the groups
    // in first-seen order and count their attempts, then place every attempt after its group's
    // earlier ones. The scratch arrays are freed before the groups are returned.
    // Positions are 4 bytes: a journal of 2^32 attempts is out of reach (a day at 50,000 a second).
    if (journal.size() > std::numeric_limits<std::uint32_t>::max()) {
        throw std::length_error{"group_operations: more than 2^32 - 1 attempts"};
    }
    std::vector<std::uint32_t> grouped(journal.size());
    std::vector<std::uint32_t> starts;  // each group's count, then its end, then its start
    {
        // A journal in seq order is nearly always in request order already (seq is taken as a request
        // is read); only one that is not gets a sorted copy of its pointers.
        std::vector<const journal_record*> sorted;
        if (!std::is_sorted(journal.begin(), journal.end(), earlier_request)) {
            sorted.reserve(journal.size());
            for (const auto& r : journal) sorted.push_back(&r);
            std::stable_sort(sorted.begin(), sorted.end(),
                             [](const journal_record* a, const journal_record* b) { return earlier_request(*a, *b); });
        }
        const auto in_request_order = [&](std::size_t i) { return sorted.empty() ? &journal[i] : sorted[i]; };
        operation_index index{journal.size()};
        for (std::size_t i = 0; i < journal.size(); ++i) {
            const auto [group, inserted] = index.insert(in_request_order(i)->operation);
            if (inserted) starts.push_back(0);
            ++starts[group];
        }
        std::uint32_t end = 0;
        for (std::uint32_t& g : starts) g = end += g;
        // Backwards, so each attempt lands just before its group's later ones. Looking the group up
        // again costs less than keeping it: 4 bytes an attempt at grouping's peak.
        for (std::size_t i = journal.size(); i-- > 0;) {
            const journal_record* r = in_request_order(i);
            grouped[--starts[index.at(r->operation)]] = static_cast<std::uint32_t>(r - journal.data());
        }
    }
    starts.push_back(static_cast<std::uint32_t>(grouped.size()));
    return operation_groups{journal.data(), std::move(grouped), std::move(starts)};
}

std::size_t count_operations(const std::vector<journal_record>& journal) {
    operation_index index{journal.size()};
    for (const journal_record& r : journal) index.insert(r.operation);
    return index.size();
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
