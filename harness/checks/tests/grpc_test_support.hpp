// Test helpers for the grpc_* checks: service configs built in code and gRPC calls in a journal.
#pragma once

#include <memory>

#include "check_test_support.hpp"
#include "faultline/record/grpc_service_config.hpp"

namespace faultline::checks::test {

inline constexpr const char* charge = "/pkg.Svc/Charge";

// pkg.Svc with a retryPolicy: maxAttempts 4, initialBackoff 100 ms, maxBackoff 1 s, multiplier 2,
// retryable UNAVAILABLE.
inline record::grpc_method_config retry_method(std::uint32_t max_attempts = 4) {
    record::grpc_method_config m;
    m.names = {{"pkg.Svc", ""}};
    m.retry = record::grpc_retry_policy{max_attempts, std::chrono::milliseconds{100}, std::chrono::seconds{1}, 2.0,
                                {grpc_status::unavailable}};
    return m;
}

// pkg.Svc with a hedgingPolicy: maxAttempts 3, hedgingDelay 100 ms, non-fatal UNAVAILABLE.
inline record::grpc_method_config hedging_method(std::uint32_t max_attempts = 3) {
    record::grpc_method_config m;
    m.names = {{"pkg.Svc", ""}};
    m.hedging = record::grpc_hedging_policy{max_attempts, std::chrono::milliseconds{100}, {grpc_status::unavailable}};
    return m;
}

inline std::shared_ptr<const record::grpc_service_config> service_config(record::grpc_method_config m,
                                                                 std::optional<record::grpc_retry_throttling> t = std::nullopt) {
    record::grpc_service_config c;
    c.methods.push_back(std::move(m));
    c.throttling = t;
    return std::make_shared<const record::grpc_service_config>(std::move(c));
}

// The run the client declared `config` for.
inline record::run_record declaring(record::run_record run, std::shared_ptr<const record::grpc_service_config> config) {
    run.declared.grpc = std::move(config);
    return run;
}

}  // namespace faultline::checks::test
