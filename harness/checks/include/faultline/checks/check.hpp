// Checks: named predicates over a run record that return a verdict with evidence. A scenario lists
// them as `[[expect]]` tables (`check = "max_attempts"`, `max = 3`, `expect_failure = true`, …).
// Each check is one file, `harness/checks/src/<name>.cpp`: a small type holding only its validated
// parameters, a factory, and one `core::registration<check_info>` line that registers it by name
// (the library is linked whole-archive, so registrations survive static linking; a test pins the
// list). Parameters are read strictly through `config::table_reader` (context `check "<name>"`):
// wrong types, bad values and unknown keys become `config_error`s with the TOML file:line:column
// and the allowed keys. `expect_failure` is applied in one place, `evaluate(expectation, run)`.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "faultline/core/config_error.hpp"
#include "faultline/record/verdict.hpp"

namespace faultline::record {
struct run_record;
class operation_groups;
}  // namespace faultline::record

namespace faultline::checks {

struct timing_control;

// One configured check. Immutable once built, so one instance may be evaluated concurrently from
// several threads (parallel scenarios).
class check {
public:
    virtual ~check() = default;
    // `passed` says whether the property holds; the caller fills `verdict::check` and applies
    // `expect_failure`. `operations` is group_operations(run.journal), grouped once for all the
    // checks of a run: on a large journal grouping costs more than most checks.
    virtual record::verdict evaluate(const record::run_record& run, const record::operation_groups& operations) const = 0;
    // The same, judged against the noise a control measured in the same run (timing_control.hpp).
    // Checks that judge timing override it; every other check judges as without a control.
    virtual record::verdict evaluate_with_control(const record::run_record& run, const record::operation_groups& operations,
                                          const timing_control& control) const {
        (void)control;
        return evaluate(run, operations);
    }
    // Whether a pass needs no operation: a check whose evidence is the server's events (a refused
    // handshake sends no request) says itself when it has none. Every other pass over a run without
    // operations is turned into insufficient evidence.
    virtual bool judges_without_operations() const { return false; }
};

// One `[[expect]]` entry, parsed and validated. Copies share the immutable check.
struct expectation {
    std::string check_name;
    bool expect_failure = false;  // the scenario passes only if this check fails
    // The scenario can show this property broken but not holding (`failures_only = true`): one
    // operation alone shows a client that never waits, never its jitter. Only its failure decides
    // the run; a pass or insufficient evidence is reported and left out of the run's outcome.
    bool failures_only = false;
    source_position where;        // the [[expect]] table
    std::shared_ptr<const check> impl;
};

// Registered check names, in alphabetical order.
std::vector<std::string_view> check_names();
// One line on what the named check proves ("" for an unknown name): `faultline list checks`.
std::string_view check_summary(std::string_view name);

// Parses one `[[expect]]` table; on any error appends to `errors` and returns nothing.
std::optional<expectation> parse_expectation(const toml::table& table, std::string_view file, config_errors& errors);

// Runs the check and applies `expect_failure`: the only place that inverts a result. A run with 0
// operations (no attempt in the journal, no client record) never passes: what would have passed
// (after the inversion) is insufficient evidence instead; a failure stays a failure.
record::verdict evaluate(const expectation& e, const record::run_record& run, const record::operation_groups& operations);
// The same, with the run's timing control when it had one (null: judged as without).
record::verdict evaluate(const expectation& e, const record::run_record& run, const record::operation_groups& operations,
                 const timing_control* control);
// The same, grouping the run's operations for this one check.
record::verdict evaluate(const expectation& e, const record::run_record& run);

}  // namespace faultline::checks
