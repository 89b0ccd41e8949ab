// `faultline run PATH... [--seed N] [--only NAME] [-j N] [--strict] [--report F:PATH] [--report-dir DIR]
// [--progress|--quiet] [--summary|--failures-only] [-- cmd args…]`: loads every scenario (folders are
// searched for *.toml, sorted) strictly — any error is printed and nothing runs (exit 2) — then runs
// them, each with its own server, printing the console report as each finishes (with a live progress
// line on stderr when it is a terminal: progress_line.hpp), and last the scenarios that did not pass
// with their replay commands; optionally writes reports (report_output.hpp). Exit codes:
// runner::exit_code (0 passed, 1 a check failed, 3 harness error, 4 insufficient evidence). On
// SIGINT or SIGTERM (stop_signals.hpp) the running clients are stopped, no further scenario starts,
// what ran is judged and reported, and the exit status is 128 + the signal (130, 143).
#include "commands.hpp"
#include "progress_line.hpp"
#include "report_output.hpp"
#include "stop_signals.hpp"

#include "faultline/faults/rule.hpp"
#include "faultline/runner/runner.hpp"
#include "faultline/runner/scenario.hpp"
#include "faultline/reports/console.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace faultline::cli {

namespace {

struct run_args {
    std::vector<std::string> paths;
    std::vector<std::string> command;  // after `--`
    std::optional<std::uint64_t> seed;
    std::vector<std::string> only;
    std::size_t jobs = 1;
    bool strict = false;
    bool progress = false;  // --progress: the progress line even when stderr is no terminal
    bool quiet = false;     // --quiet: no progress line
    bool summary = false;        // --summary: a line a scenario
    bool failures_only = false;  // --failures-only: only what did not pass
    report_targets reports;
};

[[noreturn]] void fail(int code) { throw CLI::RuntimeError(code); }

bool selected(const runner::scenario& s, const std::vector<std::string>& only) {
    if (only.empty()) return true;
    return std::any_of(only.begin(), only.end(),
                       [&](const std::string& pattern) { return faults::glob_match(pattern, s.name); });
}

std::vector<runner::scenario> load_all(const run_args& args) {
    const runner::scenario_files found = runner::collect_scenario_files(args.paths);
    config_errors errors = found.errors;
    runner::scenario_options options;
    options.client.command = args.command;
    std::vector<runner::scenario> scenarios;
    std::size_t grpc_probes = 0;  // left out: their own [client] cannot make a gRPC call
    for (const std::string& file : found.files) {
        runner::scenario_result loaded = runner::load_scenario_file(file, options);
        errors.insert(errors.end(), loaded.errors.begin(), loaded.errors.end());
        if (!loaded.value || !selected(*loaded.value, args.only)) continue;
        if (loaded.value->needs_grpc_client && args.command.empty()) {
            ++grpc_probes;
            continue;
        }
        scenarios.push_back(std::move(*loaded.value));
    }
    if (grpc_probes > 0) {
        std::cerr << "faultline: left out " << grpc_probes
                  << " gRPC probe(s): they need a gRPC client (faultline score --grpc -- <client>, or "
                     "faultline run FILE -- <client>)\n";
    }
    if (!errors.empty()) {
        for (const auto& e : errors) std::cerr << e.to_string() << '\n';
        std::cerr << "faultline: " << errors.size() << " error(s); nothing was run\n";
        fail(exit_bad_input);
    }
    if (scenarios.empty() && grpc_probes > 0) fail(exit_bad_input);
    if (scenarios.empty()) {
        std::cerr << "faultline: no scenario matches --only";
        for (const auto& o : args.only) std::cerr << " \"" << o << '"';
        std::cerr << '\n';
        fail(exit_bad_input);
    }
    return scenarios;
}

void run_run(const run_args& args) {
    const std::vector<runner::scenario> scenarios = load_all(args);
    if (const std::string problem = report_targets_problem(args.reports, scenarios.size()); !problem.empty()) {
        std::cerr << "faultline: " << problem << '\n';
        fail(exit_bad_input);
    }
    drivers::run_interrupt interrupt;
    const stop_signals handlers{interrupt};
    runner::run_options options;
    options.seed = args.seed;
    options.strict = args.strict;
    options.keep_wire_details = reads_wire_details(args.reports);
    options.interrupt = &interrupt;

    reports::console_options console;
    console.color = ::isatty(STDOUT_FILENO) != 0;
    console.header_only = args.summary;
    console.show_passed = !args.failures_only;
    std::cout << "running " << scenarios.size() << " scenario(s), " << std::max<std::size_t>(1, args.jobs)
              << " at a time\n"
              << std::flush;
    progress_tally tally(scenarios.size());
    std::optional<progress_display> progress;
    if (progress_wanted(args.progress, args.quiet, ::isatty(STDERR_FILENO) != 0, std::getenv("NO_COLOR") != nullptr)) {
        options.progress = &tally;
        progress.emplace(std::cerr, tally, steady_clock_source::instance());
    }
    std::vector<record::run_record> runs =
        runner::run_scenarios(scenarios, options, args.jobs, [&](std::size_t, const record::run_record& run) {
            if (args.failures_only && record::outcome_of(run) == record::verdict_outcome::pass) return;
            const auto print = [&] { std::cout << reports::console_report(run, console) << std::flush; };
            if (progress) {
                progress->without_line(print);
            } else {
                print();
            }
        });
    progress.reset();  // erases the line before the totals
    // Reports hold what ran; a scenario the interrupt kept from starting has nothing to show.
    const auto not_run = std::erase_if(runs, [](const record::run_record& run) { return run.not_run; });

    const auto passed = std::count_if(runs.begin(), runs.end(), [](const record::run_record& run) {
        return runner::exit_code_of(run) == runner::exit_code::passed;
    });
    runner::exit_code code = runner::exit_code_of(runs);
    std::cout << passed << " of " << runs.size() << " scenario(s) passed\n" << reports::console_not_passed(runs, console);

    code = write_reports_for(args.reports, runs, code);
    if (interrupt.requested()) {
        std::cout << "interrupted by " << record::signal_name(interrupt.signal()) << ": " << runs.size() << " of "
                  << scenarios.size() << " scenario(s) ran, " << not_run << " not started\n";
        fail(runner::interrupted_exit_status(interrupt.signal()));
    }
    if (code != runner::exit_code::passed) fail(runner::to_int(code));
}

}  // namespace

void add_run_command(CLI::App& app) {
    auto args = std::make_shared<run_args>();
    CLI::App* cmd = app.add_subcommand("run", "Run scenario files (or folders of them) and check the results");
    // Everything after `--` is the client command. CLI11 records the `--` it sees and then hands the
    // remaining words to the positionals, trying them in declaration order: `command` comes first
    // but accepts a word only once the `--` was seen, so words before it fall through to `paths`.
    cmd->validate_positionals();
    cmd->add_option("command", args->command,
                    "After `--`: a client command to run instead of each scenario's [client] "
                    "(gets FAULTLINE_URL; placeholders {url} {op} {client})")
        ->expected(1, -1)
        ->check(CLI::Validator(
            [cmd](const std::string&) {
                const auto seen = cmd->remaining();
                return std::find(seen.begin(), seen.end(), "--") != seen.end() ? std::string{}
                                                                                : std::string{"before --"};
            },
            "", "after --"));
    cmd->add_option("paths", args->paths, "Scenario files or folders of *.toml files (searched recursively)")
        ->required();
    cmd->add_option("--seed", args->seed, "Seed for every scenario (replays a run)");
    cmd->add_option("--only", args->only, "Run only scenarios whose name matches (glob, repeatable)")
        ->expected(1)
        ->allow_extra_args(false)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    cmd->add_option("-j,--jobs", args->jobs, "Scenarios to run in parallel, each with its own server")
        ->check(CLI::Range(std::size_t{1}, std::size_t{64}));
    cmd->add_flag("--strict", args->strict,
                  "A fault rule that never fired fails the scenario (by default a warning); as `strict = true`");
    auto* summary = cmd->add_flag("--summary", args->summary,
                                  "One line a scenario (its outcome), then the list of those that did not pass");
    cmd->add_flag("--failures-only", args->failures_only,
                  "Print only the scenarios that did not pass, and in them only the checks that did not")
        ->excludes(summary);
    auto* quiet = cmd->add_flag("--quiet", args->quiet, "No live progress line on stderr");
    cmd->add_flag("--progress", args->progress,
                  "A live progress line on stderr even when it is not a terminal or NO_COLOR is set "
                  "(by default only on a terminal)")
        ->excludes(quiet);
    add_report_options(*cmd, args->reports);
    cmd->footer(
        "Examples:\n  faultline run suites/ -j2 --report-dir reports-out\n"
        "  faultline run suites/overload.good.toml --seed 7 --report junit:junit.xml\n"
        "  faultline run scenario.toml -- curl -s -X POST {url}/payments");
    cmd->callback([args] { run_run(*args); });
}

}  // namespace faultline::cli
