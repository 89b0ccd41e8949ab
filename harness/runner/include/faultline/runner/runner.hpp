// The runner: executes loaded scenarios and turns what happened into a run record with verdicts.
// For one scenario it starts a fault server on 127.0.0.1 (ephemeral port) with the scenario's
// service, rules and seed; runs the client under test against it (FAULTLINE_URL for commands) until
// the workload is done or the time limit is reached; stops everything; then builds the run record
// (journal in seq order, client records, command result, seed, timings) and evaluates the
// `[[expect]]` checks. A scenario passes iff every check passes, expected failures inverted. Several
// scenarios may run in parallel, each with its own server and port.
// With `[proxy]` the runner starts the proxy (faultline/server/proxy.hpp) in front of the scenario's
// real upstream instead of the built-in service model, with the same context (rules, seed, journal,
// ledger): the upstream is the commit point. An upstream not reachable at start is a harness error.
// With `[[relay]]` tiers it also starts one server per tier, each forwarding to the next
// (faultline/server/relay.hpp), points the client at the first, and the run's journal is every
// tier's journal merged into one history, each record tagged with its instance (journal_merge.hpp).
//
// Also here: the process exit codes every `faultline` command shares, and how run results map to them.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "faultline/drivers/interrupt.hpp"
#include "faultline/faults/engine.hpp"
#include "faultline/record/run_record.hpp"
#include "faultline/runner/progress.hpp"
#include "faultline/runner/scenario.hpp"

namespace faultline::runner {

// The exit codes of the `faultline` executable.
enum class exit_code : int {
    passed = 0,         // every check of every scenario passed (expected failures inverted)
    check_failed = 1,   // a check failed
    bad_input = 2,      // a bad scenario, journal or command line: nothing was run
    harness_error = 3,  // the harness itself failed: server did not start, journal overflow, driver error
    insufficient_evidence = 4,  // no check failed, but one could not judge (too few events; verdict_outcome)
};

constexpr int to_int(exit_code code) { return static_cast<int>(code); }
std::string_view to_string(exit_code code);

// The more serious of two codes, for combining results: passed < insufficient_evidence <
// check_failed < harness_error < bad_input (bad input means nothing could run at all).
exit_code worst(exit_code a, exit_code b);

// One run's code: harness_error when `harness_error` is set, else check_failed when a verdict failed,
// else insufficient_evidence when one could not judge, else passed.
exit_code exit_code_of(const record::run_record& run);
// All runs' code (passed for none).
exit_code exit_code_of(const std::vector<record::run_record>& runs);

// The exit status of a run cut short by `signal` (SIGINT 130, SIGTERM 143), as a shell reports a
// process the signal ended. It replaces every code above: the run did not finish, whatever it judged.
constexpr int interrupted_exit_status(int signal) { return 128 + signal; }

// The threads this machine runs at once (std::thread::hardware_concurrency, at least 1).
std::size_t hardware_threads();

struct run_options {
    std::optional<std::uint64_t> seed;  // replaces every scenario's seed (`--seed N`)
    std::size_t server_threads = 2;     // worker threads of each scenario's fault server
    bool strict = false;                // `--strict`: as if every scenario said `strict = true`
    // Keep each attempt's wire detail (run_record::wire) for a report that writes the journal out; no
    // check reads them, and without them the journal takes two thirds of the memory.
    bool keep_wire_details = true;
    // When set and requested, the running clients are stopped and no further scenario starts.
    const drivers::run_interrupt* interrupt = nullptr;
    // When set, told as each scenario opens and closes its journal and finishes (progress.hpp).
    progress_listener* progress = nullptr;
    // Threads evaluating checks (evaluate_checks); run_scenarios divides them among the scenarios it
    // runs at once.
    std::size_t check_threads = hardware_threads();
};

// Runs one scenario to completion, or until `options.interrupt` is requested: then the client is
// stopped, the record says `interrupted`, and the checks judge what ran. Never throws: a failure of
// the harness itself is reported in `run_record::harness_error` (and the checks are not evaluated).
// The record holds how often each fault rule fired; after the `[[expect]]` verdicts come the ones
// every run gets (checks/run_verdicts.hpp: evidence_intact, fired:<rule>). `options.progress`, when
// set, hears of the journal opening and closing and of the finished record. Thread-safe for distinct
// scenarios; one scenario (its driver) must not be run twice at once.
record::run_record run_scenario(const scenario& s, const run_options& options = {});

// Evaluates a scenario's checks against a record, replacing its verdicts, in expectation order. The
// attempts are grouped once, then the checks run on up to `threads` threads (this one included, at
// most one per check): checks are immutable, and each writes only its own verdict. If checks throw,
// the exception of the first of them (in expectation order) is rethrown once all have finished.
void evaluate_checks(const std::vector<checks::expectation>& expectations, record::run_record& run,
                     std::size_t threads = hardware_threads());

// The firing counts of the scenario's rules, in file order: the engine's count of each rule still
// installed at the end (`fired_by_rule`), else the attempts in the journal that name it.
std::vector<record::rule_firing> rule_firings(const std::vector<faults::rule>& rules, const faults::engine_counters& counters,
                                      const std::vector<record::journal_record>& journal);

// Runs scenarios with at most `jobs` at a time (at least one). `on_finished` (optional) is called
// once per scenario as it finishes, with its index, serialised so output does not interleave.
// Returns the records in the order of `scenarios`. Once `options.interrupt` is requested no further
// scenario starts: the record of each that did not is `not_run` (and `on_finished` is not called
// for it). The first `lane` scenarios run one after another on one of the workers, which then joins
// the others: scenarios that must not overlap each other (`faultline score`'s herds, each the other's
// noise) without a worker left idle once they are done. The next `after_lane` scenarios start
// once the lane has ended, each on a thread of its own beside the `jobs`, the k-th of them
// k × `after_lane_stagger` later (`score`'s lone probes: no herd may run beside them, none need wait
// for another, and staggered they do not form a small herd of their own).
std::vector<record::run_record> run_scenarios(const std::vector<scenario>& scenarios, const run_options& options,
                                      std::size_t jobs,
                                      const std::function<void(std::size_t, const record::run_record&)>& on_finished = {},
                                      std::size_t lane = 0, std::size_t after_lane = 0,
                                      std::chrono::milliseconds after_lane_stagger = {});

}  // namespace faultline::runner
