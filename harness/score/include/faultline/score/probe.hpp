// The conformance catalogue: one probe per situation a retry client must handle, each a scenario
// file under suites/conformance/ (data, not code). A probe is an ordinary scenario — `faultline run`
// runs it against its own [client], the builtin client — plus a `[probe]` table for `faultline score`:
//
//   [probe]
//   situation = "lost response after commit, on a fresh connection"   # the scorecard's words
//   operations = 1        # processes of the client under test (per_operation), default 1
//   concurrency = 1       # at most this many at once, default `operations`
//   control = 24          # processes of the timing control beside them (control_client.hpp), default 0
//   control_delay = "1s"  # the control's fixed delay before each retry, default 1 s
//   control_attempts = 4  # the control's attempt limit, default 4
//   [probe.properties]    # which property each [[expect]] check proves (property.hpp)
//   no_double_effects = "single_execution"
//
// The probe's request ({method}, {path}, {body}) is its first [[client.request]]. The rule that makes
// the situation says `min_fired = 1`: when it did not fire, the probe's passes are not judged
// (scorecard.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "faultline/core/config_error.hpp"
#include "faultline/runner/scenario.hpp"
#include "faultline/score/client_template.hpp"

namespace faultline::score {

struct probe {
    runner::scenario scenario;  // as `faultline run` loads it
    std::string situation;
    request_values request;
    std::uint64_t operations = 1;
    std::uint32_t concurrency = 1;
    // The timing control run beside a command client (none for the builtin client): processes, their
    // fixed delay and attempt limit.
    std::uint32_t control = 0;
    std::chrono::nanoseconds control_delay = std::chrono::seconds{1};
    std::uint32_t control_attempts = 4;
    // The client's {timeout} in this probe when it is longer than the declared one ([probe] timeout):
    // the herds hold their first attempts at a barrier until every process has started, and a client
    // must not time out while held.
    std::optional<std::chrono::nanoseconds> timeout;
    std::vector<std::pair<std::string, std::string>> properties;  // check name -> property id, file order

    // The property a check of this probe proves ("" when it is not mapped).
    std::string_view property_of(std::string_view check) const;
    // The client runs alone here, so its gaps are its own pace (timing_control::alone_gaps_ns): one
    // operation, no control, and `jittered` judged only by its failure (failures_only).
    bool alone() const;
    // The kind of its first fault ("status", "reset"): a herd is judged against the pace the client
    // showed alone under the same kind, since a client may wait differently after a 503 and a reset.
    std::string_view failure_kind() const;
};

struct catalogue {
    std::vector<probe> probes;  // sorted by name; set only when `errors` is empty
    config_errors errors;
    bool ok() const { return errors.empty(); }
};

// Loads every *.toml below `directory` strictly (scenario and [probe] alike).
catalogue load_catalogue(const std::string& directory);
// The same over files and folders (the catalogue, then `--with`'s); probes sorted by name, which must
// be unique.
catalogue load_catalogue(const std::vector<std::string>& paths);
// One probe from text (`file` names it in errors); for tests.
catalogue parse_probe(std::string_view toml_text, const std::string& file);

}  // namespace faultline::score
