#include "faultline/runner/runner.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

#include "faultline/checks/run_verdicts.hpp"
#include "faultline/core/clock.hpp"
#include "faultline/drivers/driver.hpp"
#include "faultline/server/server.hpp"

namespace faultline::harness {
namespace {

int severity(exit_code code) {
    switch (code) {
        case exit_code::passed: return 0;
        case exit_code::insufficient_evidence: return 1;
        case exit_code::check_failed: return 2;
        case exit_code::harness_error: return 3;
        case exit_code::bad_input: return 4;
    }
    return 4;
}

// Tells the listener while a scenario's journal is readable: declared after the journal, so it says
// "closed" before the journal goes, however the scope is left.
class attempts_watch {
public:
    attempts_watch(progress_listener* listener, const journal& live) : listener_(listener), live_(live) {
        if (listener_ != nullptr) listener_->attempts_opened(live_);
    }
    ~attempts_watch() {
        if (listener_ != nullptr) listener_->attempts_closed(live_);
    }
    attempts_watch(const attempts_watch&) = delete;
    attempts_watch& operator=(const attempts_watch&) = delete;

private:
    progress_listener* listener_;
    const journal& live_;
};

// The part of a run that can throw (constructing the server's context, the driver): everything
// that goes wrong becomes `harness_error`.
void execute(const scenario& s, const run_options& options, run_record& record) {
    faultline::clock& clk = steady_clock_source::instance();

    model_config model = s.server;
    // A driver that names every operation in a header has the server identify operations by it, so
    // the journal and the client records agree on operation names (an Idempotency-Key still takes
    // precedence on the server).
    if (const std::string_view header = s.client->identity_header(); !header.empty()) {
        model.identity.header = std::string(header);
    }
    journal_options journal_bound;
    journal_bound.max_records = model.journal_max_records;
    server_context context(model, s.faults, record.seed, journal_bound);
    const attempts_watch watch(options.progress, context.records);

    server_options server_opts;
    server_opts.threads = std::max<std::size_t>(1, options.server_threads);
    server fault_server(context, server_opts, clk);
    if (const boost::system::error_code ec = fault_server.start()) {
        record.harness_error = "the fault server failed to start: " + ec.message();
        return;
    }

    driver_context ctx{"127.0.0.1",  fault_server.port(),     fault_server.url(), record.seed,
                       clk,          fault_server.run_start(), s.time_limit};
    ctx.interrupt = options.interrupt;
    driver_result result = s.client->run(ctx);
    fault_server.stop();

    record.duration = clk.now() - fault_server.run_start();
    // Moved out, not copied: a copy held every record twice at the run's peak (docs/benchmarks.md).
    record.journal = context.records.take();
    std::sort(record.journal.begin(), record.journal.end(),
              [](const journal_record& a, const journal_record& b) { return a.seq < b.seq; });
    record.server_events = context.records.events();
    record.clients = std::move(result.clients);
    record.command = std::move(result.command);
    record.declared = s.client->declared();
    record.rule_firings = rule_firings(s.faults, context.engine.counters(), record.journal);
    record.interrupted = result.interrupted;

    if (!result.error.empty()) {
        record.harness_error = "the client driver failed: " + result.error;
    } else if (context.records.failed()) {
        record.harness_error = "the journal failed: " + context.records.error();
    } else if (!context.records.memory_complete()) {
        record.harness_error = "the journal outgrew memory (server.journal_max_records = " +
                               std::to_string(model.journal_max_records) + ")";
    }
}

}  // namespace

std::string_view to_string(exit_code code) {
    switch (code) {
        case exit_code::passed: return "passed";
        case exit_code::check_failed: return "check failed";
        case exit_code::insufficient_evidence: return "insufficient evidence";
        case exit_code::bad_input: return "bad input";
        case exit_code::harness_error: return "harness error";
    }
    return "harness error";
}

exit_code worst(exit_code a, exit_code b) { return severity(a) >= severity(b) ? a : b; }

exit_code exit_code_of(const run_record& run) {
    if (!run.harness_error.empty()) return exit_code::harness_error;
    switch (outcome_of(run)) {
        case verdict_outcome::pass: return exit_code::passed;
        case verdict_outcome::insufficient_evidence: return exit_code::insufficient_evidence;
        case verdict_outcome::fail: break;
    }
    return exit_code::check_failed;
}

exit_code exit_code_of(const std::vector<run_record>& runs) {
    exit_code out = exit_code::passed;
    for (const run_record& run : runs) out = worst(out, exit_code_of(run));
    return out;
}

void evaluate_checks(const std::vector<expectation>& expectations, run_record& run) {
    run.verdicts.clear();
    run.verdicts.reserve(expectations.size());
    const std::vector<operation_attempts> operations = group_operations(run.journal);
    for (const expectation& e : expectations) run.verdicts.push_back(evaluate(e, run, operations));
}

std::vector<rule_firing> rule_firings(const std::vector<faults::rule>& rules, const faults::engine_counters& counters,
                                      const std::vector<journal_record>& journal) {
    std::vector<rule_firing> out;
    out.reserve(rules.size());
    for (const faults::rule& r : rules) {
        rule_firing f{r.name, r.kind, 0, r.min_fired};
        const auto installed = std::find_if(counters.fired_by_rule.begin(), counters.fired_by_rule.end(),
                                            [&](const auto& entry) { return entry.first == r.name; });
        if (installed != counters.fired_by_rule.end()) {
            f.fired = installed->second;
        } else {
            // Removed during the run (evidence_intact fails it): its connection-level firings are lost.
            f.fired = static_cast<std::uint64_t>(std::count_if(
                journal.begin(), journal.end(), [&](const journal_record& a) { return a.rule == r.name; }));
        }
        out.push_back(std::move(f));
    }
    return out;
}

run_record run_scenario(const scenario& s, const run_options& options) {
    run_record record;
    record.strict = s.strict || options.strict;
    record.scenario = s.name;
    record.scenario_file = s.file;
    record.description = s.description;
    record.seed = options.seed.value_or(s.seed);
    record.started_at = steady_clock_source::instance().wall_now();
    if (!s.client) {
        record.harness_error = "the scenario has no client";
    } else {
        try {
            execute(s, options, record);
        } catch (const std::exception& error) {
            record.harness_error = std::string("the run failed: ") + error.what();
        }
    }
    if (record.harness_error.empty()) {
        evaluate_checks(s.expectations, record);
        record.verdicts.push_back(evidence_intact(record));
        for (verdict& v : firing_verdicts(record)) record.verdicts.push_back(std::move(v));
    }
    if (options.progress != nullptr) options.progress->scenario_finished(record);
    return record;
}

std::vector<run_record> run_scenarios(const std::vector<scenario>& scenarios, const run_options& options,
                                      std::size_t jobs,
                                      const std::function<void(std::size_t, const run_record&)>& on_finished) {
    std::vector<run_record> records(scenarios.size());
    std::atomic<std::size_t> next{0};
    std::mutex report_mutex;
    auto worker = [&] {
        for (std::size_t i = next++; i < scenarios.size(); i = next++) {
            if (options.interrupt != nullptr && options.interrupt->requested()) {
                records[i].scenario = scenarios[i].name;
                records[i].not_run = true;
                continue;
            }
            records[i] = run_scenario(scenarios[i], options);
            if (on_finished) {
                const std::lock_guard lock(report_mutex);
                on_finished(i, records[i]);
            }
        }
    };
    const std::size_t threads = std::clamp<std::size_t>(jobs, 1, std::max<std::size_t>(1, scenarios.size()));
    std::vector<std::thread> pool;
    pool.reserve(threads - 1);
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
    for (std::thread& t : pool) t.join();
    return records;
}

}  // namespace faultline::harness
