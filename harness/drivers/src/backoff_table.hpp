// Reading a backoff table (internal to harness/drivers/src): the builtin driver's
// [client.policy.backoff] and a command client's declared [client] `backoff` have the same keys,
// ranges and messages because both are read here.
#pragma once

#include "faultline/config/reader.hpp"
#include "faultline/record/run_record.hpp"
#include "faultline/retry/backoff.hpp"

namespace faultline::drivers {

// Reads base, cap, multiplier, jitter and jitter_fraction into `policy` and finishes the reader.
// `curve_keys` says whether base, cap and jitter must be given: the builtin client starts from a
// preset's curve, while a declared curve is a fact about another program and has no default.
void read_backoff_table(config::table_reader& r, retry::backoff_policy& policy, config::need curve_keys);

// The curve as the run record declares it.
record::declared_backoff declared_backoff_of(const retry::backoff_policy& policy);

}  // namespace faultline::drivers
