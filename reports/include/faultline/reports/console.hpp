// The console report: what a person reads after `faultline run`. One line per scenario, one line per
// check (✔ passed, ✘ failed, ? insufficient evidence) with its summary, the evidence of failed checks
// indented under it, the client command's result when there was one, and how to replay the run with
// the same seed (`faultline run FILE --seed N`). A pure function of the run record.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "faultline/record/run_record.hpp"

namespace faultline::reports {

struct console_options {
    bool color = false;        // ANSI colours for ✔/✘ and PASS/FAIL (for a terminal)
    bool show_passed = true;   // list passed checks too, not only failed ones
    bool show_replay = true;   // the replay line (off for `faultline check`: a journal alone replays nothing)
    bool header_only = false;  // the scenario's one line, nothing under it (`faultline run --summary`)
};

std::string console_report(const record::run_record& run, const console_options& options = {});

// What closes a run of many scenarios: each that did not pass, with its outcome and the command that
// replays it ("  FAIL name  faultline run FILE --seed N"), under a heading; "" when every one passed.
std::string console_not_passed(std::span<const record::run_record> runs, const console_options& options = {});

// A verdict's evidence as the console prints it: one item per paragraph, each line prefixed with
// `indent`, safe for a terminal. For other tools that print verdicts (the `score` scorecard).
std::string console_evidence(const record::verdict& v, std::string_view indent);

// The shell command that replays a run: `faultline run FILE --seed N` (FILE quoted when needed; the
// scenario name when the record has no file).
std::string replay_command(const record::run_record& run);

}  // namespace faultline::reports
