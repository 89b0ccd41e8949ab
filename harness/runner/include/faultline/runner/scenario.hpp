// Scenario files: one TOML file describes one chaos run — the service the server plays (`[server]`),
// or the real one a proxy fronts (`[proxy]`), what fails (`[[fault]]`), the client under test (`[client]`), and what must hold (`[[expect]]`).
// Loading is strict and all-or-nothing: unknown keys, wrong types, bad durations, unknown fault kinds
// or checks are each reported as `file:line:column: message` (toml++ source regions), listing the
// allowed keys or names, and a scenario with any error is not returned, so nothing half-valid runs.
// The sub-tables are parsed by their owners (model_config.hpp, faults/rules_toml.hpp, driver.hpp,
// check.hpp); this file owns the top-level keys and gathers everyone's errors. docs/scenarios.md is
// the reference for the format.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "faultline/core/config_error.hpp"
#include "faultline/faults/rule.hpp"
#include "faultline/checks/check.hpp"
#include "faultline/drivers/builtin_driver.hpp"
#include "faultline/drivers/driver.hpp"
#include "faultline/server/model_config.hpp"
#include "faultline/server/proxy_config.hpp"

namespace faultline::runner {

inline constexpr std::uint64_t default_seed = 1;
inline constexpr std::chrono::seconds default_time_limit{30};

// The instance tag of the scenario's own service in a run with relay tiers.
inline constexpr std::string_view backend_instance = "backend";

// One `[[relay]]` table: a middle tier the runner starts between the client and the scenario's
// service (faultline/server/relay.hpp). It retries towards the next tier with the builtin client's
// policy keys; the tiers form a chain in file order, the last one forwarding to the service.
struct relay_tier {
    std::string name;      // `name` ("relay-N" by default): its instance tag in the merged journal
    drivers::client_policy policy;  // `preset`, then `[relay.policy]`, as in [client]
};

// A validated scenario. A plain value; rules and checks share immutable parts, so copies are cheap
// enough and may be run concurrently.
struct scenario {
    std::string name;         // `name`, else the file's stem
    std::string description;  // `description`, may be empty
    std::string file;         // the path it was loaded from ("" when parsed from text without one)
    std::uint64_t seed = default_seed;
    std::chrono::nanoseconds time_limit = default_time_limit;  // the whole run, driver included
    bool strict = false;  // `strict`: a fault rule that never fired fails the run (not just a warning)
    server::model_config server;                                       // `[server]`; defaults when absent
    // `[server] tls`: the client's connection is TLS, with a certificate from the run's own CA, whose
    // file the client gets as {ca} and FAULTLINE_CA (the builtin client trusts it).
    bool tls = false;
    std::vector<faults::rule> faults;                          // `[[fault]]`, in file order
    // `[client]` (an absent table is the default builtin client), or the command-line command.
    // Never null in a loaded scenario. Shared so a scenario stays copyable; a driver runs one
    // scenario at a time.
    std::shared_ptr<drivers::driver> client;
    std::vector<checks::expectation> expectations;  // `[[expect]]`, in file order
    std::vector<relay_tier> relays;          // `[[relay]]`, client side first; empty: the client calls the service
    // `[proxy]`: the runner puts the proxy in front of this real service instead of playing the
    // built-in one; `server`'s routes then only declare what commits (proxy.hpp).
    std::optional<server::proxy_config> proxy;
    // A gRPC conformance probe (`[probe] client = "grpc"`): its own [client] speaks HTTP, so only a
    // gRPC client runs it — `faultline score --grpc`, or `faultline run FILE -- <client>`.
    bool needs_grpc_client = false;
};

struct scenario_result {
    std::optional<scenario> value;  // set only when `errors` is empty
    config_errors errors;           // every problem found, in file order

    bool ok() const { return errors.empty(); }
};

// What the command line changes while loading: `faultline run FILE -- cmd args…` replaces the client.
struct scenario_options {
    drivers::client_overrides client;
};

// Parses a scenario from text. `file` is used in error positions and to default the name.
scenario_result parse_scenario(std::string_view toml_text, const std::string& file,
                               const scenario_options& options = {});
// Reads and parses a file; an unreadable file is one error naming it.
scenario_result load_scenario_file(const std::string& path, const scenario_options& options = {});

// Only the `[[expect]]` tables of a file (`faultline check --expect`). The file may be a whole
// scenario — its other tables are then validated too, so a typo anywhere is still an error — or
// hold nothing but `[[expect]]` tables.
struct expectations_result {
    std::vector<checks::expectation> expectations;  // set only when `errors` is empty
    config_errors errors;

    bool ok() const { return errors.empty(); }
};
expectations_result load_expectations_file(const std::string& path);

// Expands command-line paths into scenario files: a file is taken as given; a folder contributes
// every `*.toml` file below it (recursively). The result is sorted and free of duplicates. A path
// that does not exist, or a folder without scenarios, is an error.
struct scenario_files {
    std::vector<std::string> files;
    config_errors errors;

    bool ok() const { return errors.empty(); }
};
scenario_files collect_scenario_files(const std::vector<std::string>& paths);

}  // namespace faultline::runner
