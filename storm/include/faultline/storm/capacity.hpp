// The capacity model: a retry storm against a service of limited capacity. M clients each start an
// operation every `op_interval` (open loop, each client at its own random phase), `ops_per_client`
// times. An operation passes through 1..3 layers (a client, a front service, a mid service...); each
// layer runs retry/'s backoff and, optionally, one of retry/'s budgets (shared by every operation at
// that layer) around its call to the layer below; the innermost layer calls the backend. Layers add
// no latency of their own: only the backend and the network hops take time.
//
// The backend serves one request at a time at `capacity_per_sec` (FIFO, deterministic service time
// 1 / capacity), holds at most `queue_limit` requests (an arrival beyond that is rejected at once),
// and fails each served request with `failure_probability`. During the outage window it either
// fails every arrival at once (`outage_capacity_factor` 0: down) or serves at capacity x factor (a
// slowdown). A caller waits at most `attempt_timeout` for a reply; the backend still serves a request
// whose caller gave up (wasted work: the mechanism of metastable failure, HotOS 2021).
//
// Results: totals (operations, attempts per layer, amplification = backend attempts per operation,
// per-layer amplification = attempts per call received), a time series in `bin` steps (offered load
// at the backend, goodput, retries, rejections, timeouts, longest queue), the peak offered load
// against the load before the outage, the time to recover after the outage, and `metastable` when the
// backend never recovers while operations keep arriving. A run is a pure function of its config.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "faultline/core/clock.hpp"
#include "faultline/retry/backoff.hpp"

namespace faultline::storm {

enum class budget_kind { none, ratio, token_bucket };

struct layer_config {
    std::uint32_t max_attempts{3};  // the first included
    retry::backoff_policy backoff{retry::backoff_policy{}
                                      .with_base(std::chrono::milliseconds{10})
                                      .with_cap(std::chrono::seconds{1})
                                      .with_jitter(retry::jitter_kind::full)};
    budget_kind budget{budget_kind::none};
    // budget_kind::ratio (retry::ratio_budget)
    double percent_can_retry{0.1};
    double min_retries_per_sec{0};
    duration ratio_ttl{std::chrono::seconds{10}};
    // budget_kind::token_bucket (retry::token_bucket_budget, gRFC A6)
    double max_tokens{10};
    double token_ratio{0.1};
};

struct capacity_config {
    std::uint32_t clients{1000};
    std::uint32_t ops_per_client{10};
    duration op_interval{std::chrono::seconds{1}};
    double capacity_per_sec{2000};
    std::uint32_t queue_limit{1000};
    double failure_probability{0};
    duration outage_start{std::chrono::seconds{3}};
    duration outage_end{std::chrono::seconds{5}};  // outage_end <= outage_start: no outage
    double outage_capacity_factor{0};              // 0: down (fail fast); in (0, 1]: slowed
    duration attempt_timeout{std::chrono::seconds{1}};
    duration hop{std::chrono::milliseconds{1}};  // each way
    std::vector<layer_config> layers{layer_config{}};
    duration bin{std::chrono::milliseconds{100}};
    std::uint64_t seed{1};
};

// Limits that keep a run inside memory and seconds (checked by validate).
inline constexpr std::uint64_t max_capacity_operations = 100'000'000;  // clients x ops_per_client
inline constexpr std::uint32_t max_capacity_queue = 10'000'000;
inline constexpr std::size_t max_layers = 3;
inline constexpr std::uint32_t max_layer_attempts = 100;
inline constexpr std::int64_t max_capacity_bins = 10'000'000;

// Throws std::invalid_argument naming the field for anything a run cannot use.
void validate(const capacity_config& config);

struct capacity_bin {
    std::uint64_t ops_started = 0;
    std::uint64_t offered = 0;      // attempts arriving at the backend
    std::uint64_t retries = 0;      // of those, not the operation's first backend attempt
    std::uint64_t goodput = 0;      // backend successes that reached a caller still waiting
    std::uint64_t rejected = 0;     // refused at once: down, or queue full
    std::uint64_t timed_out = 0;    // served too late for the caller (or not at all in time)
    std::uint64_t max_queue = 0;    // longest backend queue seen at an arrival
};

struct capacity_result {
    std::uint64_t operations = 0;
    std::uint64_t succeeded = 0;
    std::uint64_t failed = 0;
    std::vector<std::uint64_t> attempts;        // per layer, outermost first; back() = backend
    std::vector<double> layer_amplification;    // attempts[i] / calls into layer i
    double amplification = 0;                   // backend attempts per operation
    double normal_load_per_bin = 0;             // mean offered per bin before the outage
    double peak_load_per_bin = 0;
    std::optional<duration> recovery;           // outage end -> first healthy bin; nullopt if none
    bool metastable = false;                    // no healthy bin after the outage while ops arrive
    std::vector<capacity_bin> bins;
    std::uint64_t events = 0;
    duration end{0};
};

capacity_result run_capacity(const capacity_config& config);

// The shipped scenarios, by name (docs/storms.md).
struct capacity_scenario {
    std::string_view name;
    std::string_view summary;
    capacity_config config;
};
std::vector<capacity_scenario> capacity_scenarios();
std::optional<capacity_config> find_capacity_scenario(std::string_view name);

}  // namespace faultline::storm
