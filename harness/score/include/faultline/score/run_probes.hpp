// Running the catalogue against one client: each probe's scenario with its [client] replaced by the
// template as a command client (one process per operation, `operations` of them, `concurrency` at
// a time, the declared settings as its facts) — or, for an empty template, the probe's own
// [client]. Attempts are then attributed to processes (attribution.hpp) and the checks judged.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "faultline/record/run_record.hpp"
#include "faultline/runner/runner.hpp"
#include "faultline/score/client_template.hpp"
#include "faultline/score/probe.hpp"

namespace faultline::score {

// `runs[i]` is the run of `probes[i]`; at most `jobs` probes run at once.
std::vector<harness::run_record> run_probes(std::span<const probe> probes, std::span<const std::string> client_template,
                                            const declared_settings& declared, const harness::run_options& options,
                                            std::size_t jobs);

}  // namespace faultline::score
