// Test helpers for the checks: a builder for synthetic journals (one operation at a time, times in
// ms since run start) and one-liners that parse an `[[expect]]` table from TOML text.
#pragma once

#include <chrono>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>

#include <toml++/toml.h>

#include "faultline/checks/check.hpp"
#include "faultline/checks/timing_control.hpp"
#include "faultline/core/grpc_status.hpp"
#include "faultline/record/run_record.hpp"

namespace faultline::checks::test {

inline std::int64_t ms(double value) { return static_cast<std::int64_t>(std::llround(value * 1e6)); }

// A timing control of 24 processes with a fixed `delay_ms`, whose gaps spread evenly over `spread_ms`.
inline timing_control evenly_spread_control(double delay_ms, double spread_ms) {
    timing_control c;
    c.delay = std::chrono::nanoseconds{ms(delay_ms)};
    c.processes = 24;
    for (int i = 0; i < 24; ++i) c.gaps_ns.push_back(ms(delay_ms + spread_ms * i / 23.0));
    return c;
}

// Builds a journal attempt by attempt. `op(name)` selects (or starts) an operation; `attempt(...)`
// appends one at that operation's cursor, lasting `took` (1 ms by default); `wait(ms)` moves the
// cursor on. Modifiers (`key`, `deadline`, …) change the attempt just added. Sequence numbers are
// given in call order, starting at 1.
class journal_builder {
public:
    journal_builder& op(const std::string& name, std::string method = "POST", std::string target = "/charge") {
        current_ = name;
        auto& s = ops_[name];
        if (s.method.empty()) {
            s.method = std::move(method);
            s.target = std::move(target);
        }
        return *this;
    }
    journal_builder& at(double t_ms) {
        ops_[current_].cursor = ms(t_ms);
        return *this;
    }
    journal_builder& wait(double gap_ms) {
        ops_[current_].cursor += ms(gap_ms);
        return *this;
    }
    journal_builder& attempt(int status, double took_ms = 1) {
        auto& s = ops_[current_];
        record::journal_record r;
        r.seq = run_.journal.size() + 1;
        r.connection = static_cast<std::uint32_t>(r.seq);
        r.request_ns = s.cursor;
        r.finished_ns = s.cursor + ms(took_ms);
        r.method = s.method;
        r.target = s.target;
        r.operation = current_;
        r.identity = record::identity_source::header;
        r.attempt = ++s.attempts;
        r.status = static_cast<std::uint16_t>(status);
        s.cursor = r.finished_ns;
        run_.journal.push_back(std::move(r));
        return *this;
    }
    // An attempt that ended without a complete response.
    journal_builder& lost(record::wire_outcome outcome, double took_ms = 1) {
        attempt(0, took_ms);
        last().outcome = outcome;
        return *this;
    }
    journal_builder& committed() { return effect(record::effect_kind::committed); }
    journal_builder& effect(record::effect_kind kind) {
        return set([&](record::journal_record& r) { r.effect = kind; });
    }
    journal_builder& key(std::string k) {
        return set([&](record::journal_record& r) { r.idempotency_key = std::move(k); });
    }
    journal_builder& keyed_identity() {
        return set([](record::journal_record& r) { r.identity = record::identity_source::idempotency_key; });
    }
    journal_builder& attempt_header(std::string value) {
        return set([&](record::journal_record& r) { r.attempt_header = std::move(value); });
    }
    journal_builder& deadline(std::int64_t remaining_ms) {
        return set([&](record::journal_record& r) { r.deadline_ms = remaining_ms; });
    }
    // The reply's first byte went out `hold_ms` after the request was read (a barrier held it). Without
    // it the record has no t_response, as a journal written before faultline recorded one.
    journal_builder& replied_after(double hold_ms) {
        return set([&](record::journal_record& r) { r.response_ns = r.request_ns + ms(hold_ms); });
    }
    journal_builder& retry_after(std::int64_t wait_ms) {
        return set([&](record::journal_record& r) { r.retry_after_ms = wait_ms; });
    }
    // A gRPC unary call (HTTP 200) that ended with `status` in its trailers.
    journal_builder& call(grpc_status status, double took_ms = 1) { return attempt(200, took_ms).grpc(status); }
    // A gRPC stream refused with RST_STREAM REFUSED_STREAM: never processed.
    journal_builder& refused_stream() { return lost(record::wire_outcome::reset).fault("refused_stream"); }
    // A gRPC call's status and grpc-retry-pushback-ms from its trailers.
    journal_builder& grpc(grpc_status status) {
        return set([&](record::journal_record& r) { r.grpc_status = static_cast<std::uint8_t>(status); });
    }
    journal_builder& pushback(std::int32_t wait_ms) {
        return set([&](record::journal_record& r) { r.grpc_pushback_ms = wait_ms; });
    }
    journal_builder& fault(std::string kind, std::string rule = "r1") {
        return set([&](record::journal_record& r) {
            r.fault = std::move(kind);
            r.rule = std::move(rule);
        });
    }
    journal_builder& client(record::client_record c) {
        run_.clients.push_back(std::move(c));
        return *this;
    }

    record::journal_record& last() { return run_.journal.back(); }
    record::run_record run() const { return run_; }

private:
    struct op_state {
        std::string method;
        std::string target;
        std::int64_t cursor = 0;
        std::uint32_t attempts = 0;
    };
    template <class F>
    journal_builder& set(F&& f) {
        f(last());
        return *this;
    }

    record::run_record run_;
    std::map<std::string, op_state> ops_;
    std::string current_;
};

inline record::client_record client_op(std::string op, double started_ms, double finished_ms, bool success,
                               std::uint32_t attempts = 1, std::optional<double> deadline_ms = std::nullopt) {
    record::client_record c;
    c.operation = std::move(op);
    c.client = "c1";
    c.method = "POST";
    c.target = "/charge";
    c.started_ns = ms(started_ms);
    c.finished_ns = ms(finished_ms);
    if (deadline_ms) c.deadline_ns = ms(*deadline_ms);
    c.attempts = attempts;
    c.decision = success ? "success" : "attempts_exhausted";
    c.success = success;
    return c;
}

inline config_errors parse_errors(std::string_view text) {
    config_errors errors;
    const toml::table table = toml::parse(text, std::string_view{"scenario.toml"});
    auto e = parse_expectation(table, "scenario.toml", errors);
    if (e && !errors.empty()) throw std::logic_error("expectation returned despite errors");
    return errors;
}

inline expectation parse_ok(std::string_view text) {
    config_errors errors;
    const toml::table table = toml::parse(text, std::string_view{"scenario.toml"});
    auto e = parse_expectation(table, "scenario.toml", errors);
    if (!e) throw std::invalid_argument("bad test expectation: " + errors.front().to_string());
    return *e;
}

inline record::verdict run_check(std::string_view text, const record::run_record& run) { return evaluate(parse_ok(text), run); }

// A spell in which the server itself ran late (server_late), from `at_ns`, lasting `late_ns`.
inline void add_server_late(record::run_record& run, std::int64_t at_ns, std::int64_t late_ns) {
    record::server_event late;
    late.kind = record::server_event_kind::server_late;
    late.at_ns = at_ns;
    late.late_ns = late_ns;
    run.server_events.push_back(std::move(late));
}

}  // namespace faultline::checks::test
