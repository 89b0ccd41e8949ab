// Operation identity: how the server groups attempts into operations without any help from the
// client (DESIGN.md, "operation identity"). In order of precedence: the `Idempotency-Key` header
// (its IETF structured-field quotes removed: `"abc"` -> `abc`, bare Stripe-style values kept as is),
// else a header the scenario names, else a top-level string or number field of a JSON body the
// scenario names, else a stable hash of method + target + body (a retry resends the same bytes).
// The identity's 64-bit hash feeds the seeded fault decisions, so it is the same on every run.
// Also here: the per-operation attempt counter (n-th attempt of an operation, 1-based). Nothing here
// knows HTTP parsing: a request comes in as the fault engine's `faults::request_view`, whose headers
// the server adapts from its parsed message (http_connection.cpp), or as plain `identity_inputs`.
#pragma once

#include "faultline/faults/request.hpp"
#include "faultline/record/journal_record.hpp"

#include <boost/unordered/unordered_flat_map.hpp>

#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace faultline::server {

inline constexpr std::string_view idempotency_key_header = "Idempotency-Key";

// From the `[server]` table: `identity_header`, `identity_field` ("" = not used).
struct identity_config {
    std::string header;      // e.g. "X-Request-Id"
    std::string body_field;  // e.g. "order_id"
};

struct operation_identity {
    std::string value;  // the key, header or field value, or the request hash as 16 lowercase hex digits
    record::identity_source source = record::identity_source::request_hash;
    std::uint64_t hash = 0;       // hash_bytes(value): the input of fault decisions
    std::string idempotency_key;  // the normalised Idempotency-Key, "" when absent (even if another source won)
};

// The parts of a request identity depends on, already extracted by the caller.
struct identity_inputs {
    std::string_view method;
    std::string_view target;
    std::string_view body;
    std::optional<std::string_view> idempotency_key;  // raw `Idempotency-Key` value, if sent
    std::optional<std::string_view> named_header;     // raw value of `identity_config::header`, if sent
};

// Stable hash of method + target + body (with separators, so ("a", "bc") != ("ab", "c")).
std::uint64_t request_hash(std::string_view method, std::string_view target, std::string_view body);

// 16 lowercase hex digits.
std::string to_hex(std::uint64_t v);

operation_identity identify(const identity_config& config, const identity_inputs& request);
// The same for a request as the fault engine sees it: the two headers are looked up through
// `request.headers` (case-insensitive), the named one only when `config.header` is set.
operation_identity identify(const identity_config& config, const faults::request_view& request);

// Counts attempts per operation identity. Thread-safe (striped locks keyed by the operation's symbol,
// so concurrent operations rarely contend). Keyed by symbols, the operation's text is the intern
// table's, not a copy per operation. Memory grows with the number of distinct operations until
// `reset`.
class attempt_counter {
public:
    // Records one more attempt of `operation` and returns its number: 1 for the first.
    std::uint32_t next(record::symbol operation);
    // Attempts seen so far (0 if none).
    std::uint32_t seen(record::symbol operation) const;
    // Number of distinct operations seen.
    std::size_t operations() const;
    void reset();

private:
    struct stripe {
        mutable std::mutex mutex;
        // Open addressing: 8 bytes a slot, where a node map took ~45 bytes an operation.
        boost::unordered_flat_map<record::symbol, std::uint32_t, std::hash<record::symbol>> counts;
    };
    static constexpr std::size_t stripe_count = 16;
    std::array<stripe, stripe_count> stripes_;
};

}  // namespace faultline::server
