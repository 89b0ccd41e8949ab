// Each process a probe starts performs one operation. The server names operations by what the
// client sends (its Idempotency-Key, else a hash of the request), so a client that changes its key
// on every attempt would look like several one-attempt operations, each passing every check. When a
// probe's processes ran one after another, every attempt that reached the server during a process's
// life belongs to that process's operation: `attribute_to_processes` renames those attempts'
// operation to "process N" (keys are kept, so `idempotency_keys` sees them change). Processes that
// overlapped in time (the herd) cannot be told apart this way and are left as the server named them.
#pragma once

#include "faultline/record/run_record.hpp"

namespace faultline::score {

// Returns whether the journal was re-attributed (the checks must then be evaluated again).
bool attribute_to_processes(record::run_record& run);

}  // namespace faultline::score
