// Something the server did or was told to do that is not an attempt, but is evidence in its own
// right: a control action (a reset forgets attempts, a rule change switches faults on or off — a
// client that resets the server mid-run must not turn a FAIL into a PASS), or a limit the server
// enforced (a connection refused over the cap, a connection closed by a header or idle timeout), or
// a switch of its listening port for a fault's window (closed, reopened).
// The server journals each beside the attempts, numbered from the same sequence, and checks and
// reports see them. In JSON Lines a server event is one object whose first field is "event":
//   {"event":"reset","seq":7,"round":2,"t":1200,"rule":"","detail":"","peer":"127.0.0.1:40112"}
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "faultline/core/enum_names.hpp"
#include "faultline/record/journal_record.hpp"

namespace faultline::record {

// How often the server's lateness watch (server/src/lateness_watch.hpp) arms its timer on each
// worker: a `server_late` spell's stamps may be this much later than its last late firing, and the
// checks that excuse a finding by a spell count it in.
inline constexpr std::chrono::milliseconds lateness_watch_period{20};

enum class server_event_kind {
    // Control actions (control_api.hpp).
    reset,          // ledger, journal, attempt counts and stored results forgotten; the next round starts
    rule_added,     // `rule` names the rule, `detail` is the rule as written
    rule_removed,   // `rule` names the rule
    rules_cleared,  // every rule removed; `detail` lists their names
    // Evidence lost behind the server's back: the journal's spill file was changed (truncated,
    // overwritten) while the run held it; `detail` says what was lost. Counted with the control
    // actions: the journal no longer shows the whole run.
    evidence_altered,
    // Limits (server_options.hpp).
    connection_refused,  // over max_connections
    header_timeout,      // a request head not complete in time; the connection was closed
    idle_timeout,        // a kept-alive connection idle too long; closed
    write_timeout,       // a response the client stopped reading, not taken in time; reset
    idle_evicted,        // a kept-alive idle connection closed to make room at max_connections
    // A TLS port's handshake failed; `detail` is OpenSSL's reason ("tlsv1 alert unknown ca": the
    // client rejected the certificate; "http request": plain HTTP sent to the TLS port).
    tls_handshake_failed,
    // The service port's own schedule: a listener-level fault's window (`refuse` with how =
    // "closed_port" or "unanswered_syn") began, or ended. `rule` names the rule, `detail` says how,
    // and which connections that completed their handshake in a held listen queue were reset unread.
    listener_closed,
    listener_reopened,
    // A method and path no endpoint of the service matched, the first time it went unmatched (each
    // attempt to it is journaled with effect "unmatched"): `detail` is "POST /charge; nearest POST
    // /payments" (the nearest declared endpoint, WireMock's near-miss), `peer` who sent it.
    unmatched_route,
    // The journal's anchor, its first line: `detail` is the wall clock at the event's `t` as Unix ns,
    // `peer` the instance's name, so journals of several instances can be put on one timeline.
    started,
    // A fault kind with no form where it fired, and what was done instead: `refused_stream` on
    // HTTP/1.1 (a close), `malformed` on HTTP/2 (RST_STREAM PROTOCOL_ERROR), `tls` on a plain listener
    // or a certificate fault with the user's own certificate (served as usual). `rule` names the rule.
    fault_not_mapped,
    // A client refused the certificate a `tls` rule made the server present (expired, for another
    // name, from an untrusted issuer): `rule` names the rule, `detail` is "expired_certificate: "
    // and how it refused (OpenSSL's alert, or a connection closed with no request over it). The
    // evidence of check rejects_bad_certificates; never rate-limited.
    certificate_refused,
    // The server itself ran late: a worker's timer, armed every lateness_watch_period, fired `late_ns` or more after
    // it was due, from `t` on (a CPU taken by other processes, the machine's load). Its stamps in that
    // spell may be that much late, so the timing checks leave out the gaps it overlaps.
    server_late,
};

// Their journal names.
inline constexpr enum_names server_event_kind_names{std::to_array<enum_name<server_event_kind>>({
    {server_event_kind::reset, "reset"},
    {server_event_kind::rule_added, "rule_added"},
    {server_event_kind::rule_removed, "rule_removed"},
    {server_event_kind::rules_cleared, "rules_cleared"},
    {server_event_kind::evidence_altered, "evidence_altered"},
    {server_event_kind::connection_refused, "connection_refused"},
    {server_event_kind::header_timeout, "header_timeout"},
    {server_event_kind::idle_timeout, "idle_timeout"},
    {server_event_kind::write_timeout, "write_timeout"},
    {server_event_kind::idle_evicted, "idle_evicted"},
    {server_event_kind::tls_handshake_failed, "tls_handshake_failed"},
    {server_event_kind::listener_closed, "listener_closed"},
    {server_event_kind::listener_reopened, "listener_reopened"},
    {server_event_kind::unmatched_route, "unmatched_route"},
    {server_event_kind::started, "started"},
    {server_event_kind::fault_not_mapped, "fault_not_mapped"},
    {server_event_kind::certificate_refused, "certificate_refused"},
    {server_event_kind::server_late, "server_late"},
})};

std::string_view to_string(server_event_kind kind);
std::optional<server_event_kind> server_event_kind_from_string(std::string_view s);
// True for the control actions (reset and rule changes) and evidence_altered: what makes a run's
// journal incomplete.
bool is_control_action(server_event_kind kind);

struct server_event {
    server_event_kind kind = server_event_kind::reset;  // "event"
    std::uint64_t seq = 0;    // "seq": from the journal's sequence, so it orders against attempts
    std::int64_t at_ns = 0;   // "t": monotonic ns since the run started
    std::string rule;         // "rule": the rule concerned, "" when none
    std::string detail;       // "detail"
    std::string peer;         // "peer": who asked or connected, "address:port"
    // Written after "seq" (journal_json.cpp's order, not this one, which keeps older initialisers valid).
    round_number round = 1;   // "round": written from round 2 on (absent: 1); a reset is its round's first event
    // "seed": the `started` anchor's only (absent elsewhere, and in journals from before it was
    // written): the seed the writer decided its faults with, which `faultline check` reports.
    std::optional<std::uint64_t> seed = std::nullopt;
    // "late_ns": server_late's only: how long the spell lasted, from `at_ns` (when the first late
    // firing was due) to the last late firing.
    std::optional<std::int64_t> late_ns = std::nullopt;
};

// The wall-clock anchor of a journal: a `started` server event saying the wall clock read `wall` at
// `at_ns` (ns since the writer's run start), so journals of several instances can be put on one
// timeline (journal_merge.hpp). `instance` is the writer's name ("" = none); `seed` the writer's
// fault seed (none for a writer without one). `serve`, `proxy` and
// `proxy --mode tcp` write it first in their journals; the runner adds one to each tier's journal
// before merging.
server_event wall_clock_anchor(std::int64_t at_ns, std::chrono::system_clock::time_point wall, std::string instance,
                               std::optional<std::uint64_t> seed);

}  // namespace faultline::record
