// The server-side idempotency layer, with the semantics of the IETF draft
// (draft-ietf-httpapi-idempotency-key-header) and Stripe. Mode `off` plays a naive server: every
// attempt that reaches the service commits anew, which is what exposes clients that retry
// non-idempotent requests after a lost response. Mode `keys`:
//   - the first attempt with a key proceeds and, once the service has answered, its response is
//     stored (status, headers and body byte for byte, errors included);
//   - a later attempt with the same key and the same payload gets the stored response replayed, and
//     nothing new is committed — including after a lost response (commit, then the reply dropped);
//   - an attempt whose key is still in flight gets 409, marked machine-readably with the header
//     `Faultline-Idempotency: in-flight` and a problem+json body, so a retry client can tell it from
//     an ordinary conflict;
//   - an attempt reusing a key with a different payload (method + target + body) gets 422;
//   - with `required`, a non-idempotent request without a key gets 400.
// Keys apply to every request except reads. Stored results are kept until `reset` (no expiry: a run
// is short).
//
// How the server uses it, for an attempt that reaches the service (faults with commit phase `before`
// never call `begin`, so the request "did not arrive"):
//   auto b = layer.begin(id.idempotency_key, service.classify(m, t), request_fingerprint(m, t, body));
//   if (b.decision != idempotency_decision::proceed) send b.response (its `effect` says why);
//   else { auto r = service.handle(req); layer.complete(key, r); send r or apply the fault; }
// and `abandon(key)` if the attempt proceeded but failed before the service committed.
#pragma once

#include "faultline/server/ledger.hpp"
#include "faultline/server/service.hpp"

#include "faultline/core/byte_arena.hpp"

#include <boost/unordered/unordered_flat_map.hpp>

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace faultline::server {

inline constexpr std::string_view idempotency_marker_header = "Faultline-Idempotency";
inline constexpr std::string_view idempotency_marker_in_flight = "in-flight";

enum class idempotency_mode { off, keys };
inline constexpr enum_names idempotency_mode_names{std::to_array<enum_name<idempotency_mode>>({
    {idempotency_mode::off, "off"},
    {idempotency_mode::keys, "keys"},
})};
inline std::string_view to_string(idempotency_mode v) { return idempotency_mode_names(v); }
inline std::optional<idempotency_mode> idempotency_mode_from_string(std::string_view s) {
    return idempotency_mode_names.from(s);
}

// From the `[server]` table: `idempotency = "off" | "keys"`, `idempotency_required = bool`.
struct idempotency_config {
    idempotency_mode mode = idempotency_mode::off;
    bool required = false;  // `keys` only: a non-idempotent request without a key is refused (400)
};

enum class idempotency_decision {
    proceed,           // run the service, then call complete() (or abandon() if it never committed)
    replay,            // send `response`: the stored one, byte for byte
    in_flight,         // send `response`: 409, key in use by an attempt not yet finished
    payload_mismatch,  // send `response`: 422, key reused with a different request
    missing_key,       // send `response`: 400, a key is required
};
std::string_view to_string(idempotency_decision v);

struct idempotency_begin {
    idempotency_decision decision = idempotency_decision::proceed;
    // For every decision but `proceed`: the reply to send. Its `effect` is `replayed`, `conflict`
    // (409/422) or `rejected` (400), ready for the journal record.
    service_response response;
};

// What identifies "the same request" for a reused key: method + target + body.
std::uint64_t request_fingerprint(std::string_view method, std::string_view target, std::string_view body);

// Owns the stored responses. Thread-safe: one mutex, held only for a map lookup/insert (responses are
// copied in and out; nothing else happens under it). Concurrent attempts with one key: exactly one
// proceeds; the others get in_flight until it completes, replay afterwards.
class idempotency_layer {
public:
    explicit idempotency_layer(idempotency_config config);

    // `key` is the normalised Idempotency-Key ("" = none), the symbol the attempt's record holds.
    idempotency_begin begin(record::symbol key, effect_semantics semantics, std::uint64_t fingerprint);
    // Stores the response of the attempt that proceeded with `key`. No-op for "" or an unknown key.
    void complete(record::symbol key, const service_response& response);
    // The attempt that proceeded failed before committing: forget the key so a retry proceeds.
    void abandon(record::symbol key);

    std::size_t stored() const;     // keys with a stored response
    std::size_t in_flight() const;  // keys begun but neither completed nor abandoned
    void reset();

    const idempotency_config& config() const { return config_; }

private:
    struct slot {
        std::uint64_t fingerprint = 0;
        // The stored response packed (idempotency.cpp: pack/unpack) into responses_; null while in
        // flight. A run stores one per keyed operation: as a service_response with its header vector
        // and strings it took several allocations and ~250 bytes, as a string each ~130 with its slot.
        const char* response = nullptr;
        std::uint32_t response_size = 0;
    };
    const idempotency_config config_;
    mutable std::mutex mutex_;
    boost::unordered_flat_map<record::symbol, slot, std::hash<record::symbol>> slots_;  // open addressing: no node per key
    byte_arena responses_;  // every stored response, back to back; freed by reset
};

}  // namespace faultline::server
