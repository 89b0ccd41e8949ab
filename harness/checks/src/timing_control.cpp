#include "faultline/checks/timing_control.hpp"

#include <algorithm>

#include "faultline/record/run_record.hpp"
#include "support.hpp"

namespace faultline::harness {

std::int64_t timing_control::noise_ns() const {
    if (!measured()) return 0;
    std::vector<double> sorted(gaps_ns.begin(), gaps_ns.end());
    std::sort(sorted.begin(), sorted.end());
    return static_cast<std::int64_t>(std::llround(checks::quantile(sorted, 0.95) - checks::quantile(sorted, 0.05)));
}

std::string timing_control::describe() const {
    std::string out = "the control (" + std::to_string(processes) + " processes, fixed " + checks::format_ms(delay) +
                      " delay): " + std::to_string(gaps_ns.size()) + " gaps";
    if (!measured()) return out + ", fewer than " + std::to_string(min_gaps) + ": no noise measured";
    std::vector<double> sorted(gaps_ns.begin(), gaps_ns.end());
    std::sort(sorted.begin(), sorted.end());
    const auto at = [&](double q) { return static_cast<std::int64_t>(std::llround(checks::quantile(sorted, q))); };
    return out + ", central 90 % over " + checks::format_ms(noise_ns()) + " (" + checks::format_ms(at(0.05)) + "–" +
           checks::format_ms(at(0.95)) + ")";
}

timing_control measure_control(const std::vector<journal_record>& control_journal, std::chrono::nanoseconds delay,
                               std::size_t processes) {
    timing_control out;
    out.delay = delay;
    out.processes = processes;
    for (const operation_attempts& op : group_operations(control_journal)) {
        for (std::size_t k = 1; k < op.attempts.size(); ++k) {
            const journal_record& prev = *op.attempts[k - 1];
            const journal_record& next = *op.attempts[k];
            if (next.request_ns < prev.finished_ns) continue;
            out.gaps_ns.push_back(next.request_ns - prev.finished_ns);
            out.seqs.push_back(next.seq);
        }
    }
    return out;
}

}  // namespace faultline::harness
