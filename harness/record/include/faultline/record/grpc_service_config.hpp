// A gRPC service config's retry settings (gRFC A6) as a client under test declares them: per-method
// retry or hedging policies and the channel's retryThrottling. Plain data that the gRPC checks judge
// the journal against; `config/grpc_service_config.hpp` parses and validates gRPC's JSON form into it.
// Values are the effective ones: a maxAttempts above 5 is recorded as 5, as gRPC clients clamp it.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "faultline/core/grpc_status.hpp"

namespace faultline::record {

// The most attempts a gRPC client makes, whatever a policy asks (A6: larger values are treated as 5).
inline constexpr std::uint32_t grpc_max_attempts_cap = 5;

// One entry of a method config's "name" list: `method` "" names every method of `service`, and
// `service` "" (with no method) every service: the channel's default.
struct grpc_method_name {
    std::string service;  // "pkg.Svc"
    std::string method;   // "Charge"
};

struct grpc_retry_policy {
    std::uint32_t max_attempts = 0;  // effective: at most grpc_max_attempts_cap
    std::chrono::nanoseconds initial_backoff{0};
    std::chrono::nanoseconds max_backoff{0};
    double backoff_multiplier = 0;
    std::vector<grpc_status> retryable_status_codes{};
};

struct grpc_hedging_policy {
    std::uint32_t max_attempts = 0;  // effective: at most grpc_max_attempts_cap
    std::chrono::nanoseconds hedging_delay{0};
    std::vector<grpc_status> non_fatal_status_codes{};
};

// One "methodConfig" entry; at most one of `retry` and `hedging`.
struct grpc_method_config {
    std::vector<grpc_method_name> names{};
    std::optional<grpc_retry_policy> retry{};
    std::optional<grpc_hedging_policy> hedging{};
    std::optional<std::chrono::nanoseconds> timeout{};

    // The status codes that let a next attempt follow: the retry policy's retryable codes, else the
    // hedging policy's non-fatal ones (empty without either).
    const std::vector<grpc_status>& continue_codes() const;
};

struct grpc_retry_throttling {
    double max_tokens = 0;   // (0, 1000]
    double token_ratio = 0;  // > 0, three decimals kept
};

struct grpc_service_config {
    std::vector<grpc_method_config> methods{};
    std::optional<grpc_retry_throttling> throttling{};

    // The method config for a journal target "/pkg.Svc/Method", as gRPC matches names: the entry
    // naming that service and method, else one naming the whole service, else the default (an empty
    // name); null when none applies or the target is not a gRPC path.
    const grpc_method_config* find(std::string_view target) const;
};

}  // namespace faultline::record
