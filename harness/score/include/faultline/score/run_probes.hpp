// Running the catalogue against one client: each probe's scenario with its [client] replaced by the
// template as a command client (one process per operation, `operations` of them, `concurrency` at
// a time, the declared settings as its facts) — or, for an empty template, the probe's own
// [client]. A probe with a `control` also runs that many control processes (control_client.hpp) in
// the same herd; their attempts and processes are taken out of the run and measured as the run's
// timing control, against which the timing checks judge the client. Attempts are then attributed to
// processes (attribution.hpp) and the checks judged. A probe with a control whose verdicts could not
// tell the client from noise is run again, up to `timing_rounds` runs in all; the first run that
// could is kept, else the last.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "faultline/checks/timing_control.hpp"
#include "faultline/record/run_record.hpp"
#include "faultline/runner/runner.hpp"
#include "faultline/score/client_template.hpp"
#include "faultline/score/control_client.hpp"
#include "faultline/score/probe.hpp"

namespace faultline::score {

struct probe_run_options {
    // What runs the timing control; an empty executable runs none (the timing checks then judge
    // against their noise floor, and say so).
    control_program control;
    std::uint32_t timing_rounds = 3;  // runs of a probe with a control at most, while it cannot tell
};

// `runs[i]` is the run of `probes[i]`; at most `jobs` probes run at once.
std::vector<record::run_record> run_probes(std::span<const probe> probes, std::span<const std::string> client_template,
                                            const declared_settings& declared, const runner::run_options& options,
                                            std::size_t jobs, const probe_run_options& probe_options = {});

// Takes the control's attempts (their target under control_path_prefix) and processes (operations
// from `client_operations` on) out of `run` and measures them; for tests.
checks::timing_control take_control(record::run_record& run, const probe& p);

}  // namespace faultline::score
