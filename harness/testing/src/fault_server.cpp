#include "faultline/testing/fault_server.hpp"

#include "errors.hpp"

#include "faultline/faults/rules_toml.hpp"
#include "faultline/runner/runner.hpp"
#include "faultline/server/serve_config.hpp"
#include "faultline/server/server.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace faultline::testing {

namespace {

faults::rule_limits limits_of(const server::model_config& model) {
    return faults::rule_limits{model.limits.max_fault_wait};
}

fault_server_options options_from_rules_file(std::string_view rules_toml, std::uint64_t seed) {
    auto parsed = server::parse_serve_config(rules_toml, "rules.toml");
    if (!parsed.ok()) detail::throw_config_errors("fault_server: the rules do not load:", parsed.errors);
    fault_server_options options;
    options.model = parsed.config->model;
    options.seed = parsed.config->settings.seed.value_or(seed);
    return options;
}

}  // namespace

fault_server::fault_server(fault_server_options options) : options_(std::move(options)) {
    context_ = std::make_unique<server::server_context>(options_.model, std::vector<faults::rule>{}, options_.seed);
    start();
}

fault_server::fault_server(std::string_view rules_toml, std::uint64_t seed)
    : fault_server(options_from_rules_file(rules_toml, seed)) {
    // Parsed twice (once for the [server] table the context is built from): cheap, and it keeps
    // one constructor doing the starting.
    auto parsed = server::parse_serve_config(rules_toml, "rules.toml");
    for (auto& r : parsed.config->rules) add_rule(std::move(r));
}

fault_server::~fault_server() { stop(); }

void fault_server::start() {
    server::server_options listen;
    listen.threads = options_.threads;
    server_ = std::make_unique<server::server>(*context_, listen);
    if (const auto ec = server_->start()) {
        server_.reset();
        throw std::runtime_error("fault_server: cannot listen on 127.0.0.1: " + ec.message());
    }
    round_started_ = std::chrono::steady_clock::now();
    round_started_wall_ = std::chrono::system_clock::now();
}

std::string fault_server::url() const { return server_ ? server_->url() : std::string{}; }
std::uint16_t fault_server::port() const { return server_ ? server_->port() : 0; }
bool fault_server::running() const { return server_ != nullptr; }

void fault_server::add_rules(std::string_view fault_tables_toml) {
    auto parsed = faults::parse_rules_text(fault_tables_toml, "rules.toml", limits_of(options_.model));
    if (!parsed.ok()) detail::throw_config_errors("fault_server::add_rules: the rules do not load:", parsed.errors);
    for (const auto& r : parsed.rules) {
        for (const auto& installed : context_->engine.rules()) {
            if (installed.name == r.name) {
                throw std::invalid_argument("fault_server::add_rules: a rule named \"" + r.name +
                                            "\" is already installed");
            }
        }
    }
    for (auto& r : parsed.rules) add_rule(std::move(r));
}

void fault_server::add_rule(faults::rule rule) {
    const auto problems = faults::wait_problems(rule, limits_of(options_.model));
    if (!problems.empty()) throw std::invalid_argument("fault_server::add_rule: " + problems.front());
    const auto result = context_->engine.add(std::move(rule));
    if (!result.ok) throw std::invalid_argument("fault_server::add_rule: " + result.error);
}

void fault_server::add_rule(const fault_rule& rule) { add_rule(rule.build(limits_of(options_.model))); }

bool fault_server::remove_rule(std::string_view name) { return context_->engine.remove(name); }
void fault_server::clear_rules() { context_->engine.clear(); }
std::vector<faults::rule> fault_server::rules() const { return context_->engine.rules(); }

std::vector<record::journal_record> fault_server::journal() const { return context_->records.snapshot(); }
std::vector<server::ledger_entry> fault_server::ledger() const { return context_->effects.snapshot(); }
std::vector<server::double_effect> fault_server::double_effects() const {
    return context_->effects.double_effects();
}

record::run_record fault_server::record() {
    const auto duration = std::chrono::steady_clock::now() - round_started_;
    stop();
    record::run_record run;
    run.scenario = options_.name;
    run.seed = options_.seed;
    run.started_at = round_started_wall_;
    run.duration = std::chrono::duration_cast<std::chrono::nanoseconds>(duration);
    run.journal = context_->records.snapshot();
    run.wire = context_->records.wire_snapshot();
    // In seq order, as a run's are (run_record.hpp): the journal holds attempts in the order they ended.
    std::ranges::sort(run.journal, {}, &record::journal_record::seq);
    std::ranges::sort(run.wire, {}, &record::wire_detail::seq);
    run.server_events = context_->records.events();
    run.rule_firings = runner::rule_firings(context_->engine.rules(), context_->engine.counters(), run.journal);
    if (context_->records.failed()) run.harness_error = "journal: " + context_->records.error();
    return run;
}

void fault_server::stop() {
    if (!server_) return;
    server_->stop();
    server_.reset();
}

void fault_server::reset() {
    stop();
    context_->reset();
    start();
}

}  // namespace faultline::testing
