// The "journal" report: a run's journal as JSON Lines (record/journal_json.hpp), the evidence itself,
// for `faultline check` or a closer look at a failure.
#include "faultline/record/journal_json.hpp"
#include "faultline/reports/writer.hpp"

namespace faultline::reports {

namespace {

std::string journal_report(std::span<const harness::run_record> runs) {
    return runs.empty() ? std::string{} : harness::to_jsonl(runs.front().journal, runs.front().wire);
}

const report_registration registered{"journal", "the run's journal as JSON Lines, one attempt per line",
                                     &journal_report, "{scenario}.journal.jsonl", true, true};

}  // namespace

}  // namespace faultline::reports
