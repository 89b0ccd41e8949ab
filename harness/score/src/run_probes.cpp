#include "faultline/score/run_probes.hpp"

#include "faultline/checks/run_verdicts.hpp"
#include "faultline/drivers/command_driver.hpp"
#include "faultline/score/attribution.hpp"

namespace faultline::score {

std::vector<harness::run_record> run_probes(std::span<const probe> probes, std::span<const std::string> client_template,
                                            const declared_settings& declared, const harness::run_options& options,
                                            std::size_t jobs) {
    const bool builtin = client_template.empty();
    std::vector<harness::scenario> scenarios;
    for (const probe& p : probes) {
        harness::scenario s = p.scenario;
        if (!builtin) {
            harness::command_options command;
            command.mode = harness::command_mode::per_operation;
            command.operations = p.operations;
            command.concurrency = p.concurrency;
            harness::declared_client facts;
            facts.deadline = declared.deadline;
            facts.max_attempts = declared.max_attempts;
            facts.backoff = declared.backoff;
            s.client = harness::make_command_driver(instantiate(client_template, p.request, declared), command,
                                                    std::move(facts));
        }
        scenarios.push_back(std::move(s));
    }
    std::vector<harness::run_record> runs = harness::run_scenarios(scenarios, options, jobs);
    for (std::size_t i = 0; i < runs.size(); ++i) {
        if (!builtin && runs[i].harness_error.empty() && attribute_to_processes(runs[i])) {
            // Re-judging replaces every verdict: the run's own come after the [[expect]] ones again, as
            // the runner orders them (they judge the server's events and firings, not operations).
            harness::evaluate_checks(scenarios[i].expectations, runs[i]);
            runs[i].verdicts.push_back(harness::evidence_intact(runs[i]));
            for (harness::verdict& v : harness::firing_verdicts(runs[i])) runs[i].verdicts.push_back(std::move(v));
        }
    }
    return runs;
}

}  // namespace faultline::score
