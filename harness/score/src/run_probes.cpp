#include "faultline/score/run_probes.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include <toml++/toml.h>

#include "faultline/checks/run_verdicts.hpp"
#include "faultline/config/duration.hpp"
#include "faultline/checks/timing_control.hpp"
#include "faultline/drivers/command_driver.hpp"
#include "faultline/score/attribution.hpp"
#include "faultline/score/control_client.hpp"

namespace faultline::score {

namespace {

bool retried(const record::run_record& run) {
    for (const record::operation_attempts& op : record::group_operations(run.journal)) {
        if (op.attempts.size() > 1) return true;
    }
    return false;
}

bool could_not_judge(const record::run_record& run, std::size_t expectations) {
    for (std::size_t i = 0; i < expectations && i < run.verdicts.size(); ++i) {
        if (run.verdicts[i].insufficient_evidence) return true;
    }
    return false;
}

// A process waking from its sleep and reconnecting on a busy 2-core machine was measured 64 ms late
// on a 2 s curl backoff (persistent-5xx.toml): the declared curve's envelope allows 200 ms either way.
constexpr auto declared_curve_tolerance = std::chrono::milliseconds{200};

checks::expectation parsed(std::string_view toml_text, const checks::expectation& replacing) {
    config_errors errors;
    const toml::table table = toml::parse(toml_text, std::string_view{"declared settings"});
    std::optional<checks::expectation> e = checks::parse_expectation(table, "declared settings", errors);
    // The tables are made here from validated settings: a failure is a bug in this file.
    if (!e) throw std::logic_error("declared settings make a bad [[expect]] table: " + errors.front().to_string());
    e->where = replacing.where;
    e->expect_failure = replacing.expect_failure;
    return *e;
}

// What the user declared replaces what the probe judges by default: the declared curve for its
// `backoff` check (the builtin client's policy is the probe's own; with no curve declared the check
// is left out), RFC 9110's strict reading for `no_retry_on_status` under --strict.
void apply_declarations(runner::scenario& s, const declared_settings& declared, bool builtin) {
    // Without a declared curve a command client's gaps are held to spacing and growth alone.
    if (!builtin && !declared.curve) {
        std::erase_if(s.expectations, [](const checks::expectation& e) { return e.check_name == "backoff"; });
    }
    for (checks::expectation& e : s.expectations) {
        if (e.check_name == "backoff" && declared.curve && !builtin) {
            e = parsed(backoff_expectation(*declared.curve, declared_curve_tolerance), e);
        } else if (e.check_name == "no_retry_on_status" && declared.strict) {
            e = parsed("check = \"no_retry_on_status\"\nstrict = true\n", e);
        }
    }
}

runner::scenario scenario_for(const probe& p, std::span<const std::string> client_template,
                               const declared_settings& declared, const probe_run_options& probe_options) {
    runner::scenario s = p.scenario;
    apply_declarations(s, declared, client_template.empty());
    if (client_template.empty()) return s;
    declared_settings filled = declared;
    if (p.timeout) filled.timeout = std::max(declared.timeout, *p.timeout);
    drivers::command_options command;
    command.mode = drivers::command_mode::per_operation;
    command.operations = p.operations;
    command.concurrency = p.concurrency;
    if (p.control > 0 && !probe_options.control.executable.empty()) {
        control_options control;
        control.delay = p.control_delay;
        control.attempts = p.control_attempts;
        command.control_argv = control_command(probe_options.control, control);
        command.control_processes = p.control;
    }
    record::declared_client facts;
    facts.deadline = declared.deadline;
    facts.max_attempts = declared.max_attempts;
    facts.backoff = declared.backoff;
    facts.attempt_timeout = declared.attempt_timeout;
    facts.grpc = declared.grpc;
    s.client = drivers::make_command_driver(instantiate(client_template, p.request, filled), command, std::move(facts));
    return s;
}

// A command client's run, judged again on the client's own attempts: without the control's, each
// process's attempts as its operation when they ran one after another, the timing checks against the
// control. The run's own verdicts come after the [[expect]] ones, as the runner orders them.
// `alone_gaps`: the client's own pace, from the probes where it ran alone under the same kind of failure
// (timing_control.hpp).
void judge_command_run(record::run_record& run, const probe& p, const runner::scenario& s,
                       const std::map<std::size_t, std::vector<std::int64_t>>& alone_gaps, control_runtime runtime) {
    if (!run.harness_error.empty()) return;
    const bool with_control = p.control > 0 && run.command &&
                              std::any_of(run.command->processes.begin(), run.command->processes.end(),
                                          [&](const record::process_record& r) { return r.op >= p.operations; });
    checks::timing_control control;
    if (with_control) {
        control = take_control(run, p);
        control.alone_gaps_ns = alone_gaps;
        control.runtime = runtime_label(runtime);
    }
    const bool attributed = attribute_to_processes(run);
    if (!with_control && !attributed) return;
    run.verdicts.clear();
    const record::operation_groups operations = record::group_operations(run.journal);
    for (const checks::expectation& e : s.expectations) {
        run.verdicts.push_back(checks::evaluate(e, run, operations, with_control ? &control : nullptr));
    }
    run.verdicts.push_back(checks::evidence_intact(run));
    for (record::verdict& v : checks::firing_verdicts(run)) run.verdicts.push_back(std::move(v));
}

// The probes that run the client alone go first, by themselves, so that nothing queues the pace they
// measure (beside a herd a no-delay client's lone retries took up to 380 ms; beside the other probes'
// processes the naive Node.js loop's first retry took 80-95 ms against 28-35 ms), all at once:
// single processes that mostly sleep, where one after another they were the scorecard's critical
// path (curl's 1 + 2 + 4 s backoff four times: 28 of its 38.6 s), and eight of them in two waves on
// four workers made got's scorecard 40 s. Then the timing probes (those with a control) run one at a
// time in a lane of their own, beside the others: two herds of 48 processes at once on a small machine
// would be each other's noise. The others go longest first, so no long probe starts last and runs
// alone: by the longest wait their faults ask of the server or of the client (a Retry-After), up to
// the probe's time limit, since one that asks 20 s of a client with a 12 s limit runs to its limit
// (the time limits alone are ceilings, most never reached).
std::chrono::nanoseconds longest_wait(const runner::scenario& s) {
    std::chrono::nanoseconds longest{0};
    for (const faults::rule& r : s.faults) {
        if (const auto bound = r.fault->longest_wait()) longest = std::max(longest, bound->longest);
        if (const auto* asked = r.source.if_contains("retry_after"); asked != nullptr && asked->is_string()) {
            if (const auto wait = config::parse_duration(std::string_view{asked->get_string()})) {
                longest = std::max(longest, *wait.value);
            }
        }
    }
    return std::min(longest, std::chrono::duration_cast<std::chrono::nanoseconds>(s.time_limit));
}

// Eight lone probes started at once would be a small herd of their own: their processes boot and
// retry together. 130 ms apart, their retries after a common delay (200 ms, 1 s, and their
// doublings) fall at eight different moments.
constexpr std::chrono::milliseconds lone_probe_stagger{130};

std::vector<record::run_record> run_in_lanes(std::span<const probe> probes, const std::vector<runner::scenario>& scenarios,
                                              const runner::run_options& options, std::size_t jobs) {
    // 0: alone, 1: timing, 2: the rest.
    const auto place = [&](std::size_t i) { return probes[i].alone() ? 0 : probes[i].control > 0 ? 1 : 2; };
    std::vector<std::size_t> order(probes.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        if (place(a) != place(b)) return place(a) < place(b);
        return place(a) == 2 && longest_wait(scenarios[a]) > longest_wait(scenarios[b]);
    });
    const auto count_of = [&](int lane) {
        return static_cast<std::size_t>(std::count_if(order.begin(), order.end(), [&](std::size_t i) { return place(i) == lane; }));
    };
    const std::size_t alone = count_of(0);
    std::vector<runner::scenario> first;
    std::vector<runner::scenario> then;
    for (std::size_t j = 0; j < order.size(); ++j) (j < alone ? first : then).push_back(scenarios[order[j]]);
    std::vector<record::run_record> ran = runner::run_scenarios(first, options, 1, {}, 0, alone, lone_probe_stagger);
    std::vector<record::run_record> rest = runner::run_scenarios(then, options, jobs, {}, count_of(1));
    ran.insert(ran.end(), std::make_move_iterator(rest.begin()), std::make_move_iterator(rest.end()));
    std::vector<record::run_record> runs(probes.size());
    for (std::size_t j = 0; j < order.size(); ++j) runs[order[j]] = std::move(ran[j]);
    return runs;
}

}  // namespace

checks::timing_control take_control(record::run_record& run, const probe& p) {
    std::vector<record::journal_record> control_journal;
    std::vector<record::journal_record> client_journal;
    for (record::journal_record& r : run.journal) {
        (r.target.view().starts_with(control_path_prefix) ? control_journal : client_journal).push_back(std::move(r));
    }
    run.journal = std::move(client_journal);
    std::size_t processes = 0;
    if (run.command) {
        auto& all = run.command->processes;
        const auto control_begin = std::stable_partition(
            all.begin(), all.end(), [&](const record::process_record& r) { return r.op < p.operations; });
        processes = static_cast<std::size_t>(all.end() - control_begin);
        all.erase(control_begin, all.end());
        // The control's exit status is no part of the client's result.
        const auto failed = std::find_if(all.begin(), all.end(),
                                         [](const record::process_record& r) { return r.exit_status != 0; });
        run.command->exit_status = failed == all.end() ? 0 : failed->exit_status;
    }
    return checks::measure_control(control_journal, p.control_delay, processes);
}

std::vector<record::run_record> run_probes(std::span<const probe> probes, std::span<const std::string> client_template,
                                            const declared_settings& declared, const runner::run_options& options,
                                            std::size_t jobs, const probe_run_options& probe_options) {
    const bool builtin = client_template.empty();
    std::vector<runner::scenario> scenarios;
    for (const probe& p : probes) scenarios.push_back(scenario_for(p, client_template, declared, probe_options));
    std::vector<record::run_record> runs = run_in_lanes(probes, scenarios, options, jobs);
    if (builtin) return runs;
    // The probes without a control first: those where the client ran alone give its pace under their
    // kind of failure, against which the timing probes tell its own delay from the herd's queueing.
    std::map<std::string, std::map<std::size_t, std::vector<std::int64_t>>, std::less<>> paces;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        if (probes[i].control > 0) continue;
        judge_command_run(runs[i], probes[i], scenarios[i], {}, probe_options.control.runtime);
        if (probes[i].alone() && runs[i].harness_error.empty()) {
            checks::add_gaps_alone(runs[i].journal, paces[std::string{probes[i].failure_kind()}]);
        }
    }
    const auto pace_for = [&](const probe& p) {
        const auto at = paces.find(p.failure_kind());
        return at == paces.end() ? std::map<std::size_t, std::vector<std::int64_t>>{} : at->second;
    };
    for (std::size_t i = 0; i < runs.size(); ++i) {
        if (probes[i].control > 0) judge_command_run(runs[i], probes[i], scenarios[i], pace_for(probes[i]), probe_options.control.runtime);
    }

    // Timing probes that could not tell the client from noise run again, all of them at once.
    for (std::uint32_t round = 2; round <= probe_options.timing_rounds; ++round) {
        std::vector<std::size_t> again;
        for (std::size_t i = 0; i < runs.size(); ++i) {
            const probe& p = probes[i];
            if (p.control == 0 || probe_options.control.executable.empty() || !runs[i].harness_error.empty() ||
                runs[i].not_run || runs[i].interrupted) {
                continue;
            }
            if (could_not_judge(runs[i], p.scenario.expectations.size()) && retried(runs[i])) again.push_back(i);
        }
        if (again.empty() || (options.interrupt != nullptr && options.interrupt->requested())) break;
        std::vector<runner::scenario> repeat;
        for (const std::size_t i : again) repeat.push_back(scenarios[i]);
        std::vector<record::run_record> rerun = runner::run_scenarios(repeat, options, jobs);
        for (std::size_t j = 0; j < again.size(); ++j) {
            record::run_record& next = rerun[j];
            if (next.not_run) continue;
            judge_command_run(next, probes[again[j]], scenarios[again[j]], pace_for(probes[again[j]]),
                              probe_options.control.runtime);
            const std::string note = "round " + std::to_string(round) + " of at most " +
                                     std::to_string(probe_options.timing_rounds) +
                                     " (the earlier could not tell the client from timing noise): ";
            for (std::size_t v = 0; v < probes[again[j]].scenario.expectations.size() && v < next.verdicts.size(); ++v) {
                next.verdicts[v].summary = note + next.verdicts[v].summary;
            }
            runs[again[j]] = std::move(next);
        }
    }
    return runs;
}

}  // namespace faultline::score
