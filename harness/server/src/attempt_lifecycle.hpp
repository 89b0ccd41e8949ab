// Private to the server: the lifecycle of one attempt, written once for every protocol — an
// HTTP/1.1 request on http_connection and an HTTP/2 stream (h2_session.hpp) run this same code:
// the record opened from the request, the operation identity, the engine's decision, the backend's
// fetch, the barrier hold, then the reply or the fault plan (action_executor.hpp), and the one
// journal record. It is a template over the carrier, as the action executor is: no virtual call and
// no allocation of its own on the HTTP/1.1 path.
//
// A Carrier provides (all called on its connection's thread), besides action_executor's primitives:
//   exchange& attempt();                 the attempt it carries (exchange.hpp)
//   backend_channel& channel();
//   http_core& core();
//   void enter(attempt_phase);           what it is doing, for its stop, watchdog and stale wakes
//   attempt_phase phase() const;
//   bool stopping() const;               the listener is stopping
//   listener_timer& timer();             its fault waits and barrier deadline
//   std::shared_ptr<Carrier> shared();   held by a barrier's wake
//   std::shared_ptr<fetch_waiter> waiter();  held by a backend fetch, which calls on_fetched()
#pragma once

#include "action_executor.hpp"
#include "backend.hpp"
#include "exchange.hpp"
#include "grpc_call.hpp"
#include "http_core.hpp"
#include "http_fields.hpp"

#include "faultline/retry/retry_after.hpp"

#include <boost/asio/post.hpp>
#include <boost/beast/core/string.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

namespace faultline::server::detail {

enum class attempt_phase { running, held, fetching, other };

// Where an attempt came from, beside its request.
struct attempt_origin {
    std::uint32_t request_number = 0;  // on its connection, 1-based
    std::int64_t accepted_ns = 0;      // its connection's accept
    std::size_t bytes_in = 0;
    std::string_view protocol;         // "" for HTTP/1.1 (the journal leaves it out), "h2", "h2c"
    std::optional<std::uint32_t> stream;
    // The `tls` rule whose certificate, one the client had to refuse, its connection accepted (""
    // none): an attempt without a fault of its own is journaled as that rule's.
    std::string_view bad_certificate_rule;
};

// The reply's fields as the record sees them: a Retry-After sent is journaled as a wait, a gRPC
// call's grpc-status and grpc-retry-pushback-ms as they were sent.
inline void note_reply_field(exchange& attempt, std::string_view name, std::string_view value) {
    const auto is = [name](std::string_view field) {
        return boost::beast::iequals(boost::beast::string_view{name.data(), name.size()},
                                     boost::beast::string_view{field.data(), field.size()});
    };
    if (is("Retry-After")) {
        if (const auto wait = retry::parse_retry_after(value, attempt.wall_now)) {
            attempt.record.retry_after_ms = std::chrono::duration_cast<std::chrono::milliseconds>(*wait).count();
        }
    } else if (is("grpc-status")) {
        if (const auto status = parse_grpc_status(value)) attempt.record.grpc_status = static_cast<std::uint8_t>(*status);
    } else if (is("grpc-retry-pushback-ms")) {
        std::int32_t ms = 0;
        const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), ms);
        if (ec == std::errc{} && end == value.data() + value.size()) attempt.record.grpc_pushback_ms = ms;
    }
}

template <class Carrier>
class attempt_lifecycle {
public:
    // The request is in c.attempt().request: the attempt opens, the engine decides, and it goes on.
    static void begin(Carrier& c, const attempt_origin& origin) {
        exchange& a = c.attempt();
        http_core& core = c.core();
        server_context& ctx = core.context;
        const auto& fields = a.request.base();
        a.open = true;
        a.record = record::journal_record{};
        a.wire = record::wire_detail{};
        a.record.connection = static_cast<std::uint32_t>(a.connection_id);  // 32 bits in the journal
        a.record.connection_request = origin.request_number;
        a.wire.accepted_ns = origin.accepted_ns;
        if (!origin.protocol.empty()) a.wire.protocol = origin.protocol;
        if (origin.stream) a.wire.stream = *origin.stream;
        a.record.request_ns = core.since_start_ns();
        // The record's strings are interned here, once per attempt (symbol.hpp): the journal keeps ids.
        a.record.method = to_std(a.request.method_string());
        a.record.target = to_std(a.request.target());
        a.wire.bytes_in = origin.bytes_in;
        a.record.attempt_header = header_value(fields, "Faultline-Attempt");
        if (!a.record.attempt_header) a.record.attempt_header = header_value(fields, "x-envoy-attempt-count");
        a.record.previous_attempts = header_value(fields, "grpc-previous-rpc-attempts");
        a.record.deadline_ms = integer_header(fields, "Faultline-Deadline-Ms");
        if (!a.record.deadline_ms) a.record.deadline_ms = integer_header(fields, "x-envoy-expected-rq-timeout-ms");
        if (!a.record.deadline_ms) {
            if (const auto timeout = header_value(fields, "grpc-timeout")) a.record.deadline_ms = grpc_timeout_ms(*timeout);
        }
        a.wire.body_hash = hash_bytes(a.request.body());
        if (!core.settings.instance.empty()) a.record.instance = core.settings.instance;

        const fields_source headers{fields};
        const faults::request_view request{a.record.method, a.record.target, headers, a.request.body()};
        a.identity = identify(ctx.identity, request);
        a.record.operation = a.identity.value;
        a.record.attempt = ctx.attempts.next(a.record.operation);
        a.record.seq = ctx.records.next_seq();
        a.record.identity = a.identity.source;
        a.record.idempotency_key = a.identity.idempotency_key;

        a.wall_now = core.time.wall_now();
        const faults::attempt_context attempt{
            request,
            a.identity.hash,
            a.record.attempt,
            a.record.seq,
            std::chrono::nanoseconds{a.record.request_ns},
            a.wall_now,
        };
        a.decision = ctx.engine.on_attempt(attempt);
        if (!a.decision.has_fault()) {
            if (!origin.bad_certificate_rule.empty()) [[unlikely]] {
                a.record.rule = origin.bad_certificate_rule;
                a.record.fault = "tls";
            }
            if (c.channel().fetches_first(nullptr)) return fetch_then(c, after_fetch::reply);
            c.set_reply(c.run_service());
            return c.send_response();
        }
        a.record.rule = a.decision.rule();
        a.record.fault = a.decision.kind();
        if (a.decision.barrier()) return hold_at_barrier(c);
        carry_out_plan(c);
    }

    static void carry_out_plan(Carrier& c) {
        const faults::fault_plan& plan = *c.attempt().decision.plan();
        if (c.channel().fetches_first(&plan)) return fetch_then(c, after_fetch::carry_out_plan);
        action_executor<Carrier>::run(c, plan);
    }

    // Nothing is read or written for the attempt while the backend fetches; the watchdog ends a
    // fetch past its deadline (the channel then hands over a gateway error instead of a reply).
    static void fetch_then(Carrier& c, after_fetch next) {
        c.enter(attempt_phase::fetching);
        c.attempt().next = next;
        c.channel().fetch(c.attempt(), c.waiter());
    }

    static void on_fetched(Carrier& c) {
        if (c.phase() != attempt_phase::fetching) return;  // closed by a forced stop meanwhile
        c.enter(attempt_phase::running);
        if (c.attempt().next == after_fetch::carry_out_plan) {
            return action_executor<Carrier>::run(c, *c.attempt().decision.plan());
        }
        c.set_reply(c.run_service());
        c.send_response();
    }

    // Nothing is sent while held: the client sees a slow server, the journal a gap between
    // t_request and t_response. Every held attempt arms its own timer at the group's deadline and
    // the first to fire releases them all, so a group never outlives its deadline.
    static void hold_at_barrier(Carrier& c) {
        c.enter(attempt_phase::held);
        const faults::barrier_ticket& ticket = *c.attempt().decision.barrier();
        const auto remaining = ticket.deadline() - std::chrono::nanoseconds{c.core().since_start_ns()};
        c.timer().expires_after(std::max(remaining, std::chrono::nanoseconds{0}));
        // The handler names its own group: by the time it runs, the carrier may hold a later attempt.
        c.timer().async_wait([ticket](boost::system::error_code ec) {
            if (!ec) ticket.release_group();
        });
        // The wake may run on whichever thread releases the group; the attempt goes on on its own,
        // holding the carrier until then, which the group's release (count, deadline, stop) bounds.
        ticket.on_release([self = c.shared(), executor = c.timer().get_executor()] {
            boost::asio::post(executor, [self] { on_barrier_released(*self); });
        });
        if (c.stopping()) release_barrier_group(c);
    }

    static void on_barrier_released(Carrier& c) {
        if (c.phase() != attempt_phase::held) return;  // closed by a forced stop meanwhile
        c.enter(attempt_phase::running);
        c.timer().cancel();
        carry_out_plan(c);
    }

    static void release_barrier_group(Carrier& c) { c.attempt().decision.barrier()->release_group(); }

    // The attempt's one journal record.
    static void finish(Carrier& c, record::wire_outcome outcome) {
        exchange& a = c.attempt();
        if (!a.open) return;
        a.open = false;
        a.record.outcome = outcome;
        if (outcome != record::wire_outcome::responded && outcome != record::wire_outcome::client_gone &&
            outcome != record::wire_outcome::truncated) {
            a.record.status = 0;
            a.record.retry_after_ms.reset();
        }
        // A gRPC status goes last (trailers): a reply that did not end whole never sent it.
        if (outcome != record::wire_outcome::responded) {
            a.record.grpc_status.reset();
            a.record.grpc_pushback_ms.reset();
        }
        http_core& core = c.core();
        a.record.finished_ns = core.since_start_ns();
        core.context.records.append(a.record, a.wire);
        ++core.attempts;
        a.decision = faults::fault_decision{};  // releases the active-fault and overload slots
    }
};

}  // namespace faultline::server::detail
