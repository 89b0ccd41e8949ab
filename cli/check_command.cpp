// `faultline check JOURNAL.jsonl… --expect FILE.toml`: evaluates the `[[expect]]` checks of FILE
// against a journal recorded by `faultline serve/proxy --journal` (any client, any language; several
// journals are merged into one history, journal_merge.hpp), prints the
// console report and exits 0 when every check passed (expected failures inverted), 1 when one
// failed, 2 when the journal or the expectations file is bad (the expectations are read first), 3 when
// a report could not be written; --report / --report-dir write reports as `faultline run` does. Checks
// work from the journal alone here: there are no client-side records. A torn last line (the writer was
// killed mid-line) is not bad input: it is reported on stderr and the rest of the journal is judged. A
// journal of `faultline proxy --mode tcp` (connections, no attempts) is bad input, exit 2, said plainly.
#include "commands.hpp"
#include "report_output.hpp"

#include "faultline/record/journal_json.hpp"
#include "faultline/record/journal_merge.hpp"
#include "faultline/record/run_record.hpp"
#include "faultline/runner/runner.hpp"
#include "faultline/runner/scenario.hpp"
#include "faultline/reports/console.hpp"
#include "faultline/tcp/connection_journal.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace faultline::cli {

namespace {

struct check_args {
    std::vector<std::string> journals;
    std::string expect;
    report_targets reports;
};

void run_check(const check_args& args) {
    // The expectations first: a misspelt key is reported before a large journal is read.
    const harness::expectations_result expected = harness::load_expectations_file(args.expect);
    if (!expected.ok()) {
        for (const auto& e : expected.errors) std::cerr << e.to_string() << '\n';
        throw CLI::RuntimeError(exit_bad_input);
    }
    // Several journals (several serve/proxy instances) are judged as one merged history; one file
    // named twice would be every attempt twice.
    for (std::size_t i = 0; i < args.journals.size(); ++i) {
        for (std::size_t j = 0; j < i; ++j) {
            std::error_code ec;
            if (std::filesystem::equivalent(args.journals[i], args.journals[j], ec)) {
                std::cerr << args.journals[i] << ": is named twice (as " << args.journals[j]
                          << "): each journal is one instance's history\n";
                throw CLI::RuntimeError(exit_bad_input);
            }
        }
    }
    std::vector<harness::named_journal> read;
    for (const std::string& path : args.journals) {
        // A TCP-mode journal parses as JSON but holds connections: say so rather than "bad record".
        if (std::ifstream in{path}; in && tcp::holds_tcp_connections(in)) {
            std::cerr << path << ": a TCP-mode journal (faultline proxy --mode tcp) records connections, not HTTP "
                                 "attempts: the checks have nothing to judge in it\n";
            throw CLI::RuntimeError(exit_bad_input);
        }
        harness::jsonl_read_result journal = harness::read_jsonl(path);
        if (!journal.ok()) {
            for (const auto& e : journal.errors) std::cerr << e.to_string() << '\n';
            throw CLI::RuntimeError(exit_bad_input);
        }
        for (const auto& w : journal.warnings) std::cerr << w.to_string() << '\n';
        read.push_back({path, std::move(journal.records), std::move(journal.server_events), {}});
    }
    std::string names = args.journals.front();
    for (std::size_t i = 1; i < args.journals.size(); ++i) names += " + " + args.journals[i];

    harness::run_record run;
    run.scenario = names;
    run.description = (read.size() > 1 ? "journals " : "journal ") + names + " checked against " + args.expect;
    if (read.size() == 1) {
        run.journal = std::move(read.front().records);
        run.server_events = std::move(read.front().server_events);
    } else {
        harness::merged_journal merged = harness::merge_journals(std::move(read));
        for (const auto& w : merged.warnings) std::cerr << w << '\n';
        run.journal = std::move(merged.records);
        run.server_events = std::move(merged.server_events);
    }
    // One pass over the records for both: whether they are in seq order, and when the last one ended.
    bool in_seq_order = true;
    for (std::size_t i = 0; i < run.journal.size(); ++i) {
        if (i > 0 && run.journal[i].seq < run.journal[i - 1].seq) in_seq_order = false;
        if (i == 0 || run.journal[i].finished_ns > run.duration.count()) {
            run.duration = std::chrono::nanoseconds{run.journal[i].finished_ns};
        }
    }
    // The server writes in seq order; sorting a sorted journal would still move every (large) record.
    if (!in_seq_order) {
        std::sort(run.journal.begin(), run.journal.end(),
                  [](const harness::journal_record& a, const harness::journal_record& b) { return a.seq < b.seq; });
    }
    // This one journal is all the process does now: a thread per core for its checks.
    harness::evaluate_checks(expected.expectations, run, harness::hardware_threads());

    reports::console_options console;
    console.color = ::isatty(STDOUT_FILENO) != 0;
    console.show_replay = false;
    std::cout << reports::console_report(run, console);
    harness::exit_code code = harness::exit_code_of(run);
    if (!write_reports(args.reports, std::span{&run, 1})) code = harness::worst(code, harness::exit_code::harness_error);
    if (code != harness::exit_code::passed) throw CLI::RuntimeError(harness::to_int(code));
}

}  // namespace

void add_check_command(CLI::App& app) {
    auto args = std::make_shared<check_args>();
    CLI::App* cmd = app.add_subcommand("check", "Evaluate [[expect]] checks against a journal from `faultline serve`");
    cmd->add_option("journals", args->journals,
                    "Journal files (JSON Lines) written by `faultline serve/proxy --journal`; several are merged "
                    "into one history by their wall-clock anchors")
        ->required();
    cmd->add_option("--expect", args->expect, "TOML file with [[expect]] tables (a scenario file works too)")
        ->required();
    add_report_options(*cmd, args->reports);
    cmd->callback([args] { run_check(*args); });
}

}  // namespace faultline::cli
