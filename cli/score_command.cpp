// `faultline score [--deadline D] [--max-attempts N] [--jitter expected|none|KIND] [--backoff BASE:CAP]
// [--backoff-multiplier M] [--timeout T] [--grpc [--service-config FILE]]
// [--catalogue DIR] [--only NAME] [-j N] [--report F:PATH] [--report-dir DIR] [-- <client template>]`:
// puts one client through every probe of the conformance catalogue (suites/conformance/) and
// prints its scorecard; with --grpc, a gRPC client through suites/conformance-grpc/, judged against
// its service config (gRPC A6). Without a template the probes run their own [client], faultline's builtin
// retry client. Bad input (a template that never names the server, an unknown placeholder, a
// setting out of range, a broken probe file) is exit 2 before anything runs; a client that never
// reaches the server is exit 2 after the first run; a program that cannot start is exit 3. On SIGINT
// or SIGTERM the clients are stopped, the reports of the probes that ran are written (those cut
// short marked interrupted), no scorecard is printed, and the exit status is 128 + the signal.
#include "commands.hpp"
#include "progress_line.hpp"
#include "report_output.hpp"
#include "shipped_files.hpp"
#include "stop_signals.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "faultline/config/duration.hpp"
#include "faultline/config/grpc_service_config.hpp"
#include "faultline/faults/rule.hpp"
#include "faultline/runner/runner.hpp"
#include "faultline/score/control_client.hpp"
#include "faultline/score/probe.hpp"
#include "faultline/score/run_probes.hpp"
#include "faultline/score/scorecard.hpp"

namespace faultline::cli {

namespace {

using namespace std::chrono_literals;

struct score_args {
    std::vector<std::string> command;  // after `--`
    std::string deadline;
    std::optional<std::uint32_t> max_attempts;
    std::string jitter = "expected";
    std::string backoff;  // "BASE:CAP"
    double backoff_multiplier = 2.0;
    std::string timeout = "1s";
    std::string attempt_timeout;  // --attempt-timeout
    bool strict = false;          // --strict
    std::vector<std::string> with;  // --with FILE|DIR: probes added to the catalogue
    bool verbose = false;         // --verbose: passing rows with their evidence
    bool grpc = false;            // --grpc
    std::string service_config;   // --service-config FILE
    std::string catalogue;        // --catalogue DIR; default: the shipped one (HTTP or gRPC)
    std::vector<std::string> only;
    std::optional<std::uint64_t> seed;
    // Probes mostly wait (on backoff, Retry-After, timeouts), so four at a time fit 2 cores.
    std::size_t jobs = 4;
    report_targets reports;
    std::string scorecard_json;  // --scorecard-json PATH
    bool progress = false;       // --progress: the progress line even when stderr is no terminal
    bool quiet = false;          // --quiet: no progress line
    std::uint32_t timing_rounds = 3;  // --timing-rounds
    std::string control = "builtin";  // --control: builtin, auto, node, python
    // The hidden control mode (control_client.hpp): the timing probes start this binary with it.
    std::string control_client;  // its URL
    std::string control_delay = "1s";
    std::uint32_t control_attempts = 4;
};

[[noreturn]] void fail(int code) { throw CLI::RuntimeError(code); }

// The timing control: this faultline, or the control script of the client's runtime started by the
// client's own interpreter (its command's first word), else by the runtime's usual name.
score::control_program control_program_for(const score_args& args, bool builtin) {
    score::control_program program;
    const score::control_runtime client = builtin ? score::control_runtime::builtin : score::runtime_of(args.command.front());
    program.runtime = args.control == "node"      ? score::control_runtime::node
                      : args.control == "python"  ? score::control_runtime::python
                      : args.control == "builtin" ? score::control_runtime::builtin
                                                  : client;
    switch (program.runtime) {
    case score::control_runtime::builtin: program.executable = this_executable().string(); break;
    case score::control_runtime::node:
        program.executable = client == program.runtime ? args.command.front() : "node";
        program.script = (find_shipped_files().controls / "control.mjs").string();
        break;
    case score::control_runtime::python:
        program.executable = client == program.runtime ? args.command.front() : "python3";
        program.script = (find_shipped_files().controls / "control.py").string();
        break;
    }
    return program;
}

[[noreturn]] void bad_input(const std::string& message) {
    std::cerr << "faultline score: " << message << '\n';
    fail(exit_bad_input);
}

std::chrono::nanoseconds duration_option(const std::string& option, const std::string& text,
                                         std::chrono::nanoseconds min, std::chrono::nanoseconds max) {
    const config::parsed_duration d = config::parse_duration(text);
    if (!d) bad_input(option + ": " + d.error);
    if (*d.value < min || *d.value > max) {
        bad_input(option + ": must be in [" + config::format_duration(min) + ", " + config::format_duration(max) +
                  "], got " + text);
    }
    return *d.value;
}

std::chrono::nanoseconds seconds_option(const std::string& option, const std::string& text,
                                        std::chrono::nanoseconds min, std::chrono::nanoseconds max) {
    const std::optional<std::chrono::nanoseconds> d = score::seconds_or_duration(text);
    if (!d) bad_input(option + ": expected seconds (5, 1.5) or a duration with a unit (5s, 500ms), got " + text);
    if (*d < min || *d > max) {
        bad_input(option + ": must be in [" + config::format_duration(min) + ", " + config::format_duration(max) +
                  "], got " + text);
    }
    return *d;
}

// The curve as a run record's declared fact, where that form can say it.
std::optional<record::declared_backoff> as_fact(const score::declared_curve& c) {
    if (c.growth == "linear" || c.jitter == "additive" || (c.jitter == "proportional" && c.sides != "both")) {
        return std::nullopt;
    }
    const std::vector<std::pair<std::string_view, record::declared_jitter>> kinds{
        {"none", record::declared_jitter::none},
        {"full", record::declared_jitter::full},
        {"equal", record::declared_jitter::equal},
        {"decorrelated", record::declared_jitter::decorrelated},
        {"proportional", record::declared_jitter::proportional}};
    record::declared_backoff fact;
    fact.base = c.base;
    fact.cap = c.cap.value_or(std::chrono::hours{24});
    fact.multiplier = c.growth == "constant" ? 1.0 : c.multiplier;
    fact.jitter = std::find_if(kinds.begin(), kinds.end(), [&](const auto& k) { return k.first == c.jitter; })->second;
    fact.jitter_fraction = c.fraction;
    return fact;
}

score::declared_settings declared_of(const score_args& args) {
    score::declared_settings d;
    if (!args.deadline.empty()) d.deadline = seconds_option("--deadline", args.deadline, 100ms, 60s);
    d.max_attempts = args.max_attempts;
    d.jitters = args.jitter != "none";
    d.timeout = seconds_option("--timeout", args.timeout, 100ms, 30s);
    if (!args.attempt_timeout.empty()) {
        d.attempt_timeout = seconds_option("--attempt-timeout", args.attempt_timeout, 10ms, 30s);
    }
    d.strict = args.strict;
    if (args.grpc) {
        d.grpc = std::make_shared<const record::grpc_service_config>();
        if (!args.service_config.empty()) {
            auto loaded = config::load_grpc_service_config(args.service_config);
            if (auto* errors = std::get_if<config_errors>(&loaded)) {
                for (const auto& e : *errors) std::cerr << e.to_string() << '\n';
                bad_input("--service-config " + args.service_config + ": not a usable gRPC service config");
            }
            d.grpc = std::make_shared<const record::grpc_service_config>(
                std::move(std::get<record::grpc_service_config>(loaded)));
            d.service_config_path = std::filesystem::absolute(args.service_config).string();
        }
    }
    if (!args.backoff.empty()) {
        const std::string_view jitter = args.jitter == "expected" ? std::string_view{} : std::string_view{args.jitter};
        if (jitter.empty()) {
            bad_input("--backoff needs the curve's jitter: --jitter none, full, equal, decorrelated, "
                      "proportional[:F], above:F, below:F or additive:MAX");
        }
        auto curve = score::parse_curve(args.backoff, jitter, args.backoff_multiplier);
        if (const auto* problem = std::get_if<std::string>(&curve)) bad_input(*problem);
        d.curve = std::get<score::declared_curve>(curve);
        d.backoff = as_fact(*d.curve);
    } else if (args.jitter != "expected" && args.jitter != "none") {
        bad_input("--jitter " + args.jitter + " describes a --backoff curve: give the curve too");
    }
    return d;
}

std::string joined(const std::vector<std::string>& words) {
    std::string out;
    for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
    return out;
}

// Why a file cannot be written at `path` ("" when it can): its folder is missing or not writable, or
// it is a folder itself, or an existing file that is not writable. Nothing is created.
std::string output_path_problem(const std::string& path) {
    std::error_code ec;
    const std::filesystem::path p{path};
    if (std::filesystem::is_directory(p, ec)) return "is a folder";
    if (std::filesystem::exists(p, ec)) return ::access(path.c_str(), W_OK) == 0 ? "" : "the file is not writable";
    const std::filesystem::path folder = p.parent_path().empty() ? std::filesystem::path{"."} : p.parent_path();
    if (!std::filesystem::is_directory(folder, ec)) return "its folder " + folder.string() + " does not exist";
    return ::access(folder.c_str(), W_OK) == 0 ? "" : "its folder " + folder.string() + " is not writable";
}

// The control process: measure, never judge; it always exits 0 (its timing is what counts).
void run_control(const score_args& args) {
    score::control_options o;
    o.url = args.control_client;
    o.delay = duration_option("--control-delay", args.control_delay, 1ms, 60s);
    o.attempts = args.control_attempts;
    score::run_control_client(o);
}

void run_score(const score_args& args) {
    if (!args.control_client.empty()) return run_control(args);
    const score::declared_settings declared = declared_of(args);
    const bool builtin = args.command.empty();
    if (args.grpc && builtin) {
        bad_input("--grpc scores a gRPC client, and the builtin client speaks HTTP: give the client's command "
                  "after `--` (e.g. clients/realclients/grpc_python_client.py {url} {path} "
                  "--service-config {service_config})");
    }
    if (!builtin) {
        if (const std::string problem = score::template_problem(args.command, declared); !problem.empty()) {
            bad_input(problem);
        }
    }
    const std::string catalogue_dir =
        !args.catalogue.empty() ? args.catalogue
                                : (find_shipped_files().suites / (args.grpc ? "conformance-grpc" : "conformance")).string();
    std::vector<std::string> sources{catalogue_dir};
    sources.insert(sources.end(), args.with.begin(), args.with.end());
    score::catalogue catalogue = score::load_catalogue(sources);
    if (!catalogue.ok()) {
        for (const auto& e : catalogue.errors) std::cerr << e.to_string() << '\n';
        bad_input(std::to_string(catalogue.errors.size()) + " error(s) in the catalogue; nothing was run");
    }
    std::vector<score::probe> probes;
    for (score::probe& p : catalogue.probes) {
        const bool selected = args.only.empty() || std::any_of(args.only.begin(), args.only.end(), [&](const auto& o) {
                                  return faults::glob_match(o, p.scenario.name);
                              });
        if (selected) probes.push_back(std::move(p));
    }
    if (probes.empty()) bad_input("no probe matches --only");
    // A probe that could judge nothing of this client (it needs a declaration that was not made) is not
    // run: slow-responses waits out a command client's every timeout to judge only a declared deadline.
    std::string left_out;
    std::erase_if(probes, [&](const score::probe& p) {
        const std::string why = score::nothing_to_judge(p, declared, builtin);
        if (!why.empty()) left_out += (left_out.empty() ? "" : ", ") + p.scenario.name + " (" + why + ")";
        return !why.empty();
    });
    if (probes.empty()) bad_input("every probe selected judges only what was not declared: " + left_out);
    if (const std::string problem = report_targets_problem(args.reports, probes.size()); !problem.empty()) {
        bad_input(problem);
    }
    // Every output is checked before the first probe runs: a bad path found after a minute of probes
    // would lose the scorecard.
    if (!args.scorecard_json.empty()) {
        if (const std::string problem = output_path_problem(args.scorecard_json); !problem.empty()) {
            bad_input("--scorecard-json " + args.scorecard_json + ": " + problem);
        }
    }
    for (const std::string& spec : args.reports.reports) {
        const std::size_t colon = spec.find(':');
        if (colon == std::string::npos) continue;
        const std::string path = spec.substr(colon + 1);
        if (path.find("{scenario}") != std::string::npos) continue;  // one file per probe, checked as written
        if (const std::string problem = output_path_problem(path); !problem.empty()) {
            bad_input("--report " + spec + ": " + problem);
        }
    }

    drivers::run_interrupt interrupt;
    const stop_signals handlers{interrupt};
    runner::run_options options;
    options.seed = args.seed;
    options.interrupt = &interrupt;
    options.keep_wire_details = reads_wire_details(args.reports);
    const bool terminal = ::isatty(STDOUT_FILENO) != 0;
    std::cout << "scoring " << (builtin ? std::string("the builtin client") : joined(args.command)) << " in "
              << probes.size() << " situations, " << args.jobs << " at a time"
              << (left_out.empty() ? std::string{} : "; not run, judging only what was not declared: " + left_out)
              << '\n'
              << std::flush;
    progress_tally tally(probes.size());
    std::optional<progress_display> progress;
    if (progress_wanted(args.progress, args.quiet, ::isatty(STDERR_FILENO) != 0, std::getenv("NO_COLOR") != nullptr)) {
        options.progress = &tally;
        progress.emplace(std::cerr, tally, steady_clock_source::instance());
    }
    score::probe_run_options probe_options;
    probe_options.control = control_program_for(args, builtin);
    probe_options.timing_rounds = args.timing_rounds;
    std::vector<record::run_record> runs =
        score::run_probes(probes, args.command, declared, options, args.jobs, probe_options);
    progress.reset();  // erases the line before the scorecard
    if (interrupt.requested()) {
        // A scorecard over part of the catalogue would misstate the client: none is printed. The
        // reports hold what ran (the probes cut short marked interrupted), as `faultline run` writes them.
        std::erase_if(runs, [](const record::run_record& r) { return r.not_run; });
        const bool wants_reports = !args.reports.reports.empty() || !args.reports.report_dir.empty();
        const bool reported =
            write_reports_for(args.reports, runs, runner::exit_code::passed) == runner::exit_code::passed;
        std::cout << "faultline score: interrupted by " << record::signal_name(interrupt.signal())
                  << ": stopped the clients; " << runs.size() << " of " << probes.size() << " probes ran"
                  << (!wants_reports ? "" : reported ? ", their reports written" : ", not all their reports written")
                  << "; no scorecard\n";
        fail(runner::interrupted_exit_status(interrupt.signal()));
    }

    const score::scorecard card = score::make_scorecard(probes, runs, declared, builtin);
    if (card.harness_errors.empty() && card.attempts == 0) {
        bad_input("the client never reached the server in any probe: check that the template puts {url} "
                  "where the URL goes");
    }
    std::cout << score::render_scorecard(
        card, declared, {builtin ? "builtin" : joined(args.command), builtin, terminal, args.verbose});
    runner::exit_code code = score::exit_code_of(card);
    if (!args.scorecard_json.empty()) {
        std::ofstream out(args.scorecard_json, std::ios::binary | std::ios::trunc);
        out << score::scorecard_json(card, builtin ? "builtin" : joined(args.command));
        if (!out) {
            std::cerr << "faultline score: cannot write " << args.scorecard_json << '\n';
            code = runner::worst(code, runner::exit_code::harness_error);
        }
    }
    code = write_reports_for(args.reports, runs, code);
    if (code != runner::exit_code::passed) fail(runner::to_int(code));
}

}  // namespace

void add_score_command(CLI::App& app) {
    auto args = std::make_shared<score_args>();
    CLI::App* cmd = app.add_subcommand(
        "score", "Put one client through the conformance catalogue and print its retry scorecard");
    cmd->add_option("command", args->command,
                    "After `--`: the client template; placeholders {url} {method} {path} {body} {key} "
                    "{timeout} {deadline} {service_config} {op} {client} {n}")
        ->expected(1, -1);
    cmd->add_option("--deadline", args->deadline, "The client's own overall deadline, to be judged (e.g. 2s)");
    cmd->add_option("--max-attempts", args->max_attempts, "The client's attempt limit, first attempt included")
        ->check(CLI::Range(1U, 100U));
    cmd->add_option("--jitter", args->jitter,
                    "The client's jitter, for --backoff: none, full, equal, decorrelated, proportional[:F] (±F), "
                    "above:F, below:F, additive:MAX (F as 50% or 0.5). Refines the curve judged; the jitter row "
                    "is judged whatever it says");
    cmd->add_option("--backoff", args->backoff,
                    "The client's backoff curve, to be judged: BASE:CAP, exponential:BASE[:CAP], linear:BASE[:CAP] "
                    "or constant:DELAY (CAP none: no cap; e.g. 1s:600s, linear:1s:10s)");
    cmd->add_option("--backoff-multiplier", args->backoff_multiplier, "Growth per retry of the --backoff curve")
        ->check(CLI::Range(1.0, 100.0));
    cmd->add_option("--timeout", args->timeout,
                    "The timeout {timeout} ({timeout_ms}) gives the client, in seconds or with a unit (default 1)");
    cmd->add_option("--attempt-timeout", args->attempt_timeout,
                    "The client's per-attempt timeout, apart from its deadline: {attempt_timeout} "
                    "({attempt_timeout_ms}); the --timeout when not given");
    auto* grpc = cmd->add_flag("--grpc", args->grpc,
                               "Score a gRPC client (unary calls over h2c to {url}) through the gRPC catalogue, "
                               "judged against its service config (gRPC A6)");
    cmd->add_option("--service-config", args->service_config,
                    "The gRPC service config the client runs with (JSON: methodConfig retryPolicy / hedgingPolicy, "
                    "retryThrottling), to be judged; {service_config} is its path. Without it: no retry policy")
        ->check(CLI::ExistingFile)
        ->needs(grpc);
    cmd->add_flag("--strict", args->strict,
                  "Hold the client to RFC 9110's strict reading: no retry after a 408 or a 413 with Retry-After");
    cmd->add_option("--with", args->with, "Add the probes of this file or folder to the catalogue (repeatable)")
        ->expected(1)
        ->allow_extra_args(false)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
        ->check(CLI::ExistingPath);
    cmd->add_flag("-v,--verbose", args->verbose, "Show the evidence of passing rows too");
    cmd->add_option("--catalogue", args->catalogue,
                    "The folder of probe files, replacing the shipped catalogue (default: "
                    "share/faultline/suites/conformance, or conformance-grpc with --grpc, of an installed "
                    "faultline, else the source tree's); "
                    "--with adds to it")
        ->check(CLI::ExistingDirectory);
    cmd->add_option("--only", args->only, "Run only probes whose name matches (glob, repeatable)")
        ->expected(1)
        ->allow_extra_args(false)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    cmd->add_option("--seed", args->seed, "Seed for every probe (replays a run)");
    cmd->add_option("-j,--jobs", args->jobs, "Probes to run in parallel")->check(CLI::Range(std::size_t{1}, std::size_t{16}));
    auto* quiet = cmd->add_flag("--quiet", args->quiet, "No live progress line on stderr");
    cmd->add_flag("--progress", args->progress,
                  "A live progress line on stderr even when it is not a terminal or NO_COLOR is set "
                  "(by default only on a terminal)")
        ->excludes(quiet);
    add_report_options(*cmd, args->reports);
    cmd->add_option("--scorecard-json", args->scorecard_json, "Write the scorecard as JSON to this file");
    cmd->add_option("--timing-rounds", args->timing_rounds,
                    "Runs of a timing probe at most while its verdicts cannot tell the client from the noise its "
                    "control measured (default 3)")
        ->check(CLI::Range(1U, 10U));
    cmd->add_option("--control", args->control,
                    "What runs the timing probes' control: builtin (faultline, the default), node or python (a "
                    "control on that runtime, under the client's own interpreter when its command is one), auto "
                    "(the client's runtime when its command is node or python, else builtin)")
        ->check(CLI::IsMember({"builtin", "auto", "node", "python"}));
    // The timing probes' control process (this binary in control mode): not for users.
    cmd->add_option("--control-client", args->control_client)->group("");
    cmd->add_option("--control-delay", args->control_delay)->group("");
    cmd->add_option("--control-attempts", args->control_attempts)->group("")->check(CLI::Range(1U, 20U));
    cmd->footer(
        "Examples:\n  faultline score -- curl -s --retry 3 -X {method} {url}{path} -d {body}\n"
        "  faultline score --deadline 5s --max-attempts 4 -- ./my-client {url}{path}\n"
        "  faultline score            # the builtin client\n"
        "  faultline score --grpc --service-config retry.json -- python3 grpc-client.py {url} {path} "
        "--service-config {service_config}");
    cmd->callback([args] { run_score(*args); });
}

}  // namespace faultline::cli
