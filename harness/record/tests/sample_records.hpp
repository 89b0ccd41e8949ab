// Journal records and wire details with every field set, for the tests of record/ and of the server's
// journal: each sample differs in the optional fields present, the enums and the sizes, so a round
// trip that drops or mixes a field shows.
#pragma once

#include <cstdint>
#include <string>

#include "faultline/record/journal_record.hpp"

namespace faultline::record::testing {

inline journal_record sample(std::uint64_t n) {
    journal_record r;
    r.connection = static_cast<std::uint32_t>(n % 3 + 1);
    if (n % 2 == 0) r.connection_request = static_cast<std::uint32_t>(n / 3 + 1);
    r.request_ns = static_cast<std::int64_t>(n) * 100 + 10;
    r.response_ns = n % 2 == 0 ? -1 : r.request_ns + 5;
    r.finished_ns = r.request_ns + 20;
    r.method = "POST";
    r.target = "/payments?n=" + std::to_string(n);
    r.operation = "op-" + std::to_string(n / 2);
    r.identity = n % 2 == 0 ? identity_source::idempotency_key : identity_source::request_hash;
    r.attempt = static_cast<std::uint32_t>(n % 2 + 1);
    r.idempotency_key = n % 2 == 0 ? "k\"" + std::to_string(n) : "";
    if (n % 3 == 0) r.attempt_header = std::to_string(n);
    if (n % 4 == 0) r.previous_attempts = "1";
    if (n % 5 == 0) r.deadline_ms = 250;
    r.rule = n % 2 == 0 ? "lose-first" : "";
    r.fault = n % 2 == 0 ? "lost_response" : "";
    r.effect = n % 2 == 0 ? effect_kind::committed : effect_kind::replayed;
    r.outcome = n % 2 == 0 ? wire_outcome::reset : wire_outcome::responded;
    r.status = n % 2 == 0 ? 0 : 201;
    if (n % 7 == 0) r.retry_after_ms = 2000;
    return r;
}

// The wire detail of sample(n) (seq left 0, as the journal's append sets it).
inline wire_detail sample_wire(std::uint64_t n) {
    wire_detail w;
    w.accepted_ns = static_cast<std::int64_t>(n) * 100;
    w.body_hash = 0xfedcba9876543210ULL + n;  // above 2^53: must survive the round trip exactly
    w.bytes_in = 100 + n;
    w.bytes_out = 50 + n;
    if (n % 3 == 1) w.upstream_status = 503;
    if (n % 3 == 1) w.upstream_ns = static_cast<std::int64_t>(n) * 7;
    if (n % 3 == 2) w.upstream_error = "reset";
    if (n % 4 == 3) {
        w.protocol = "h2";
        w.stream = static_cast<std::uint32_t>(2 * n + 1);
        w.stream_reset = "CANCEL";
    }
    return w;
}

inline bool same(const journal_record& a, const journal_record& b) {
    return a.seq == b.seq && a.connection == b.connection && a.connection_request == b.connection_request &&
           a.request_ns == b.request_ns && a.response_ns == b.response_ns &&
           a.finished_ns == b.finished_ns && a.method == b.method && a.target == b.target &&
           a.operation == b.operation && a.identity == b.identity && a.attempt == b.attempt &&
           a.idempotency_key == b.idempotency_key && a.attempt_header == b.attempt_header &&
           a.previous_attempts == b.previous_attempts && a.deadline_ms == b.deadline_ms &&
           a.rule == b.rule && a.fault == b.fault && a.effect == b.effect &&
           a.outcome == b.outcome && a.status == b.status && a.retry_after_ms == b.retry_after_ms &&
           a.instance == b.instance;
}

inline bool same(const wire_detail& a, const wire_detail& b) {
    return a.seq == b.seq && a.accepted_ns == b.accepted_ns &&
           a.body_hash == b.body_hash && a.bytes_in == b.bytes_in && a.bytes_out == b.bytes_out &&
           a.upstream_ns == b.upstream_ns && a.upstream_status == b.upstream_status &&
           a.upstream_error == b.upstream_error && a.protocol == b.protocol && a.stream == b.stream &&
           a.stream_reset == b.stream_reset;
}

}  // namespace faultline::record::testing
