#include "faultline/checks/timing_control.hpp"

#include <algorithm>

#include "faultline/record/run_record.hpp"
#include "support.hpp"

namespace faultline::checks {

std::int64_t timing_control::noise_ns() const {
    if (!measured()) return 0;
    std::vector<double> sorted(gaps_ns.begin(), gaps_ns.end());
    std::sort(sorted.begin(), sorted.end());
    return static_cast<std::int64_t>(std::llround(checks::quantile(sorted, 0.95) - checks::quantile(sorted, 0.05)));
}

std::string timing_control::describe() const {
    std::string out = "the control (" + std::to_string(processes) + (runtime.empty() ? "" : " " + runtime) +
                      " processes, fixed " + checks::format_ms(delay) +
                      " delay): " + std::to_string(gaps_ns.size()) + " gaps";
    if (!measured()) return out + ", fewer than " + std::to_string(min_gaps) + ": no noise measured";
    std::vector<double> sorted(gaps_ns.begin(), gaps_ns.end());
    std::sort(sorted.begin(), sorted.end());
    const auto at = [&](double q) { return static_cast<std::int64_t>(std::llround(checks::quantile(sorted, q))); };
    return out + ", central 90 % over " + checks::format_ms(noise_ns()) + " (" + checks::format_ms(at(0.05)) + "–" +
           checks::format_ms(at(0.95)) + ")";
}

std::string timing_control::queueing_explains(std::size_t k, std::int64_t herd_median_ns) const {
    const auto at = alone_gaps_ns.find(k);
    if (at == alone_gaps_ns.end() || at->second.size() < min_alone_gaps) return "";
    const std::int64_t longest = *std::max_element(at->second.begin(), at->second.end());
    if (longest * queueing_ratio >= herd_median_ns) return "";
    return "alone, the client's " + std::to_string(at->second.size()) + " gaps at this index were all within " +
           checks::format_ms(longest) + ", under 1/" + std::to_string(queueing_ratio) + " of the herd's median gap, " +
           checks::format_ms(herd_median_ns) +
           ": the herd's spread is its processes queueing for the CPU, not a delay the client chose";
}

std::string timing_control::pace_is_fixed(std::int64_t window_ns) const {
    std::string indexes;
    std::size_t judged = 0;
    for (const auto& [k, gaps] : alone_gaps_ns) {
        if (gaps.size() < min_alone_gaps) continue;
        const auto [shortest, longest] = std::minmax_element(gaps.begin(), gaps.end());
        if (*longest - *shortest > window_ns) return "";
        ++judged;
        indexes += (indexes.empty() ? "" : "; ") + ("retry " + std::to_string(k) + ": ") + std::to_string(gaps.size()) + " gaps in " +
                   checks::format_ms(*shortest) + "–" + checks::format_ms(*longest);
    }
    if (judged < min_fixed_indexes) return "";
    return "alone, the client waited the same at every retry index (" + indexes + "), each within the noise floor " +
           checks::format_ms(window_ns) +
           ": its delay is fixed, not jittered, and the herd's wider spread is its processes queueing for the CPU";
}

namespace {

// Each retry's gap (previous attempt's t_end → its t_request) with its index and seq, over the
// journal's operations; a retry sent before its previous attempt ended is a timeout, not a delay, and
// is left out.
template <typename Take>
void for_each_gap(const std::vector<record::journal_record>& journal, Take take) {
    for (const record::operation_attempts& op : group_operations(journal)) {
        for (std::size_t k = 1; k < op.attempts.size(); ++k) {
            const record::journal_record& prev = *op.attempts[k - 1];
            const record::journal_record& next = *op.attempts[k];
            if (next.request_ns >= prev.finished_ns) take(k, prev, next);
        }
    }
}

}  // namespace

timing_control measure_control(const std::vector<record::journal_record>& control_journal, std::chrono::nanoseconds delay,
                               std::size_t processes) {
    timing_control out;
    out.delay = delay;
    out.processes = processes;
    for_each_gap(control_journal, [&](std::size_t, const record::journal_record& prev, const record::journal_record& next) {
        out.gaps_ns.push_back(next.request_ns - prev.finished_ns);
        out.seqs.push_back(next.seq);
    });
    return out;
}

void add_gaps_alone(const std::vector<record::journal_record>& journal, std::map<std::size_t, std::vector<std::int64_t>>& out) {
    for_each_gap(journal, [&](std::size_t k, const record::journal_record& prev, const record::journal_record& next) {
        if (!prev.retry_after_ms) out[k].push_back(next.request_ns - prev.finished_ns);
    });
}

}  // namespace faultline::checks
