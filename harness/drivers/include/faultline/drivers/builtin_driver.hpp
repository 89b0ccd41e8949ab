// The `builtin` driver: N virtual clients inside this process, each an Asio coroutine sending its
// operations through faultline's own retry HTTP client (retry/http_client.hpp) with the scenario's
// policy. One run has its own io_context on 1 or 2 threads; every virtual client has its own
// http_client (own keep-alive connections, own seeded random source: seed mixed with the client
// number), and all of them share one retry budget and one circuit breaker, made fresh for the run.
//
// Per operation (see client_config.hpp for numbering and the workload):
// - the request comes from a template with {op}, {client}, {n} substituted;
// - it always carries `Faultline-Op: c<client>-n<n>` (driver.hpp explains the identity contract);
// - a non-idempotent request gets an Idempotency-Key when the policy adds keys: a UUIDv4 drawn from
//   the seed and the operation number, so a replay with the same seed sends the same keys; a key
//   written in the template is kept as is;
// - the deadline is start + overall_timeout, passed to the retry loop as an absolute time point
//   (or only recorded, for a policy that does not enforce it);
// - one client_record is kept: identity (the key, else the Faultline-Op value), timings in ns since
//   the run start, attempts, each attempt's outcome and the final decision.
// At the time limit every in-flight operation is cancelled (it ends with decision "cancelled") and
// no new one starts. The workload is bounded: never more than total_operations() operations.
#pragma once

#include <cstdint>
#include <string_view>

#include "faultline/drivers/client_config.hpp"
#include "faultline/drivers/driver.hpp"

namespace faultline::harness {

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
    const retry::retry_policy* declared_policy() const override { return &config_.policy.policy; }

    const builtin_config& config() const { return config_; }
    const builtin_stats& last_stats() const { return stats_; }

private:
    builtin_config config_;
    builtin_stats stats_;
};

// The Faultline-Op value of an operation: "c<client>-n<n>".
std::string operation_name(std::uint64_t client, std::uint64_t n);

}  // namespace faultline::harness
