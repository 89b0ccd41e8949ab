// The `faultline` executable's subcommands. Each lives in its own `<name>_command.cpp` and exposes
// `add_<name>_command(CLI::App&)`, which declares its options and a callback that does the work by
// calling the libraries; main.cpp only wires them together. A callback reports failure by throwing
// `CLI::RuntimeError(code)` with one of the exit codes below (after printing why).
#pragma once

#include <CLI/App.hpp>

namespace faultline::cli {

// The process exit codes (DESIGN.md).
enum exit_code : int {
    exit_ok = 0,
    exit_check_failed = 1,  // a check failed
    exit_bad_input = 2,     // bad usage, configuration or input file
    exit_harness_error = 3, // the harness itself failed (bind, I/O, journal)
};

void add_serve_command(CLI::App& app);
void add_proxy_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_validate_command(CLI::App& app);
void add_check_command(CLI::App& app);
void add_list_command(CLI::App& app);
void add_score_command(CLI::App& app);
void add_simulate_command(CLI::App& app);
void add_new_command(CLI::App& app);
void add_schema_command(CLI::App& app);

}  // namespace faultline::cli
