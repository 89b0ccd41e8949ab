// `faultline simulate --model occ|capacity ...`: the retry-storm simulator (storm/, docs/storms.md).
//   occ:      --clients LIST (10..190:10) --strategy all|NAME[,NAME...] --trials N --seed S --threads N
//   capacity: --scenario NAME [--clients M] [--ops K] --seed S
// Prints a table, the run's size and speed, and writes --csv / --json / --svg files. Every input is
// checked, and every output file tried for writing, before anything runs: bad input is exit 2.
#include "commands.hpp"

#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "faultline/storm/capacity.hpp"
#include "faultline/storm/client_list.hpp"
#include "faultline/storm/occ.hpp"
#include "faultline/storm/output.hpp"

namespace faultline::cli {

namespace {

struct simulate_args {
    std::string model = "occ";
    std::optional<std::string> clients;
    std::optional<std::string> strategy;
    std::optional<std::uint32_t> trials;
    std::uint64_t seed = 1;
    unsigned threads = 2;
    std::optional<std::string> scenario;
    std::optional<std::uint32_t> ops;
    std::string csv;
    std::string json;
    std::string svg;
};

[[noreturn]] void bad_input(const std::string& message) {
    std::cerr << "faultline simulate: " << message << '\n';
    throw CLI::RuntimeError(exit_bad_input);
}

// The output files, checked before the run and written after it.
struct outputs {
    std::unique_ptr<std::ofstream> csv;
    std::unique_ptr<std::ofstream> json;
    std::unique_ptr<std::ofstream> svg;
};

// Every named file must be writable before anything runs; a file this check had to create is
// removed again when another one fails, so bad input leaves nothing behind.
void check_writable(const simulate_args& args) {
    std::vector<std::string> created;
    const std::array<std::pair<const char*, const std::string*>, 3> files{
        {{"--csv", &args.csv}, {"--json", &args.json}, {"--svg", &args.svg}}};
    for (const auto& [option, path] : files) {
        if (path->empty()) continue;
        const bool existed = std::filesystem::exists(*path);
        const bool ok = static_cast<bool>(std::ofstream{*path, std::ios::binary | std::ios::app});
        if (!existed && ok) created.push_back(*path);
        if (!ok) {
            for (const std::string& c : created) std::filesystem::remove(c);
            bad_input(std::string{option} + ": cannot write " + *path);
        }
    }
}

std::unique_ptr<std::ofstream> open_output(const std::string& path) {
    if (path.empty()) return nullptr;
    return std::make_unique<std::ofstream>(path, std::ios::binary | std::ios::trunc);
}

outputs open_outputs(const simulate_args& args) {
    return {open_output(args.csv), open_output(args.json), open_output(args.svg)};
}

void finish_output(std::ofstream* out, const std::string& path) {
    if (!out) return;
    out->close();
    if (!*out) {
        std::cerr << "faultline simulate: writing " << path << " failed\n";
        throw CLI::RuntimeError(exit_harness_error);
    }
    std::cout << "wrote " << path << '\n';
}

std::vector<std::uint32_t> client_list(const std::string& text) {
    auto parsed = storm::parse_client_list(text);
    if (auto* error = std::get_if<std::string>(&parsed)) bad_input("--clients: " + *error);
    return std::get<std::vector<std::uint32_t>>(parsed);
}

std::vector<storm::occ_strategy> strategies(const std::string& text) {
    if (text == "all") return {storm::all_occ_strategies.begin(), storm::all_occ_strategies.end()};
    std::vector<storm::occ_strategy> out;
    std::size_t start = 0;
    for (;;) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        const std::string name = text.substr(start, comma - start);
        const auto s = storm::occ_strategy_from_string(name);
        if (!s) bad_input("--strategy: unknown strategy '" + name + "'; known: all, none, exponential, equal, full, decorrelated");
        out.push_back(*s);
        if (comma == text.size()) return out;
        start = comma + 1;
    }
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void print_speed(std::uint64_t events, double elapsed, const std::string& what) {
    char line[160];
    std::snprintf(line, sizeof line, "%s, %.2f M events in %.3f s (%.1f M events/s)", what.c_str(),
                  static_cast<double>(events) / 1e6, elapsed, elapsed > 0 ? static_cast<double>(events) / 1e6 / elapsed : 0.0);
    std::cout << line << '\n';
}

void run_occ(const simulate_args& args) {
    if (args.scenario || args.ops) bad_input("--scenario and --ops apply to --model capacity");
    storm::occ_sweep_config config;
    config.clients = client_list(args.clients.value_or("10..190:10"));
    config.strategies = strategies(args.strategy.value_or("all"));
    config.trials = args.trials.value_or(100);
    config.seed = args.seed;
    config.threads = args.threads;
    try {
        storm::validate(config);
    } catch (const std::invalid_argument& e) {
        bad_input(e.what());
    }
    check_writable(args);

    // A progress line for sweeps that take a while, only on a terminal.
    const bool show_progress = isatty(STDERR_FILENO) != 0 && storm::estimated_occ_events(config) > 1e8;
    storm::progress_callback progress;
    if (show_progress)
        progress = [](std::uint64_t done, std::uint64_t total) {
            std::fprintf(stderr, "\rsimulate: %llu / %llu trials", static_cast<unsigned long long>(done),
                         static_cast<unsigned long long>(total));
            if (done == total) std::fputc('\n', stderr);
        };
    const auto start = std::chrono::steady_clock::now();
    const storm::occ_sweep_result result = storm::run_occ_sweep(config, progress);
    const double elapsed = seconds_since(start);

    outputs files = open_outputs(args);
    storm::write_occ_table(std::cout, config, result);
    const std::uint64_t trials = static_cast<std::uint64_t>(result.points.size()) * config.trials;
    print_speed(result.events, elapsed, std::to_string(trials) + " trials on " + std::to_string(config.threads) + " thread(s)");
    if (files.csv) storm::write_occ_csv(*files.csv, result);
    if (files.json) storm::write_occ_json(*files.json, config, result);
    if (files.svg) storm::write_occ_svg(*files.svg, result);
    finish_output(files.csv.get(), args.csv);
    finish_output(files.json.get(), args.json);
    finish_output(files.svg.get(), args.svg);
}

std::string scenario_names() {
    std::string out;
    for (const storm::capacity_scenario& s : storm::capacity_scenarios()) out += "\n  " + std::string{s.name} + ": " + std::string{s.summary};
    return out;
}

void run_capacity(const simulate_args& args) {
    if (args.strategy || args.trials) bad_input("--strategy and --trials apply to --model occ");
    if (!args.scenario) bad_input("--model capacity needs --scenario NAME; the scenarios:" + scenario_names());
    const auto found = storm::find_capacity_scenario(*args.scenario);
    if (!found) bad_input("--scenario: unknown scenario '" + *args.scenario + "'; the scenarios:" + scenario_names());
    storm::capacity_config config = *found;
    if (args.clients) {
        const std::vector<std::uint32_t> list = client_list(*args.clients);
        if (list.size() != 1) bad_input("--clients: the capacity model takes one client count, got " + *args.clients);
        config.clients = list.front();
    }
    if (args.ops) config.ops_per_client = *args.ops;
    config.seed = args.seed;
    try {
        storm::validate(config);
    } catch (const std::invalid_argument& e) {
        bad_input(e.what());
    }
    check_writable(args);

    const auto start = std::chrono::steady_clock::now();
    const storm::capacity_result result = storm::run_capacity(config);
    const double elapsed = seconds_since(start);

    outputs files = open_outputs(args);
    storm::write_capacity_table(std::cout, *args.scenario, config, result);
    print_speed(result.events, elapsed, std::to_string(result.operations) + " operations");
    if (files.csv) storm::write_capacity_csv(*files.csv, config, result);
    if (files.json) storm::write_capacity_json(*files.json, *args.scenario, config, result);
    if (files.svg) storm::write_capacity_svg(*files.svg, config, result);
    finish_output(files.csv.get(), args.csv);
    finish_output(files.json.get(), args.json);
    finish_output(files.svg.get(), args.svg);
}

}  // namespace

void add_simulate_command(CLI::App& app) {
    auto args = std::make_shared<simulate_args>();
    CLI::App* cmd = app.add_subcommand(
        "simulate", "Simulate retry storms: the AWS backoff/jitter contention model, or capacity scenarios");
    cmd->add_option("--model", args->model, "occ (contention, the AWS experiment) or capacity (storms)")
        ->check(CLI::IsMember({"occ", "capacity"}));
    cmd->add_option("--clients", args->clients,
                    "occ: client counts, e.g. 10..190:10 or 10,50,100 (default 10..190:10); capacity: one count");
    cmd->add_option("--strategy", args->strategy, "occ: all, or a list of none, exponential, equal, full, decorrelated");
    cmd->add_option("--trials", args->trials, "occ: trials per point (default 100)")
        ->check(CLI::Range(std::uint32_t{1}, storm::max_occ_trials));
    cmd->add_option("--seed", args->seed, "Seed; the same seed gives the same numbers (default 1)");
    cmd->add_option("--threads", args->threads, "occ: threads running trials (default 2)")
        ->check(CLI::Range(1u, storm::max_occ_threads));
    cmd->add_option("--scenario", args->scenario, "capacity: the scenario to run (see docs/storms.md)");
    cmd->add_option("--ops", args->ops, "capacity: operations per client (overrides the scenario's)")
        ->check(CLI::Range(std::uint32_t{1}, std::uint32_t{1'000'000}));
    cmd->add_option("--csv", args->csv, "Write the results as CSV to this file");
    cmd->add_option("--json", args->json, "Write the results as JSON to this file");
    cmd->add_option("--svg", args->svg, "Write SVG line charts to this file");
    cmd->callback([args] { args->model == "occ" ? run_occ(*args) : run_capacity(*args); });
}

}  // namespace faultline::cli
