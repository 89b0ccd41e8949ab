#include "faultline/record/run_record.hpp"

#include <csignal>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <utility>

namespace faultline::record {

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
// hold index + 1 (0 = empty), and the table doubles before it is three quarters full.
// Operations are symbols, so a probe compares ids; the slot comes from the id times a Fibonacci
// constant, as ids are dense and taken in runs, which a table indexed by the id's low bits turns into
// long clusters. A node-based map keyed by strings cost more than everything else in grouping a
// large journal.
class operation_index {
public:
    // The operation's index, and whether it is new.
    std::pair<std::size_t, bool> insert(symbol operation) {
        if (4 * (operations_.size() + 1) > 3 * slots_.size()) grow();
        const std::size_t slot = slot_of(operation);
        if (slots_[slot] != 0) return {slots_[slot] - 1, false};
        operations_.push_back(operation);
        slots_[slot] = static_cast<std::uint32_t>(operations_.size());
        return {operations_.size() - 1, true};
    }

    std::size_t size() const { return operations_.size(); }

private:
    // The operation's slot, or the empty one where it would go.
    std::size_t slot_of(symbol operation) const {
        const std::size_t mask = slots_.size() - 1;
        std::size_t slot = static_cast<std::size_t>((std::uint64_t{operation.id()} * 0x9E3779B97F4A7C15ULL) >> shift_);
        while (slots_[slot] != 0 && operations_[slots_[slot] - 1] != operation) slot = (slot + 1) & mask;
        return slot;
    }

    void grow() {
        const std::size_t size = std::max<std::size_t>(2 * slots_.size(), 1024);
        slots_.assign(size, 0);
        shift_ = 64 - static_cast<unsigned>(std::countr_zero(size));
        for (std::size_t i = 0; i < operations_.size(); ++i) slots_[slot_of(operations_[i])] = static_cast<std::uint32_t>(i + 1);
    }

    std::vector<std::uint32_t> slots_;
    unsigned shift_ = 64;  // 64 - log2(slots)
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
    // Journal positions in request order: none when the journal is in that order already, as it
    // nearly always is (seq is taken as a request is read).
    std::vector<std::uint32_t> request_order;
    if (!std::is_sorted(journal.begin(), journal.end(), earlier_request)) {
        request_order.resize(journal.size());
        std::iota(request_order.begin(), request_order.end(), std::uint32_t{0});
        std::stable_sort(request_order.begin(), request_order.end(),
                         [&](std::uint32_t a, std::uint32_t b) { return earlier_request(journal[a], journal[b]); });
    }
    const auto position = [&](std::size_t i) {
        return request_order.empty() ? static_cast<std::uint32_t>(i) : request_order[i];
    };
    std::vector<std::uint32_t> group_of(journal.size());  // each attempt's group, in request order
    std::vector<std::uint32_t> starts;  // each group's count, then its end, then its start
    {
        operation_index index;
        for (std::size_t i = 0; i < journal.size(); ++i) {
            const auto [group, inserted] = index.insert(journal[position(i)].operation);
            if (inserted) starts.push_back(0);
            ++starts[group];
            group_of[i] = static_cast<std::uint32_t>(group);
        }
    }
    std::uint32_t end = 0;
    for (std::uint32_t& g : starts) g = end += g;
    // Backwards, so each attempt lands just before its group's later ones.
    std::vector<std::uint32_t> grouped(journal.size());
    for (std::size_t i = journal.size(); i-- > 0;) grouped[--starts[group_of[i]]] = position(i);
    starts.push_back(static_cast<std::uint32_t>(grouped.size()));
    return operation_groups{journal.data(), std::move(grouped), std::move(starts)};
}

std::size_t count_operations(const std::vector<journal_record>& journal) {
    operation_index index;
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
    verdict_outcome out = run.interrupted ? verdict_outcome::insufficient_evidence : verdict_outcome::pass;
    for (const verdict& v : run.verdicts) {
        if (v.outcome() == verdict_outcome::fail) return verdict_outcome::fail;
        if (v.outcome() == verdict_outcome::insufficient_evidence && !v.failures_only) {
            out = verdict_outcome::insufficient_evidence;
        }
    }
    return out;
}

bool all_checks_passed(const run_record& run) { return outcome_of(run) == verdict_outcome::pass; }

}  // namespace faultline::record
