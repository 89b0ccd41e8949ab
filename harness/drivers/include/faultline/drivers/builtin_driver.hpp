// The `builtin` driver: N virtual clients inside this process, each an Asio coroutine sending its
// operations through faultline's own retry HTTP client (retry/http_client.hpp) with the scenario's
// policy. One run has its own io_context on 1 or 2 threads; every virtual client has its own
// http_client (own keep-alive connections, own seeded random source: seed mixed with the client
// number), and all of them share one retry budget and one circuit breaker, made fresh for the run.
//
// Per operation (see `workload` below for numbering):
// - the request comes from a template with {op}, {client}, {n} substituted;
// - it always carries `Faultline-Op: c<client>-n<n>` (`operation_header`), stable across its
//   attempts: the driver's identity_header(), so the runner makes it the server's identity header and
//   journal_record::operation and client_record::operation hold the same string;
// - a non-idempotent request gets an Idempotency-Key when the policy adds keys: a UUIDv4 drawn from
//   the seed and the operation number, so a replay with the same seed sends the same keys; a key
//   written in the template is kept as is;
// - the deadline is start + overall_timeout, passed to the retry loop as an absolute time point
//   (or only recorded, for a policy that does not enforce it);
// - one client_record is kept: identity (the key, else the Faultline-Op value), timings in ns since
//   the run start, attempts, each attempt's outcome and the final decision.
// At the time limit every in-flight operation is cancelled (it ends with decision "cancelled") and
// no new one starts. The workload is bounded: never more than total_operations() operations.
//
// This file also holds the driver's configuration, which builtin_driver.cpp reads from the
// [client] table (registered as driver "builtin", the default): the workload, the request
// templates and the retry policy (every option of retry/, plus the deliberately bad presets). The
// reference, with every key and each preset's exact policy, is docs/scenarios.md ("[client]").
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "faultline/config/reader.hpp"
#include "faultline/core/clock.hpp"
#include "faultline/core/enum_names.hpp"
#include "faultline/drivers/driver.hpp"
#include "faultline/retry/budget.hpp"
#include "faultline/retry/circuit_breaker.hpp"
#include "faultline/retry/policy.hpp"

namespace faultline::drivers {

// The header naming a builtin-driver operation on every attempt (see above).
inline constexpr std::string_view operation_header = "Faultline-Op";

// Named starting points for the builtin client's policy. `good` is sensible; every other one is
// deliberately broken in one way, so a scenario can prove that the matching check fires.
enum class client_preset { good, naive, no_jitter, no_budget, no_keys, ignores_retry_after, ignores_deadline };

inline constexpr enum_names client_preset_names{std::to_array<enum_name<client_preset>>({
    {client_preset::good, "good"},
    {client_preset::naive, "naive"},
    {client_preset::no_jitter, "no_jitter"},
    {client_preset::no_budget, "no_budget"},
    {client_preset::no_keys, "no_keys"},
    {client_preset::ignores_retry_after, "ignores_retry_after"},
    {client_preset::ignores_deadline, "ignores_deadline"},
})};
inline constexpr std::array all_presets = client_preset_names.values();

inline std::string_view to_string(client_preset preset) { return client_preset_names(preset); }
inline std::optional<client_preset> preset_from_string(std::string_view name) { return client_preset_names.from(name); }

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

// What the virtual clients speak to the server: HTTP/1.1, or HTTP/2 (h2 by ALPN when the server
// speaks TLS, else h2c by prior knowledge). The fault server accepts both on the same port.
enum class client_protocol { http1, h2 };

struct builtin_config {
    client_preset preset = client_preset::good;
    client_protocol protocol = client_protocol::http1;
    client_policy policy = preset_policy(client_preset::good);
    workload load;
    std::vector<request_template> requests{request_template{}};  // never empty
    template_order order = template_order::round_robin;
    std::uint32_t threads = 1;  // io_context threads, 1 or 2
};

// Reads the builtin driver's keys of a [client] table (all but `driver`; the caller finishes the
// reader). Records every problem through the reader and returns nullopt if there was any.
std::optional<builtin_config> parse_builtin_config(config::table_reader& client);

// Reads the retry-policy keys of a [client.policy]-shaped table (every key of docs/scenarios.md
// "[client.policy]") on top of what `policy` holds (a preset's policy) and finishes the reader. The
// runner's [[relay]] tiers take the same keys through it.
void read_client_policy(config::table_reader& policy_table, client_policy& policy);

// Counts from the last run, for reports and tests.
struct builtin_stats {
    std::uint64_t operations_started = 0;
    std::uint64_t operations_finished = 0;  // got a final decision (cancelled ones included)
    std::uint64_t retries_allowed = 0;      // by the shared budget (0 without one)
    std::uint64_t retries_refused = 0;
    std::uint64_t breaker_opened = 0;       // times the shared circuit breaker opened
};

// Owns its configuration. `run` blocks the calling thread; one run at a time.
class builtin_driver final : public driver {
public:
    explicit builtin_driver(builtin_config config);

    driver_result run(const driver_context& ctx) override;
    std::string_view name() const override { return "builtin"; }
    // Its policy's attempt limit and backoff curve: what the checks hold it to when a scenario leaves
    // their parameters out (the deadline is per operation, in each client_record).
    record::declared_client declared() const override;
    std::string_view identity_header() const override { return operation_header; }

    const builtin_config& config() const { return config_; }
    const builtin_stats& last_stats() const { return stats_; }

private:
    builtin_config config_;
    builtin_stats stats_;
};

// The Faultline-Op value of an operation: "c<client>-n<n>".
std::string operation_name(std::uint64_t client, std::uint64_t n);

}  // namespace faultline::drivers
