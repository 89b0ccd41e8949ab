// What a fault does, as data: the contract between the fault kinds (which decide) and the server
// engine in harness/ (which carries the action out on the socket). A kind never touches a socket;
// the engine never special-cases a kind, it only knows these actions.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "faultline/core/enum_names.hpp"

namespace faultline::faults {

using duration = std::chrono::nanoseconds;
using header_list = std::vector<std::pair<std::string, std::string>>;

// Send this response instead of the service's (status faults, overload rejections).
struct respond_action {
    int status = 503;
    header_list headers;  // e.g. Retry-After
    std::string body;
};

// Wait, then handle the request normally (latency; overload queueing).
struct delay_action {
    duration wait{};
};

// Never send a reply. How the connection ends:
enum class drop_mode {
    reset,  // TCP RST (SO_LINGER 0 then close)
    close,  // FIN (orderly shutdown) with no reply
    hang,   // keep the connection open and silent until the client goes away or `hang_limit` passes
    // HTTP/2: RST_STREAM REFUSED_STREAM, the request not processed (safe to retry); HTTP/1.1, which
    // cannot say so: as close.
    refuse_stream,
    // HTTP/2: GOAWAY. Before the commit, its last-stream-id says this stream was not processed (safe
    // to retry); after it, the stream is covered and the connection ends with no reply (lost). HTTP/1.1:
    // as close.
    go_away,
};
struct drop_action {
    drop_mode mode = drop_mode::reset;
    duration hang_limit{std::chrono::seconds{30}};  // then closed; bounds every hang
};

// Send the service's response, but slowly: `bytes_per_second`, in chunks of `chunk_bytes`.
struct slow_body_action {
    std::size_t bytes_per_second = 1024;
    std::size_t chunk_bytes = 64;
};

// Send the service's response head with the full Content-Length, then only `body_bytes` of the
// body, then close (FIN) — or reset (RST) when `reset` is set (the "mid-response" reset phase).
// With `framed_by_close` (tls_truncate) the head has no Content-Length, so the body ends with the
// connection, and the connection ends with a TCP FIN and no TLS close_notify: only the missing
// close_notify tells the client its body was cut.
struct truncate_action {
    std::size_t body_bytes = 0;
    bool reset = false;
    bool framed_by_close = false;
};

// Send these bytes instead of a status line, then close.
struct malformed_action {
    std::string bytes;
};

using action = std::variant<respond_action, delay_action, drop_action, slow_body_action, truncate_action,
                            malformed_action>;

// The phase of a fault relative to the service's commit of the request's side effect.
enum class commit_phase {
    before,  // the fault fires before the service runs: no side effect is committed
    after,   // the service commits first, then the fault replaces or damages the reply
};

// The engine's instruction for one attempt.
struct fault_plan {
    action what;
    commit_phase phase = commit_phase::before;
};

// What to do with a freshly accepted connection, before any request is read.
enum class connection_verdict {
    accept,  // serve it
    reset,   // RST at once (refuse window, reset before reading the request)
    close,   // FIN at once
    // TLS listeners only (the `tls` kind): the handshake itself fails, so no request byte is sent.
    tls_abort_handshake,      // the client's hello is read, then RST
    tls_stall_handshake,      // the client's hello is read and never answered (header_timeout ends it)
    // The handshake offers a certificate the client must refuse; a request that arrives anyway was
    // sent by a client that accepted it.
    tls_expired_certificate,  // the run's CA issued it, and it expired an hour ago
    tls_wrong_name,           // the run's CA issued it, for another name
    tls_untrusted_issuer,     // valid, but issued by an authority no client was given
};

// Their names; a `tls` rule's `how` is the name of a tls_ verdict.
inline constexpr enum_names connection_verdict_names{std::to_array<enum_name<connection_verdict>>({
    {connection_verdict::accept, "accept"},
    {connection_verdict::reset, "reset"},
    {connection_verdict::close, "close"},
    {connection_verdict::tls_abort_handshake, "abort_handshake"},
    {connection_verdict::tls_stall_handshake, "stall_handshake"},
    {connection_verdict::tls_expired_certificate, "expired_certificate"},
    {connection_verdict::tls_wrong_name, "wrong_name"},
    {connection_verdict::tls_untrusted_issuer, "untrusted_issuer"},
})};

// Whether the verdict is a `tls` rule's: the handshake fails, one way or another.
constexpr bool is_tls_verdict(connection_verdict v) { return v >= connection_verdict::tls_abort_handshake; }

// What the service port's listener does, instead of accepting, for the time window of a
// listener-level fault (`refuse` with `how = "closed_port"` or `"unanswered_syn"`). Connects then
// fail or hang in the client's kernel before any connection exists for the server to act on.
enum class listener_verdict {
    closed_port,     // the port stays bound but does not listen: connects fail with ECONNREFUSED
    unanswered_syn,  // the listen queue is held full and not accepted: SYNs go unanswered, connects hang
};

// Their names: `how = "..."` of the refuse kind, and the journal's words for a window.
inline constexpr enum_names listener_verdict_names{std::to_array<enum_name<listener_verdict>>({
    {listener_verdict::closed_port, "closed_port"},
    {listener_verdict::unanswered_syn, "unanswered_syn"},
})};

}  // namespace faultline::faults
