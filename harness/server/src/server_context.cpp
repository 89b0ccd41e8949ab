#include "faultline/server/server_context.hpp"

#include "faultline/faults/rules_toml.hpp"

#include <stdexcept>
#include <string>
#include <utility>

namespace faultline::server {

namespace {

// Rules may have been parsed before the [server] limits were known (a scenario's [[fault]] tables
// are read with the default max_fault_wait), so they are checked again here.
std::vector<faults::rule> within_limits(std::vector<faults::rule> rules, const server_limits& limits) {
    std::string problems;
    for (const faults::rule& r : rules) {
        for (const std::string& p : faults::wait_problems(r, {limits.max_fault_wait})) problems += p + "\n";
    }
    if (!problems.empty()) throw std::invalid_argument{problems.substr(0, problems.size() - 1)};
    return rules;
}

}  // namespace

server_context::server_context(const model_config& model_cfg, std::vector<faults::rule> rules,
                               std::uint64_t seed, journal_options journal_cfg, faults::engine_limits engine_cfg,
                               ledger_keeps ledger_cfg)
    : limits{model_cfg.limits},
      effects{ledger_cfg},
      model{model_cfg.service, effects},
      idempotency{model_cfg.idempotency},
      identity{model_cfg.identity},
      records{std::move(journal_cfg)},
      engine{seed, within_limits(std::move(rules), model_cfg.limits), engine_cfg} {}

void server_context::reset() {
    records.reset();
    forget_effects();
}

std::optional<record::round_number> server_context::start_round(record::server_event reset_event) {
    const std::optional<record::round_number> round = records.start_round(std::move(reset_event));
    if (round) forget_effects();
    return round;
}

void server_context::forget_effects() {
    effects.reset();
    release_service_state();
}

void server_context::release_service_state() {
    attempts.reset();
    idempotency.reset();
    model.reset();
}

}  // namespace faultline::server
