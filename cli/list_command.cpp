// `faultline list faults|checks`: the registered fault kinds and checks, one per line with what it
// does — the names a scenario's `kind = "..."` and `check = "..."` accept.
#include "commands.hpp"

#include "faultline/faults/kind.hpp"
#include "faultline/harness/check.hpp"

#include <algorithm>
#include <array>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace faultline::cli {

namespace {

// One line per check. The registry (check.hpp) holds names only; a registered check missing here is
// still listed, so the list never hides one.
constexpr std::array<std::pair<std::string_view, std::string_view>, 12> check_summaries{{
    {"amplification", "attempts per operation, overall and at the peak of any window"},
    {"backoff", "every gap between attempts lies inside the declared backoff envelope; no spike at the cap"},
    {"deadline", "no attempt starts after the operation's deadline; the client finishes by deadline + tolerance"},
    {"desynchronized", "after a synchronised failure no time bucket holds more than k x a uniform spread of retries"},
    {"idempotency_keys", "non-idempotent operations carry one stable key across attempts, distinct between operations"},
    {"latency", "operation latency percentiles (p50, p90, p99) stay under limits"},
    {"max_attempts", "no operation makes more than `max` attempts"},
    {"no_double_effects", "at most one committed effect per operation identity"},
    {"no_retry_on_status", "statuses that are not transient (default 400, 401, 403, 404, 422, 501) are never retried"},
    {"retry_after", "the next attempt waits for Retry-After; one longer than the deadline ends the operation"},
    {"retry_budget", "retries stay within a sliding-window ratio and a replayed gRPC token bucket"},
    {"success_rate", "the share of operations that succeed is at least `min`"},
}};

std::string_view check_summary(std::string_view name) {
    for (const auto& [n, summary] : check_summaries) {
        if (n == name) return summary;
    }
    return "(no description)";
}

void print_row(std::string_view name, std::string_view summary, std::size_t width) {
    std::cout << name << std::string(width - name.size() + 2, ' ') << summary << '\n';
}

void list_faults() {
    const auto& kinds = faults::kind_registry::instance().kinds();
    std::size_t width = 0;
    for (const auto& k : kinds) width = std::max(width, k.name.size());
    for (const auto& k : kinds) print_row(k.name, k.summary, width);
}

void list_checks() {
    const auto names = harness::check_names();
    std::size_t width = 0;
    for (const auto name : names) width = std::max(width, name.size());
    for (const auto name : names) print_row(name, check_summary(name), width);
}

}  // namespace

void add_list_command(CLI::App& app) {
    auto what = std::make_shared<std::string>();
    CLI::App* cmd = app.add_subcommand("list", "List the fault kinds or the checks a scenario can name");
    cmd->add_option("what", *what, "faults or checks")->required()->check(CLI::IsMember({"faults", "checks"}));
    cmd->callback([what] {
        if (*what == "faults") {
            list_faults();
        } else {
            list_checks();
        }
    });
}

}  // namespace faultline::cli
