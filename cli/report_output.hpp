// Where `faultline run` and `faultline check` write reports: `--report FORMAT:PATH` (repeatable; any
// format in the report registry, reports/writer.hpp) and `--report-dir DIR` (every format's own file
// there). Shared by both commands so they accept and write reports the same way.
#pragma once

#include <span>
#include <string>
#include <vector>

#include <CLI/App.hpp>

#include "faultline/record/run_record.hpp"
#include "faultline/runner/runner.hpp"

namespace faultline::cli {

struct report_targets {
    std::vector<std::string> reports;  // "FORMAT:PATH"
    std::string report_dir;
};

// Declares --report and --report-dir on `cmd`; a bad FORMAT:PATH is a usage error (exit 2) naming
// the registered formats.
void add_report_options(CLI::App& cmd, report_targets& targets);

// Whether any of these reports writes the attempts' wire details, which a run keeps only then.
bool reads_wire_details(const report_targets& targets);

// Why these reports cannot be written for `runs` runs ("" when they can): checked before running.
std::string report_targets_problem(const report_targets& targets, std::size_t runs);

// Writes every requested report; prints what it could not write to stderr and returns false then.
bool write_reports(const report_targets& targets, std::span<const record::run_record> runs);

// What `run` and `score` do once the runs are judged: writes the reports, says where --report-dir
// put them, and returns `code`, made a harness error when a report could not be written.
runner::exit_code write_reports_for(const report_targets& targets, std::span<const record::run_record> runs,
                                     runner::exit_code code);

}  // namespace faultline::cli
