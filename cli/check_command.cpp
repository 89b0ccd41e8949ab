// `faultline check JOURNAL.jsonl… --expect FILE.toml [--round N]`: evaluates the `[[expect]]` checks of
// FILE against a journal recorded by `faultline serve/proxy --journal` (any client, any language; several
// journals are merged into one history, journal_merge.hpp), each round on its own (a reset starts the
// next: journal_rounds.hpp; operations never span rounds), or only round N; prints the console report,
// a section per round when there are several, and exits 0 when every check of every round passed
// (expected failures inverted), 1 when one failed, 2 when the journal or the expectations file is bad
// (the expectations are read first) or round N holds no attempts, 3 when a report could not be
// written; --report / --report-dir write reports as `faultline run` does, a run per round. Checks
// work from the journal alone here: there are no client-side records. A torn last line (the writer was
// killed mid-line) is not bad input: it is reported on stderr and the rest of the journal is judged. A
// journal of `faultline proxy --mode tcp` (connections, no attempts) is bad input, exit 2, said plainly.
#include "commands.hpp"
#include "report_output.hpp"

#include "faultline/record/journal_json.hpp"
#include "faultline/record/journal_merge.hpp"
#include "faultline/record/journal_rounds.hpp"
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
#include <optional>
#include <string>
#include <vector>

namespace faultline::cli {

namespace {

struct check_args {
    std::vector<std::string> journals;
    std::string expect;
    std::optional<std::uint64_t> round;
    report_targets reports;
};

// "2, 3 and 5".
std::string round_list(const std::vector<record::journal_round>& rounds) {
    std::string out;
    for (std::size_t i = 0; i < rounds.size(); ++i) {
        if (i > 0) out += i + 1 == rounds.size() ? " and " : ", ";
        out += std::to_string(rounds[i].number);
    }
    return out;
}

// The rounds to judge: every one, or the one `--round` names (bad input when it holds no attempts).
std::vector<record::journal_round> chosen_rounds(std::vector<record::journal_round> rounds,
                                                  const check_args& args) {
    if (!args.round) return rounds;
    for (record::journal_round& r : rounds) {
        if (r.number == *args.round) return {std::move(r)};
    }
    std::cerr << "--round " << *args.round << ": the journal has no attempts in that round; rounds with attempts: "
              << round_list(rounds) << '\n';
    throw CLI::RuntimeError(exit_bad_input);
}

// The seed the journals were written with (their anchors'), said on stderr when they disagree; 0
// when none says.
std::uint64_t seed_of(const std::vector<record::named_journal>& journals) {
    std::optional<std::uint64_t> seed;
    for (const record::named_journal& j : journals) {
        const std::optional<std::uint64_t> own = record::journal_seed(j.server_events);
        if (own && seed && *own != *seed) {
            std::cerr << j.name << ": written with seed " << *own << ", not " << *seed
                      << " as the journal before it; reports show " << *seed << '\n';
        }
        if (!seed) seed = own;
    }
    return seed.value_or(0);
}

void run_check(const check_args& args) {
    // The expectations first: a misspelt key is reported before a large journal is read.
    const runner::expectations_result expected = runner::load_expectations_file(args.expect);
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
    std::vector<record::named_journal> read;
    for (const std::string& path : args.journals) {
        // A TCP-mode journal parses as JSON but holds connections: say so rather than "bad record".
        if (std::ifstream in{path}; in && tcp::holds_tcp_connections(in)) {
            std::cerr << path << ": a TCP-mode journal (faultline proxy --mode tcp) records connections, not HTTP "
                                 "attempts: the checks have nothing to judge in it\n";
            throw CLI::RuntimeError(exit_bad_input);
        }
        record::jsonl_read_result journal = record::read_jsonl(path);
        if (!journal.ok()) {
            for (const auto& e : journal.errors) std::cerr << e.to_string() << '\n';
            throw CLI::RuntimeError(exit_bad_input);
        }
        for (const auto& w : journal.warnings) std::cerr << w.to_string() << '\n';
        read.push_back({path, std::move(journal.records), std::move(journal.server_events), {}});
    }
    std::string names = args.journals.front();
    for (std::size_t i = 1; i < args.journals.size(); ++i) names += " + " + args.journals[i];
    const std::uint64_t seed = seed_of(read);

    std::vector<record::journal_record> records;
    std::vector<record::server_event> events;
    if (read.size() == 1) {
        records = std::move(read.front().records);
        events = std::move(read.front().server_events);
    } else {
        record::merged_journal merged = record::merge_journals(std::move(read));
        for (const auto& w : merged.warnings) std::cerr << w << '\n';
        records = std::move(merged.records);
        events = std::move(merged.server_events);
    }
    std::vector<record::journal_round> rounds = record::split_rounds(std::move(records), std::move(events));
    const bool several_rounds = rounds.size() > 1;
    rounds = chosen_rounds(std::move(rounds), args);

    std::vector<record::run_record> runs;
    for (record::journal_round& round : rounds) {
        record::run_record& run = runs.emplace_back();
        // Each verdict says which round it judged when the journal has several.
        run.scenario = names + (several_rounds ? " round " + std::to_string(round.number) : "");
        run.description = (args.journals.size() > 1 ? "journals " : "journal ") + run.scenario + " checked against " +
                          args.expect;
        run.seed = seed;
        run.journal = std::move(round.records);
        run.server_events = std::move(round.server_events);
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
                      [](const record::journal_record& a, const record::journal_record& b) { return a.seq < b.seq; });
        }
        // The rounds are judged one after another, each on a thread per core.
        runner::evaluate_checks(expected.expectations, run, runner::hardware_threads());
    }

    reports::console_options console;
    console.color = ::isatty(STDOUT_FILENO) != 0;
    console.show_replay = false;
    for (const record::run_record& run : runs) std::cout << reports::console_report(run, console);
    runner::exit_code code = runner::exit_code_of(runs);
    if (!write_reports(args.reports, std::span{runs})) code = runner::worst(code, runner::exit_code::harness_error);
    if (code != runner::exit_code::passed) throw CLI::RuntimeError(runner::to_int(code));
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
    cmd->add_option("--round", args->round,
                    "Judge only this round (a reset starts the next; default: each round with attempts on its own)");
    add_report_options(*cmd, args->reports);
    cmd->callback([args] { run_check(*args); });
}

}  // namespace faultline::cli
