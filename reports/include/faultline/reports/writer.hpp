// The report formats, found by name: `faultline run|check --report FORMAT:PATH`, `--report-dir` and
// `faultline list reports` all read this registry. A format is one file in reports/src that renders
// run records to text and registers a `report_writer` (core/registry.hpp); nothing else names it.
#pragma once

#include <functional>
#include <span>
#include <string>

#include "faultline/core/registry.hpp"
#include "faultline/record/run_record.hpp"

namespace faultline::reports {

struct report_writer {
    std::string name;     // the FORMAT of --report FORMAT:PATH
    std::string summary;  // one line, for `faultline list reports`
    // The whole document for these runs (never called with more than one run when `one_run_per_file`).
    std::function<std::string(std::span<const record::run_record> runs)> render;
    // The file it writes in --report-dir: "{scenario}" in it makes one file per scenario (the scenario
    // name made file-safe); without it one file holds every run; empty: not written there.
    std::string report_dir_file;
    // A document describes exactly one run (a journal): --report needs "{scenario}" in PATH then.
    bool one_run_per_file = false;
    // It writes the attempts' wire details (run_record::wire): a run keeps them only for such a report.
    bool reads_wire_details = false;
};

using report_registry = core::registry<report_writer>;
using report_registration = core::registration<report_writer>;

// The scenario's name with anything but [A-Za-z0-9._-] replaced by '_', for "{scenario}" in paths.
std::string file_stem(std::string_view scenario);

// `pattern` with "{scenario}" replaced by file_stem(scenario).
std::string expand_path(std::string_view pattern, std::string_view scenario);

}  // namespace faultline::reports
