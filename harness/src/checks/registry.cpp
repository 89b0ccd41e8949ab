// The registration table: one line per check, in alphabetical order. An explicit table (rather than
// static self-registration) cannot be dropped by the linker when the harness is a static library.
#include "faultline/harness/check.hpp"
#include "faultline/harness/run_record.hpp"
#include "support.hpp"

#include <array>

namespace faultline::harness {

namespace {

struct check_entry {
    std::string_view name;
    checks::check_factory make;
};

constexpr std::array registry{
    check_entry{"amplification", &checks::make_amplification},
    check_entry{"backoff", &checks::make_backoff},
    check_entry{"deadline", &checks::make_deadline},
    check_entry{"desynchronized", &checks::make_desynchronized},
    check_entry{"idempotency_keys", &checks::make_idempotency_keys},
    check_entry{"latency", &checks::make_latency},
    check_entry{"max_attempts", &checks::make_max_attempts},
    check_entry{"no_double_effects", &checks::make_no_double_effects},
    check_entry{"no_retry_on_status", &checks::make_no_retry_on_status},
    check_entry{"retry_after", &checks::make_retry_after},
    check_entry{"retry_budget", &checks::make_retry_budget},
    check_entry{"success_rate", &checks::make_success_rate},
};

std::string all_names() {
    std::string out;
    for (const auto& e : registry) {
        if (!out.empty()) out += ", ";
        out += e.name;
    }
    return out;
}

}  // namespace

std::vector<std::string_view> check_names() {
    std::vector<std::string_view> out;
    for (const auto& e : registry) out.push_back(e.name);
    return out;
}

std::optional<expectation> parse_expectation(const toml::table& table, std::string_view file, config_errors& errors) {
    const toml::source_region& region = table.source();
    const source_position where{std::string(file), region.begin.line, region.begin.column};
    const toml::node* name_node = table.get("check");
    if (name_node == nullptr) {
        errors.push_back(config_error{where, "[[expect]] needs `check = \"NAME\"`; checks: " + all_names()});
        return std::nullopt;
    }
    const auto* name = name_node->as_string();
    const toml::source_region& name_region = name_node->source();
    const source_position name_where{std::string(file), name_region.begin.line, name_region.begin.column};
    if (name == nullptr) {
        errors.push_back(config_error{name_where, "[[expect]] check: expected a string naming a check"});
        return std::nullopt;
    }
    const check_entry* entry = nullptr;
    for (const auto& e : registry) {
        if (e.name == name->get()) entry = &e;
    }
    if (entry == nullptr) {
        errors.push_back(config_error{name_where, "unknown check \"" + name->get() + "\"; checks: " + all_names()});
        return std::nullopt;
    }

    const std::size_t errors_before = errors.size();
    check_params params(table, name->get(), std::string(file), errors);
    params.allow("check");
    expectation out;
    out.check_name = name->get();
    out.where = where;
    out.expect_failure = params.boolean("expect_failure", false);
    out.impl = entry->make(params);
    params.reject_unknown_keys();
    if (errors.size() != errors_before) return std::nullopt;
    return out;
}

verdict evaluate(const expectation& e, const run_record& run) {
    verdict v = e.impl->evaluate(run);
    v.check = e.check_name;
    v.expected_to_fail = e.expect_failure;
    if (e.expect_failure) {
        const bool held = v.passed;
        v.passed = !held;
        v.summary = (held ? "expected to fail, but passed: " : "failed as expected: ") + v.summary;
    }
    return v;
}

}  // namespace faultline::harness
