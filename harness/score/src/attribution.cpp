#include "faultline/score/attribution.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace faultline::score {

bool attribute_to_processes(record::run_record& run) {
    if (!run.command || run.command->processes.empty()) return false;
    std::vector<const record::process_record*> processes;
    for (const record::process_record& p : run.command->processes) processes.push_back(&p);
    std::sort(processes.begin(), processes.end(),
              [](const auto* a, const auto* b) { return a->started_ns < b->started_ns; });
    for (std::size_t i = 1; i < processes.size(); ++i) {
        if (processes[i]->started_ns < processes[i - 1]->finished_ns) return false;
    }
    for (record::journal_record& r : run.journal) {
        const auto owner = std::find_if(processes.begin(), processes.end(), [&](const auto* p) {
            return r.request_ns >= p->started_ns && r.request_ns <= p->finished_ns;
        });
        if (owner != processes.end()) r.operation = "process " + std::to_string((*owner)->op);
    }
    return true;
}

}  // namespace faultline::score
