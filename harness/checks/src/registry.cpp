// The registration table: one entry per check (name, factory, one-line summary), in alphabetical
// order. An explicit table (rather than static self-registration) cannot be dropped by the linker
// when the harness is a static library.
#include "faultline/checks/check.hpp"
#include "faultline/record/run_record.hpp"
#include "support.hpp"

#include <array>

namespace faultline::harness {

namespace {

struct check_entry {
    std::string_view name;
    checks::check_factory make;
    std::string_view summary;
};

constexpr std::array registry{
    check_entry{"amplification", &checks::make_amplification,
                "attempts per operation, overall and at the peak of any window"},
    check_entry{"backoff", &checks::make_backoff,
                "every gap between attempts lies inside the declared backoff envelope; no spike at the cap"},
    check_entry{"deadline", &checks::make_deadline,
                "no attempt starts after the operation's deadline; the client finishes by deadline + tolerance"},
    check_entry{"desynchronized", &checks::make_desynchronized,
                "after a synchronised failure no time bucket holds more than k x a uniform spread of retries"},
    check_entry{"idempotency_keys", &checks::make_idempotency_keys,
                "non-idempotent operations carry one stable key across attempts, distinct between operations"},
    check_entry{"latency", &checks::make_latency,
                "operation latency percentiles (p50, p90, p99) stay under limits"},
    check_entry{"max_attempts", &checks::make_max_attempts,
                "no operation makes more than `max` attempts"},
    check_entry{"no_double_effects", &checks::make_no_double_effects,
                "at most one committed effect per operation identity"},
    check_entry{"no_retry_on_status", &checks::make_no_retry_on_status,
                "statuses that are not transient (default 400, 401, 403, 404, 422, 501) are never retried"},
    check_entry{"retry_after", &checks::make_retry_after,
                "the next attempt waits for Retry-After; one longer than the deadline ends the operation"},
    check_entry{"retry_budget", &checks::make_retry_budget,
                "retries stay within a sliding-window ratio and a replayed gRPC token bucket"},
    check_entry{"success_rate", &checks::make_success_rate,
                "the share of operations that succeed is at least `min`"},
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

std::string_view check_summary(std::string_view name) {
    for (const auto& e : registry) {
        if (e.name == name) return e.summary;
    }
    return {};
}

std::optional<expectation> parse_expectation(const toml::table& table, std::string_view file, config_errors& errors) {
    const std::size_t errors_before = errors.size();
    // The check's name decides how the rest of the table is read, so it is read first, on its own.
    config::table_reader head(table, std::string(file), "[[expect]]", errors);
    const std::optional<std::string> name = head.string("check", config::need::required);
    if (!name) return std::nullopt;
    const check_entry* entry = nullptr;
    for (const auto& e : registry) {
        if (e.name == *name) entry = &e;
    }
    if (entry == nullptr) {
        head.fail("check", "unknown value \"" + *name + "\"; allowed: " + all_names());
        return std::nullopt;
    }

    config::table_reader params = head.child(table, "check \"" + *name + "\"");
    params.allow("check");
    expectation out;
    out.check_name = *name;
    out.where = config::position_of(table, std::string(file));
    out.expect_failure = params.boolean("expect_failure").value_or(false);
    out.impl = entry->make(params);
    params.finish();
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
