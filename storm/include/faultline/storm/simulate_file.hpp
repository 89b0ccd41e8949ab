// `faultline simulate FILE.toml`: a simulation written down as a file of the same shape as a scenario
// (docs/storms.md, "Simulation files"): top-level `name`, `description` and `seed`, and a
// `[simulate]` table holding what the command-line options hold — model, clients, strategies,
// trials, threads, the contention model's latencies, the capacity scenario with `[simulate.capacity]`
// overriding its parameters, and the output files. Read strictly through config::table_reader:
// unknown keys, wrong types, values out of range, an empty or inverted client range, an unknown
// strategy or scenario, and keys of the other model are errors at their file:line:column.
//
// `simulate_settings` is also what the command line fills in; every field is optional, so the
// command can lay the options given over the file's settings (options win).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "faultline/core/clock.hpp"
#include "faultline/core/config_error.hpp"
#include "faultline/storm/capacity.hpp"
#include "faultline/storm/occ.hpp"

namespace faultline::storm {

// The capacity model's parameters a file may set over its scenario's (capacity.hpp names each).
struct capacity_overrides {
    std::optional<duration> op_interval;
    std::optional<double> capacity_per_sec;
    std::optional<std::uint32_t> queue_limit;
    std::optional<double> failure_probability;
    std::optional<duration> outage_start;
    std::optional<duration> outage_end;
    std::optional<double> outage_capacity_factor;
    std::optional<duration> attempt_timeout;
    std::optional<duration> hop;
    std::optional<duration> bin;

    bool any() const;
};

void apply(const capacity_overrides& overrides, capacity_config& config);

enum class simulate_model { occ, capacity };

struct simulate_settings {
    std::optional<simulate_model> model;
    std::optional<std::vector<std::uint32_t>> clients;
    std::optional<std::vector<occ_strategy>> strategies;
    std::optional<std::uint32_t> trials;
    std::optional<std::uint64_t> seed;
    std::optional<unsigned> threads;
    std::optional<duration> base;
    std::optional<duration> cap;
    std::optional<duration> hop_mean;
    std::optional<duration> hop_sd;
    std::optional<std::string> scenario;
    std::optional<std::uint32_t> ops;
    capacity_overrides capacity;
    std::optional<std::string> csv;
    std::optional<std::string> json;
    std::optional<std::string> svg;
};

struct simulate_file {
    std::string name;         // may be empty
    std::string description;  // may be empty
    simulate_settings settings;
};

struct simulate_file_result {
    std::optional<simulate_file> value;  // set when errors is empty
    config_errors errors;
    bool ok() const { return errors.empty(); }
};

// The run that settings describe, the defaults filled in (occ: clients 10..190:10, every strategy,
// 100 trials, seed 1, 2 threads, the blog's latencies; capacity: the named scenario's parameters
// with the settings laid over them). Throws std::invalid_argument saying what is wrong: a setting
// of the other model (named by its key), no or an unknown scenario, more than one capacity client
// count, or what the model's validate() refuses (absurd sizes among them).
occ_sweep_config make_occ_config(const simulate_settings& settings);
capacity_config make_capacity_config(const simulate_settings& settings);

// The largest operations per client a file or --ops may ask for.
inline constexpr std::uint32_t max_ops_per_client = 1'000'000;

// Parses a simulation file's text; `file` names it in every error's position.
simulate_file_result parse_simulate_file(std::string_view text, const std::string& file);
// Reads and parses the file at `path`.
simulate_file_result load_simulate_file(const std::string& path);

}  // namespace faultline::storm
