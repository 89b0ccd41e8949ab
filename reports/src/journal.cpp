// The "journal" report: a run's journal as JSON Lines (record/journal_json.hpp), the evidence itself,
// for `faultline check` or a closer look at a failure: its attempts and server events (a round's reset
// among them, so a round of `check` reads back as that round).
#include "faultline/record/journal_json.hpp"
#include "faultline/reports/writer.hpp"

namespace faultline::reports {

namespace {

std::string journal_report(std::span<const record::run_record> runs) {
    if (runs.empty()) return {};
    const record::run_record& run = runs.front();
    return record::to_jsonl(run.journal, run.wire, run.server_events);
}

const report_registration registered{"journal", "the run's journal as JSON Lines: one attempt or server event per line",
                                     &journal_report, "{scenario}.journal.jsonl", true, true};

}  // namespace

}  // namespace faultline::reports
