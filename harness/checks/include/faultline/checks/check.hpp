// Checks: named predicates over a run record that return a verdict with evidence. A scenario lists
// them as `[[expect]]` tables (`check = "max_attempts"`, `max = 3`, `expect_failure = true`, …).
// Each check is one small type in `harness/src/checks/<name>.cpp` holding only its validated
// parameters; an explicit table in `checks/registry.cpp` maps names to factories, so the list
// survives static linking and a test pins it. Parameters are read strictly through `check_params`:
// wrong types, bad values and unknown keys become `config_error`s with the TOML file:line:column
// and the allowed keys. `expect_failure` is applied in one place, `evaluate(expectation, run)`.
#pragma once

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "faultline/core/config_error.hpp"
#include "faultline/record/verdict.hpp"

namespace faultline::harness {

struct run_record;

// One configured check. Immutable once built, so one instance may be evaluated concurrently from
// several threads (parallel scenarios).
class check {
public:
    virtual ~check() = default;
    // `passed` says whether the property holds; the caller fills `verdict::check` and applies
    // `expect_failure`.
    virtual verdict evaluate(const run_record& run) const = 0;
};

// Strict reader of one `[[expect]]` table, used by check factories. Every accessor records its key
// as allowed, whether or not the key is present, so factories must ask for all their keys
// unconditionally; `reject_unknown_keys` then reports the rest. Errors are appended to the
// `config_errors` passed in (not owned; must outlive the reader). Not thread-safe.
class check_params {
public:
    check_params(const toml::table& table, std::string check_name, std::string file, config_errors& errors);

    bool boolean(std::string_view key, bool fallback);
    std::int64_t integer(std::string_view key, std::int64_t fallback, std::int64_t min, std::int64_t max);
    // Integers are accepted where a number is expected.
    double number(std::string_view key, double fallback, double min, double max);
    // Durations are strings with units, read by config::parse_duration: "250ms", "2s", "100us".
    std::chrono::nanoseconds duration(std::string_view key, std::chrono::nanoseconds fallback);
    // As `duration`, but 0 is an error ("must be longer than 0") and `fallback` is used instead.
    std::chrono::nanoseconds positive_duration(std::string_view key, std::chrono::nanoseconds fallback);
    std::optional<std::chrono::nanoseconds> optional_duration(std::string_view key);
    std::chrono::nanoseconds required_duration(std::string_view key);
    std::string choice(std::string_view key, std::string_view fallback, std::initializer_list<std::string_view> allowed);
    std::vector<std::int64_t> integers(std::string_view key, std::vector<std::int64_t> fallback, std::int64_t min,
                                       std::int64_t max);
    std::vector<std::string> strings(std::string_view key, std::vector<std::string> fallback);

    // A validation error about `key` (positioned at the key's value, or at the table when absent).
    void error(std::string_view key, const std::string& message);
    bool has(std::string_view key) const;
    // Marks keys handled by the caller (e.g. `check`, `expect_failure`) as allowed.
    void allow(std::string_view key);
    // One error per key no accessor asked for, naming the allowed keys.
    void reject_unknown_keys();

private:
    const toml::node* find(std::string_view key);
    source_position position_of(const toml::node* node) const;
    void type_error(std::string_view key, const toml::node& node, std::string_view expected);

    const toml::table& table_;
    std::string check_name_;
    std::string file_;
    config_errors& errors_;
    std::set<std::string, std::less<>> allowed_;
};

// One `[[expect]]` entry, parsed and validated. Copies share the immutable check.
struct expectation {
    std::string check_name;
    bool expect_failure = false;  // the scenario passes only if this check fails
    source_position where;        // the [[expect]] table
    std::shared_ptr<const check> impl;
};

// Registered check names, in alphabetical order.
std::vector<std::string_view> check_names();
// One line on what the named check proves ("" for an unknown name): `faultline list checks`.
std::string_view check_summary(std::string_view name);

// Parses one `[[expect]]` table; on any error appends to `errors` and returns nothing.
std::optional<expectation> parse_expectation(const toml::table& table, std::string_view file, config_errors& errors);

// Runs the check and applies `expect_failure`: the only place that inverts a result.
verdict evaluate(const expectation& e, const run_record& run);

}  // namespace faultline::harness
