// Verdicts every scenario run gets besides its `[[expect]]` checks, judged from what the run record
// says about the run itself rather than about the client: whether the evidence is whole
// (`evidence_intact`: no reset or rule change through the control API while the client ran) and
// whether each fault rule fired as often as the scenario requires (`fired:<rule>`). They are not
// registered checks (a scenario cannot leave them out); the runner appends them after the
// `[[expect]]` verdicts (runner.hpp), so every report and the exit code see them.
#pragma once

#include <vector>

#include "faultline/record/verdict.hpp"

namespace faultline::record {
struct run_record;
}  // namespace faultline::record

namespace faultline::checks {

// "evidence_intact": fails when the run's server events hold a control action (a reset forgets
// attempts and effects, a removed or cleared rule switches faults off), with one evidence item per
// action (kind, time, peer, rule). Enforced limits (refused connections, timeouts) are counted in
// the summary and never fail it. Passes when there are none.
record::verdict evidence_intact(const record::run_record& run);

// One "fired:<rule>" verdict per rule that must fire: one with `min_fired`, or, under `strict`, any
// rule (at least once). Fails when the rule fired fewer times.
std::vector<record::verdict> firing_verdicts(const record::run_record& run);

}  // namespace faultline::checks
