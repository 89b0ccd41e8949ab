// The client under test as configured in a scenario's `[client]` table: which driver, the workload,
// the request templates, the retry policy (every option of retry/, plus the deliberately bad
// presets) and the command to run. These are plain values; `parse_client_config` reads and strictly
// validates the TOML (unknown keys, wrong types, out-of-range values, bad durations, each reported as
// file:line:column), and `parse_client` (driver.hpp) turns the result into a driver. The reference,
// with every key and each preset's exact policy, is docs/scenarios.md ("[client]").
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <toml++/toml.h>

#include "faultline/core/clock.hpp"
#include "faultline/core/config_error.hpp"
#include "faultline/drivers/driver.hpp"
#include "faultline/retry/budget.hpp"
#include "faultline/retry/circuit_breaker.hpp"
#include "faultline/retry/policy.hpp"

namespace faultline::harness {

// Named starting points for the builtin client's policy. `good` is sensible; every other one is
// deliberately broken in one way, so a scenario can prove that the matching check fires.
enum class client_preset { good, naive, no_jitter, no_budget, no_keys, ignores_retry_after, ignores_deadline };

std::string_view to_string(client_preset preset);
std::optional<client_preset> preset_from_string(std::string_view name);
std::span<const client_preset> all_presets();

// The shared retry budget of a run, as configured. The object itself is made per run (make_budget),
// so every run starts with a full budget and all virtual clients of that run share it.
enum class budget_kind { none, token_bucket, ratio };

std::string_view to_string(budget_kind kind);

struct budget_spec {
    budget_kind kind = budget_kind::none;
    double max_tokens = 10.0;   // token_bucket: gRPC maxTokens, in (0, 1000]
    double token_ratio = 0.1;   // token_bucket: gRPC tokenRatio, > 0
    retry::ratio_budget_options ratio;  // ratio: ttl, percent_can_retry, min_retries_per_sec
};

// nullptr for budget_kind::none.
std::shared_ptr<retry::retry_budget> make_budget(const budget_spec& spec);

// Everything that decides how the builtin client retries. `policy` holds every option of retry/
// except the shared objects (its budget and breaker pointers stay empty here; the driver creates
// them per run from `budget` and `breaker`). The two flags are misbehaviours retry/ deliberately has
// no option for, so the driver implements them around the retry loop.
struct client_policy {
    retry::retry_policy policy;
    budget_spec budget;
    std::optional<retry::circuit_breaker_options> breaker;  // nullopt: no circuit breaker
    // Classify every request as idempotent, whatever its method: a POST without a key is then
    // re-sent after a reset, a timeout or a 5xx (the bad presets `naive` and `no_keys`).
    bool assume_idempotent = false;
    // When false the overall deadline (start + policy.overall_timeout) is only declared — kept in
    // client_record::deadline_ns — but not given to the retry loop, which then keeps retrying past
    // it (`naive`, `ignores_deadline`).
    bool enforce_deadline = true;
};

// The exact policy of each preset (documented in docs/scenarios.md ("[client]")).
client_policy preset_policy(client_preset preset);

// One request template. Placeholders {op}, {client} and {n} in `path`, `body` and header values are
// replaced per operation (see `substitute`).
struct request_template {
    std::string method = "POST";
    std::string path = "/payments";
    std::string body = R"({"amount":100})";
    std::vector<std::pair<std::string, std::string>> headers;  // in file order
    std::uint32_t weight = 1;  // relative share under template_order::weighted
};

// How an operation picks its template: round robin by operation number, or a weighted draw that
// hashes (seed, operation number) so it is the same whatever the thread interleaving.
enum class template_order { round_robin, weighted };

std::string_view to_string(template_order order);

// How many operations, and when. Operation number `op` (0-based) belongs to virtual client
// op % clients as its n-th operation, n = op / clients.
// - operations: every client runs `operations_per_client` operations one after another, all
//   clients starting at once.
// - rate: operation `op` is due at run start + op / rate, for `span`; floor(rate * span)
//   operations in all (at least 1). An operation that finds no free slot waits for one.
// At most `concurrency` operations are in flight at once, whatever the mode.
enum class workload_kind { operations, rate };

struct workload {
    workload_kind kind = workload_kind::operations;
    std::uint32_t clients = 1;
    std::uint64_t operations_per_client = 1;
    double rate = 0.0;  // operations per second (kind == rate)
    duration span{};    // how long the rate runs (kind == rate; TOML key `duration`)
    std::uint32_t concurrency = 1;
};

// Operations the workload starts in all (the bound the driver never exceeds).
std::uint64_t total_operations(const workload& w);

struct builtin_config {
    client_preset preset = client_preset::good;
    client_policy policy = preset_policy(client_preset::good);
    workload load;
    std::vector<request_template> requests{request_template{}};  // never empty
    template_order order = template_order::round_robin;
    std::uint32_t threads = 1;  // io_context threads, 1 or 2
};

struct command_config {
    std::vector<std::string> argv;  // never empty
    command_options options;
};

using client_config = std::variant<builtin_config, command_config>;

// Values for the placeholders. `url` is only substituted when set (the command driver).
struct placeholder_values {
    std::uint64_t op = 0;
    std::uint64_t client = 0;
    std::uint64_t n = 0;
    std::optional<std::string_view> url;
};

// Replaces every `{op}`, `{client}`, `{n}` (and `{url}` when given) in `text`. Any other brace is
// kept literally, so JSON bodies need no escaping.
std::string substitute(std::string_view text, const placeholder_values& values);

// Reads and validates a [client] table. Appends every problem to `errors` (file:line:column) and
// returns nullopt if there was any. `overrides.command`, when non-empty, makes it a command client.
std::optional<client_config> parse_client_config(const toml::table& client, const std::string& file,
                                                 config_errors& errors, const client_overrides& overrides = {});

// Reads a [client.policy] table on top of `base` (a preset's policy). Same error handling.
std::optional<client_policy> parse_client_policy(const toml::table& policy, const std::string& file,
                                                 client_policy base, config_errors& errors);

}  // namespace faultline::harness
