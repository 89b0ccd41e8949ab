// Reading `[[expect]]` tables and applying `expect_failure`, over the registry of checks: each
// check file registers its own `check_info` (support.hpp), and the library is linked whole-archive
// (faultline_add_registering_library) so those registrations survive static linking.
#include "faultline/checks/check.hpp"
#include "faultline/record/run_record.hpp"
#include "support.hpp"

#include <algorithm>

namespace faultline::checks {

namespace {

using check_registry = core::registry<checks::check_info>;

}  // namespace

std::vector<std::string_view> check_names() {
    std::vector<std::string_view> out;
    // Views into the registry, which is read-only once static initialisation is over.
    for (const auto& e : check_registry::instance().entries()) out.push_back(e.name);
    return out;
}

std::string_view check_summary(std::string_view name) {
    const checks::check_info* info = check_registry::instance().find(name);
    return info != nullptr ? std::string_view{info->summary} : std::string_view{};
}

std::optional<expectation> parse_expectation(const toml::table& table, std::string_view file, config_errors& errors) {
    // The check's name decides how the rest of the table is read, so it is read first, on its own.
    config::table_reader head(table, std::string(file), "[[expect]]", errors);
    const std::optional<std::string> name =
        head.choice("check", check_registry::instance().names(), config::need::required);
    if (!name) return std::nullopt;
    const checks::check_info* entry = check_registry::instance().find(*name);

    config::table_reader params = head.child(table, "check \"" + *name + "\"");
    params.allow("check");
    expectation out;
    out.check_name = *name;
    out.where = config::position_of(table, std::string(file));
    out.expect_failure = params.boolean("expect_failure").value_or(false);
    out.failures_only = params.boolean("failures_only").value_or(false);
    if (out.expect_failure && out.failures_only) {
        params.fail("failures_only", "a check expected to fail is judged by its failure already; drop one of the two");
    }
    out.impl = entry->make(params);
    params.finish();
    if (!params.ok()) return std::nullopt;
    return out;
}

namespace {

// A run in which no attempt reached the server and the client kept no record of an operation: a
// client killed before it sent anything, a command that never ran. Nothing a check judges happened.
bool has_no_operations(const record::run_record& run) { return run.journal.empty() && run.clients.empty(); }

// "; 2 of 3 attempts matched no endpoint of the service (POST /charge; nearest POST /payments)", or
// "" when every attempt matched: a verdict that did not pass says when the client was talking past
// the service, the likeliest reason it had nothing to judge.
std::string unmatched_note(const record::run_record& run) {
    const auto unmatched = std::ranges::count(run.journal, record::effect_kind::unmatched, &record::journal_record::effect);
    if (unmatched == 0) return {};
    constexpr std::size_t routes_named = 3;
    std::vector<std::string_view> routes;
    std::size_t more = 0;
    for (const record::server_event& e : run.server_events) {
        if (e.kind != record::server_event_kind::unmatched_route) continue;
        if (routes.size() < routes_named) {
            routes.push_back(e.detail);
        } else {
            ++more;
        }
    }
    std::string note = "; " + std::to_string(unmatched) + " of " + std::to_string(run.journal.size()) +
                       " attempts matched no endpoint of the service";
    if (routes.empty()) return note;
    note += " (";
    for (std::size_t i = 0; i < routes.size(); ++i) note += (i == 0 ? "" : ", ") + std::string{routes[i]};
    if (more > 0) note += ", and " + std::to_string(more) + " more";
    return note + ")";
}

}  // namespace

record::verdict evaluate(const expectation& e, const record::run_record& run, const record::operation_groups& operations) {
    return evaluate(e, run, operations, nullptr);
}

record::verdict evaluate(const expectation& e, const record::run_record& run, const record::operation_groups& operations,
                 const timing_control* control) {
    record::verdict v = control != nullptr ? e.impl->evaluate_with_control(run, operations, *control)
                                   : e.impl->evaluate(run, operations);
    v.check = e.check_name;
    v.expected_to_fail = e.expect_failure;
    v.failures_only = e.failures_only;
    if (v.insufficient_evidence) v.passed = false;
    if (e.expect_failure && !v.insufficient_evidence) {
        const bool held = v.passed;
        v.passed = !held;
        v.summary = (held ? "expected to fail, but passed: " : "failed as expected: ") + v.summary;
    }
    // A pass over nothing is no evidence: judged after the inversion, so "failed as expected" on an
    // empty run is not a pass either.
    if (v.passed && has_no_operations(run) && !e.impl->judges_without_operations()) {
        v.passed = false;
        v.insufficient_evidence = true;
        v.summary = "nothing to judge: the run had 0 operations (" + v.summary + ")";
    }
    if (!v.passed) v.summary += unmatched_note(run);
    if (e.failures_only && v.outcome() != record::verdict_outcome::fail) {
        v.summary = "not judged here, only a failure counts (failures_only): " + v.summary;
    }
    return v;
}

record::verdict evaluate(const expectation& e, const record::run_record& run) { return evaluate(e, run, record::group_operations(run.journal)); }

}  // namespace faultline::checks
