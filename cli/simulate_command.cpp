// `faultline simulate [FILE.toml] --model occ|capacity ...`: the retry-storm simulator (storm/,
// docs/storms.md).
//   occ:      --clients LIST (10..190:10) --strategy all|NAME[,NAME...] --trials N --seed S --threads N
//             --base D --cap D --hop-mean D --hop-sd D
//   capacity: --scenario NAME [--clients M] [--ops K] --seed S
// FILE holds the same settings as a `[simulate]` table (storm/simulate_file.hpp); options given on
// the command line override the file's. Prints a table, the run's size and speed, and writes --csv /
// --json / --svg files. Every input is checked, and every output file tried for writing, before
// anything runs: bad input (in the options or the file) is exit 2.
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
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "faultline/config/duration.hpp"
#include "faultline/storm/capacity.hpp"
#include "faultline/storm/client_list.hpp"
#include "faultline/storm/occ.hpp"
#include "faultline/storm/output.hpp"
#include "faultline/storm/simulate_file.hpp"

namespace faultline::cli {

namespace {

// The options as typed; each is unset unless given, so that a file's settings show through.
struct simulate_args {
    std::string file;
    std::optional<std::string> model;
    std::optional<std::string> clients;
    std::optional<std::string> strategy;
    std::optional<std::uint32_t> trials;
    std::optional<std::uint64_t> seed;
    std::optional<unsigned> threads;
    std::optional<std::string> base;
    std::optional<std::string> cap;
    std::optional<std::string> hop_mean;
    std::optional<std::string> hop_sd;
    std::optional<std::string> scenario;
    std::optional<std::uint32_t> ops;
    std::optional<std::string> csv;
    std::optional<std::string> json;
    std::optional<std::string> svg;
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

struct output_paths {
    std::string csv;
    std::string json;
    std::string svg;
};

// Every named file must be writable before anything runs; a file this check had to create is
// removed again when another one fails (or the run stops on bad input), so bad input leaves nothing
// behind. Returns the files it created.
std::vector<std::string> check_writable(const output_paths& paths) {
    std::vector<std::string> created;
    const std::array<std::pair<const char*, const std::string*>, 3> files{
        {{"csv", &paths.csv}, {"json", &paths.json}, {"svg", &paths.svg}}};
    for (const auto& [option, path] : files) {
        if (path->empty()) continue;
        const bool existed = std::filesystem::exists(*path);
        const bool ok = static_cast<bool>(std::ofstream{*path, std::ios::binary | std::ios::app});
        if (!existed && ok) created.push_back(*path);
        if (!ok) {
            for (const std::string& c : created) std::filesystem::remove(c);
            bad_input(std::string{"--"} + option + ": cannot write " + *path);
        }
    }
    return created;
}

std::unique_ptr<std::ofstream> open_output(const std::string& path) {
    if (path.empty()) return nullptr;
    return std::make_unique<std::ofstream>(path, std::ios::binary | std::ios::trunc);
}

outputs open_outputs(const output_paths& paths) {
    return {open_output(paths.csv), open_output(paths.json), open_output(paths.svg)};
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

std::optional<std::vector<std::uint32_t>> client_list(const std::optional<std::string>& text) {
    if (!text) return std::nullopt;
    auto parsed = storm::parse_client_list(*text);
    if (auto* error = std::get_if<std::string>(&parsed)) bad_input("--clients: " + *error);
    return std::get<std::vector<std::uint32_t>>(parsed);
}

std::optional<std::vector<storm::occ_strategy>> strategies(const std::optional<std::string>& text) {
    if (!text) return std::nullopt;
    auto parsed = storm::parse_occ_strategies(*text);
    if (auto* error = std::get_if<std::string>(&parsed)) bad_input("--strategy: " + *error);
    return std::get<std::vector<storm::occ_strategy>>(parsed);
}

std::optional<duration> duration_option(const char* option, const std::optional<std::string>& text) {
    if (!text) return std::nullopt;
    const config::parsed_duration parsed = config::parse_duration(*text);
    if (!parsed) bad_input(std::string{option} + ": " + parsed.error);
    return *parsed.value;
}

// The settings the options give.
storm::simulate_settings from_options(const simulate_args& args) {
    storm::simulate_settings s;
    if (args.model) s.model = *args.model == "occ" ? storm::simulate_model::occ : storm::simulate_model::capacity;
    s.clients = client_list(args.clients);
    s.strategies = strategies(args.strategy);
    s.trials = args.trials;
    s.seed = args.seed;
    s.threads = args.threads;
    s.base = duration_option("--base", args.base);
    s.cap = duration_option("--cap", args.cap);
    s.hop_mean = duration_option("--hop-mean", args.hop_mean);
    s.hop_sd = duration_option("--hop-sd", args.hop_sd);
    s.scenario = args.scenario;
    s.ops = args.ops;
    s.csv = args.csv;
    s.json = args.json;
    s.svg = args.svg;
    return s;
}

template <class T>
void lay_over(std::optional<T>& below, const std::optional<T>& above) {
    if (above) below = above;
}

// The file's settings with the options laid over them.
storm::simulate_settings merged(storm::simulate_settings file, const storm::simulate_settings& options) {
    lay_over(file.model, options.model);
    lay_over(file.clients, options.clients);
    lay_over(file.strategies, options.strategies);
    lay_over(file.trials, options.trials);
    lay_over(file.seed, options.seed);
    lay_over(file.threads, options.threads);
    lay_over(file.base, options.base);
    lay_over(file.cap, options.cap);
    lay_over(file.hop_mean, options.hop_mean);
    lay_over(file.hop_sd, options.hop_sd);
    lay_over(file.scenario, options.scenario);
    lay_over(file.ops, options.ops);
    lay_over(file.csv, options.csv);
    lay_over(file.json, options.json);
    lay_over(file.svg, options.svg);
    return file;
}

output_paths paths_of(const storm::simulate_settings& s) {
    return {s.csv.value_or(""), s.json.value_or(""), s.svg.value_or("")};
}

// A configuration error after the options met the file: the message says which file was involved.
template <class Make>
auto make_config(const Make& make, const storm::simulate_settings& s, const std::string& file) {
    try {
        return make(s);
    } catch (const std::invalid_argument& e) {
        bad_input(file.empty() ? std::string{e.what()} : std::string{e.what()} + " (settings of " + file + " and the options)");
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

void run_occ(const simulate_args& args, const storm::simulate_settings& settings) {
    if (args.scenario || args.ops) bad_input("--scenario and --ops apply to --model capacity");
    const storm::occ_sweep_config config =
        make_config([](const storm::simulate_settings& s) { return storm::make_occ_config(s); }, settings, args.file);
    const output_paths paths = paths_of(settings);
    const std::vector<std::string> created = check_writable(paths);

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
    storm::occ_sweep_result result;
    try {
        result = storm::run_occ_sweep(config, progress);
    } catch (const storm::occ_clock_overflow& e) {
        for (const std::string& c : created) std::filesystem::remove(c);
        bad_input(e.what());
    }
    const double elapsed = seconds_since(start);

    outputs files = open_outputs(paths);
    storm::write_occ_table(std::cout, config, result);
    const std::uint64_t trials = static_cast<std::uint64_t>(result.points.size()) * config.trials;
    print_speed(result.events, elapsed, std::to_string(trials) + " trials on " + std::to_string(config.threads) + " thread(s)");
    if (files.csv) storm::write_occ_csv(*files.csv, result);
    if (files.json) storm::write_occ_json(*files.json, config, result);
    if (files.svg) storm::write_occ_svg(*files.svg, result);
    finish_output(files.csv.get(), paths.csv);
    finish_output(files.json.get(), paths.json);
    finish_output(files.svg.get(), paths.svg);
}

void run_capacity(const simulate_args& args, const storm::simulate_settings& settings) {
    if (args.strategy || args.trials || args.threads || args.base || args.cap || args.hop_mean || args.hop_sd)
        bad_input("--strategy, --trials, --threads, --base, --cap, --hop-mean and --hop-sd apply to --model occ");
    if (args.clients && settings.clients->size() != 1)
        bad_input("--clients: the capacity model takes one client count, got " + *args.clients);
    const storm::capacity_config config =
        make_config([](const storm::simulate_settings& s) { return storm::make_capacity_config(s); }, settings, args.file);
    const output_paths paths = paths_of(settings);
    (void)check_writable(paths);

    const auto start = std::chrono::steady_clock::now();
    const storm::capacity_result result = storm::run_capacity(config);
    const double elapsed = seconds_since(start);

    outputs files = open_outputs(paths);
    storm::write_capacity_table(std::cout, *settings.scenario, config, result);
    print_speed(result.events, elapsed, std::to_string(result.operations) + " operations");
    if (files.csv) storm::write_capacity_csv(*files.csv, config, result);
    if (files.json) storm::write_capacity_json(*files.json, *settings.scenario, config, result);
    if (files.svg) storm::write_capacity_svg(*files.svg, config, result);
    finish_output(files.csv.get(), paths.csv);
    finish_output(files.json.get(), paths.json);
    finish_output(files.svg.get(), paths.svg);
}

void run_simulate(const simulate_args& args) {
    storm::simulate_settings file_settings;
    if (!args.file.empty()) {
        const storm::simulate_file_result loaded = storm::load_simulate_file(args.file);
        if (!loaded.ok()) {
            for (const config_error& e : loaded.errors) std::cerr << e.to_string() << '\n';
            throw CLI::RuntimeError(exit_bad_input);
        }
        file_settings = loaded.value->settings;
    }
    const storm::simulate_settings settings = merged(file_settings, from_options(args));
    if (settings.model.value_or(storm::simulate_model::occ) == storm::simulate_model::occ)
        run_occ(args, settings);
    else
        run_capacity(args, settings);
}

}  // namespace

void add_simulate_command(CLI::App& app) {
    auto args = std::make_shared<simulate_args>();
    CLI::App* cmd = app.add_subcommand(
        "simulate", "Simulate retry storms: the AWS backoff/jitter contention model, or capacity scenarios");
    cmd->add_option("file", args->file,
                    "A simulation file (TOML with a [simulate] table, docs/storms.md); options override its settings");
    cmd->add_option("--model", args->model, "occ (contention, the AWS experiment; the default) or capacity (storms)")
        ->check(CLI::IsMember({"occ", "capacity"}));
    cmd->add_option("--clients", args->clients,
                    "occ: client counts, e.g. 10..190:10 or 10,50,100 (default 10..190:10); capacity: one count");
    cmd->add_option("--strategy", args->strategy, "occ: all (the default), or a list of none, exponential, equal, full, decorrelated");
    cmd->add_option("--trials", args->trials, "occ: trials per point (default 100)")
        ->check(CLI::Range(std::uint32_t{1}, storm::max_occ_trials));
    cmd->add_option("--seed", args->seed, "Seed; the same seed gives the same numbers (default 1)");
    cmd->add_option("--threads", args->threads, "occ: threads running trials (default 2)")
        ->check(CLI::Range(1u, storm::max_occ_threads));
    cmd->add_option("--base", args->base, "occ: backoff base, e.g. 5ms (the default)");
    cmd->add_option("--cap", args->cap, "occ: backoff cap, e.g. 2000ms (the default)");
    cmd->add_option("--hop-mean", args->hop_mean, "occ: mean network hop latency (default 10ms)");
    cmd->add_option("--hop-sd", args->hop_sd, "occ: standard deviation of a hop's latency (default 2ms)");
    cmd->add_option("--scenario", args->scenario, "capacity: the scenario to run (see docs/storms.md)");
    cmd->add_option("--ops", args->ops, "capacity: operations per client (overrides the scenario's)")
        ->check(CLI::Range(std::uint32_t{1}, storm::max_ops_per_client));
    cmd->add_option("--csv", args->csv, "Write the results as CSV to this file");
    cmd->add_option("--json", args->json, "Write the results as JSON to this file");
    cmd->add_option("--svg", args->svg, "Write SVG line charts to this file");
    cmd->footer(
        "Examples:\n  faultline simulate --model occ --clients 10..190:10 --strategy all --trials 100 --svg occ.svg\n"
        "  faultline simulate examples/simulate/aws-backoff-jitter.toml --trials 10 --csv occ.csv\n"
        "  faultline simulate --model capacity --scenario metastable --svg storm.svg");
    cmd->callback([args] { run_simulate(*args); });
}

}  // namespace faultline::cli
