// Private to the server: what stands behind the one HTTP connection (http_connection.hpp) — the
// commit point of its attempts, an HTTP/1.1 request or an HTTP/2 stream alike (exchange.hpp). Two
// modes differ only here:
//   - the service backend (service_backend.hpp): the idempotency layer, then the service model or a
//     relay tier, computed at the commit point;
//   - the upstream backend (upstream_backend.hpp): a real service over a pool of kept-alive
//     connections, whose reply must be fetched before the plan that needs it is carried out.
// Reading, framing, deadlines, the attempt record, barrier holds, fault actions, replies, hangs and
// closes are the connection's, written once.
#pragma once

#include "exchange.hpp"

#include "faultline/faults/action.hpp"
#include "faultline/server/listener.hpp"
#include "faultline/server/service.hpp"

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>

namespace faultline::server::detail {

// One carrier's side of the backend (an HTTP/1.1 connection's, or one HTTP/2 stream's): its
// attempts, one at a time, on the connection's thread.
class backend_channel {
public:
    virtual ~backend_channel() = default;

    // Whether the reply must be fetched before the attempt goes on: before `plan` is carried out, or
    // (null) before an attempt without a fault is answered.
    virtual bool fetches_first(const faults::fault_plan* plan) const = 0;
    // Starts fetching the reply; once it is held (or a gateway error standing for it) the channel
    // calls waiter->on_fetched() on the connection's thread. Only when fetches_first said so.
    virtual void fetch(exchange& attempt, std::shared_ptr<fetch_waiter> waiter) = 0;
    // The commit point: the attempt's reply, held or computed now. At most once an attempt.
    virtual service_response commit(exchange& attempt) = 0;
    // The connection's watchdog, while a fetch may be in progress: ends a fetch past its deadline
    // (on_fetched then runs) and says when to look again (nullopt: nothing to watch).
    virtual std::optional<std::chrono::steady_clock::time_point> expire_if_due(std::chrono::steady_clock::time_point) {
        return std::nullopt;
    }
    // The connection is being closed for good: end a fetch in progress now.
    virtual void cancel() {}
};

class backend {
public:
    virtual ~backend() = default;
    // The channel of a new connection (or HTTP/2 stream), which runs on worker `worker`'s thread
    // (`executor`).
    virtual std::unique_ptr<backend_channel> open_channel(std::size_t worker, listener_executor executor) = 0;
    // The longest a channel's watchdog may sleep (its shortest deadline), if it has deadlines.
    virtual std::optional<std::chrono::nanoseconds> watch_period() const { return std::nullopt; }
    // Whether replies get the connection's own Server and Date fields (a service's replies), or
    // carry the backend's own (an upstream's, relayed as they came).
    virtual bool stamps_replies() const = 0;
};

}  // namespace faultline::server::detail
