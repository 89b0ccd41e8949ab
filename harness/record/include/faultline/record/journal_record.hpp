// One attempt as the server saw it: the unit of evidence every check works from. The journal is a
// sequence of these; `faultline serve --journal` streams them as JSON Lines with the field names
// given in the comments (the JSON form is the stable interface for third-party tooling).
//
// A record is compact: its strings are symbols (symbol.hpp, 4-byte ids of interned text, the
// attempts of an operation sharing one id for its identity and key), its enums are one byte, so a
// record copies as a plain value and a large journal costs about a hundred bytes an attempt.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <string_view>

#include "faultline/core/enum_names.hpp"

#include "faultline/record/packed_optional.hpp"
#include "faultline/record/symbol.hpp"

namespace faultline::record {

// Where an attempt's operation identity came from (see DESIGN.md, "operation identity").
enum class identity_source : std::uint8_t { idempotency_key, header, body_field, request_hash };

// What the service did with the attempt's side effect.
enum class effect_kind : std::uint8_t {
    none,       // nothing committed (read, fault before commit, rejected)
    committed,  // a new effect was committed (a charge, an increment)
    replayed,   // idempotency layer replayed a stored response; nothing new committed
    conflict,   // idempotency layer refused: key in flight (409) or payload mismatch (422)
    rejected,   // idempotency layer refused: required key missing (400)
    unmatched,  // no endpoint of the service matched the request (404 naming the nearest one)
};

// How the attempt ended on the wire, from the server's side.
enum class wire_outcome : std::uint8_t {
    responded,  // a complete response was sent (`status`)
    reset,      // the server reset the connection (RST) with no complete response
    closed,     // the server closed (FIN) with no response
    hung,       // the server never answered; the client went away or the hang limit passed
    truncated,  // a response head was sent with fewer body bytes than promised
    malformed,  // garbage instead of a status line
    client_gone,// the client disconnected before the response was complete
};

// A journal's round, 1-based: `POST /__faultline/reset` starts the next one (journal_rounds.hpp), so
// a test suite's cases, reset between them, are judged each on its own. 16 bits, which a record has
// room for without growing: a serve process that is reset more often than this refuses the reset.
using round_number = std::uint16_t;
inline constexpr round_number max_round = std::numeric_limits<round_number>::max();

// Their journal names.
inline constexpr enum_names identity_source_names{std::to_array<enum_name<identity_source>>({
    {identity_source::idempotency_key, "idempotency_key"},
    {identity_source::header, "header"},
    {identity_source::body_field, "body_field"},
    {identity_source::request_hash, "request_hash"},
})};
inline constexpr enum_names effect_kind_names{std::to_array<enum_name<effect_kind>>({
    {effect_kind::none, "none"},
    {effect_kind::committed, "committed"},
    {effect_kind::replayed, "replayed"},
    {effect_kind::conflict, "conflict"},
    {effect_kind::rejected, "rejected"},
    {effect_kind::unmatched, "unmatched"},
})};
inline constexpr enum_names wire_outcome_names{std::to_array<enum_name<wire_outcome>>({
    {wire_outcome::responded, "responded"},
    {wire_outcome::reset, "reset"},
    {wire_outcome::closed, "closed"},
    {wire_outcome::hung, "hung"},
    {wire_outcome::truncated, "truncated"},
    {wire_outcome::malformed, "malformed"},
    {wire_outcome::client_gone, "client_gone"},
})};

inline std::string_view to_string(identity_source v) { return identity_source_names(v); }
inline std::string_view to_string(effect_kind v) { return effect_kind_names(v); }
inline std::string_view to_string(wire_outcome v) { return wire_outcome_names(v); }

// What the checks judge of one attempt. Fields are ordered by size (8-byte, then 4-, 2- and 1-byte)
// so the record has no padding inside; the JSON field order is journal_json.cpp's and does not follow
// this one. Optional fields are packed (packed_optional.hpp): absence is a reserved value, not a flag.
// What only describes the transport (byte counts, connection timings, the upstream's side) is in
// `wire_detail`, kept apart: no check reads it, and a large journal is judged without holding it.
struct journal_record {
    std::uint64_t seq = 0;            // "seq": server-wide, 1-based, assigned when the request is read
    // Monotonic ns since the run started.
    std::int64_t request_ns = 0;           // "t_request": request fully read
    // "t_response": first response byte written (-1: none). A check's evidence, not only the wire's:
    // a reply held by the server (a barrier) cannot have reached the client before it.
    std::int64_t response_ns = -1;
    std::int64_t finished_ns = 0;          // "t_end": attempt over (response done, reset, closed…)
    packed_optional<std::int64_t> deadline_ms;  // "deadline_ms": Faultline-Deadline-Ms / x-envoy-expected-rq-timeout-ms
    packed_optional<std::int64_t> retry_after_ms;  // "retry_after_ms": Retry-After sent, as a wait in ms

    // "conn": connection id, 1-based. 32 bits: a server numbers 2^32 connections before one comes back
    // (two days of 25,000 new connections a second), and no check tells attempts apart by it.
    std::uint32_t connection = 0;
    // "conn_req": n-th request read on that connection, 1-based; above 1 the client reused a kept-alive
    // connection. Absent in journals written before faultline recorded it.
    packed_optional<std::uint32_t> connection_request;
    symbol method;                     // "method"
    symbol target;                     // "target"
    symbol operation;                  // "op": operation identity (key value, header/field value, or hash hex)
    std::uint32_t attempt = 1;         // "attempt": n-th attempt of this operation seen by the server
    symbol idempotency_key;            // "idempotency_key": normalised (quotes removed), "" if absent
    // Headers as sent by the client (absent when not sent).
    packed_optional<symbol> attempt_header;     // "attempt_header": Faultline-Attempt / x-envoy-attempt-count
    packed_optional<symbol> previous_attempts;  // "grpc_previous_attempts": grpc-previous-rpc-attempts
    symbol rule;                       // "rule": name of the fault rule applied, "" if none
    symbol fault;                      // "fault": fault kind applied, "" if none
    // "instance": which serve/proxy instance journaled it (`--instance`), so merged journals stay
    // attributable; `faultline check` tags records of a journal without one with the file's name.
    packed_optional<symbol> instance;
    // "grpc_pushback_ms": grpc-retry-pushback-ms sent in a gRPC call's trailers (gRPC A6): the wait
    // before the next attempt, or, negative, "do not retry". Absent: none sent.
    packed_optional<std::int32_t> grpc_pushback_ms;
    std::uint16_t status = 0;  // "status": status sent (0 when none)
    // "round": the round its request was read in; written from round 2 on (absent: 1).
    round_number round = 1;

    identity_source identity = identity_source::request_hash;  // "op_source"
    effect_kind effect = effect_kind::none;  // "effect"
    wire_outcome outcome = wire_outcome::responded;  // "outcome"
    // "grpc_status": the gRPC status code a gRPC call's trailers carried (0 OK … 16 UNAUTHENTICATED);
    // absent: not a gRPC call, or its stream ended with no status. Every status but OK is sent
    // trailers-only, so a call whose response headers went out and then failed (A6's commit point) is
    // the one with outcome "truncated".
    packed_optional<std::uint8_t> grpc_status;
};

// A quarter of what it was with eight std::strings (408 bytes, and their heap): a bound, so that a
// field added without thought shows here.
static_assert(sizeof(journal_record) <= 112, "journal_record is meant to stay compact");

// The rest of an attempt as the wire saw it: written to the journal file beside its record (the same
// JSON object) and read by people and third-party tools, never by a check. A journal keeps these only
// where something will write them out (journal_options::wire_details).
struct wire_detail {
    std::uint64_t seq = 0;                  // the record's
    std::int64_t accepted_ns = 0;           // "t_accept": connection accepted
    std::uint64_t body_hash = 0;            // "body_hash"
    std::uint64_t bytes_in = 0;             // "bytes_in"
    std::uint64_t bytes_out = 0;            // "bytes_out"
    // Written by `faultline proxy` only (absent otherwise): what the upstream did with the attempt.
    packed_optional<std::int64_t> upstream_ns;  // "upstream_ns": forwarded -> upstream reply read (or failure)
    packed_optional<int> upstream_status;       // "upstream_status": the upstream's status (absent: never answered)
    packed_optional<symbol> upstream_error;     // "upstream_error": "refused", "timeout", "reset", … (absent: none)
    // "protocol": "h2" (HTTP/2 over TLS, by ALPN) or "h2c" (cleartext, by prior knowledge); absent:
    // HTTP/1.x, as in journals written before faultline spoke HTTP/2.
    packed_optional<symbol> protocol;
    packed_optional<std::uint32_t> stream;  // "stream": the HTTP/2 stream id (absent: HTTP/1.x)
    // "stream_reset": the RST_STREAM error code the server ended the stream with ("CANCEL",
    // "INTERNAL_ERROR", "PROTOCOL_ERROR"; absent: none sent). Whether the effect was committed
    // first is the record's "effect".
    packed_optional<symbol> stream_reset;
};

static_assert(sizeof(wire_detail) <= 80, "wire_detail is meant to stay compact");

}  // namespace faultline::record
