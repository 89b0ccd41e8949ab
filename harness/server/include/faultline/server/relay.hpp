// A relay tier: the service model of a server that plays a middle tier, whose handler calls the next
// tier through faultline's own retry client (retry/http_client.hpp) with its own retry policy. Chained
// (client -> relay -> relay -> backend), the tiers reproduce retry amplification across layers on real
// sockets: with every tier retrying, the backend sees the product of the attempt limits.
//
// The relay forwards an attempt's method, target and body, and names the operation in
// `identity_header` (the operation identity the relay's own server computed), so every tier groups the
// attempts of one client operation under the same name and their merged journals are one history.
// Other request headers are not forwarded. The last reply of the next tier is passed back (status,
// body, Content-Type, Retry-After); when no reply came (reset, refused, timed out) the relay answers
// 502 as a gateway would. A relay commits no effect of its own.
//
// `forward` blocks its caller (a worker thread of the relay's server) until the retry loop has
// finished, so a relay tier serves at most as many requests at once as its server has threads. That
// is the price of plugging into the synchronous service call; storms are measured in attempts, not
// in throughput.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "faultline/retry/policy.hpp"
#include "faultline/server/service.hpp"

namespace faultline::server {

struct relay_options {
    std::string host = "127.0.0.1";  // the next tier (loopback only, as every faultline listener)
    std::uint16_t port = 0;
    // The complete retry policy, its budget and circuit breaker included (shared by every request the
    // relay forwards, as a service's one client would share them).
    retry::retry_policy policy;
    // Treat every request as safe to repeat, whatever its method (the builtin client's
    // `assume_idempotent`): without it a POST without a key is not retried after a 5xx.
    bool assume_idempotent = false;
    std::string identity_header = "Faultline-Op";
    std::uint64_t seed = 0;  // the retry client's jitter stream
};

// Owns one worker thread and one retry client. Thread-safe: `forward` may be called from any thread.
class relay {
public:
    // Throws std::invalid_argument for an invalid policy (retry::validate).
    explicit relay(relay_options options);
    ~relay();
    relay(const relay&) = delete;
    relay& operator=(const relay&) = delete;

    // Sends `request` to the next tier as one operation and returns its last reply (see above).
    service_response forward(const service_request& request);

private:
    struct state;
    std::unique_ptr<state> state_;
};

}  // namespace faultline::server
