// Private to the server: one attempt as every protocol hands it to the attempt lifecycle
// (attempt_lifecycle.hpp) and the backend (backend.hpp) — an HTTP/1.1 request or an HTTP/2 stream
// alike. The backend sees only this, never the connection that carries it, so one backend serves
// both protocols.
#pragma once

#include "faultline/core/clock.hpp"
#include "faultline/faults/engine.hpp"
#include "faultline/record/journal_record.hpp"
#include "faultline/server/identity.hpp"
#include "faultline/server/journal.hpp"
#include "faultline/server/listener.hpp"

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <cstdint>

namespace faultline::server::detail {

class http_core;

using request_t = boost::beast::http::request<boost::beast::http::string_body>;

// What the attempt does once its reply is fetched.
enum class after_fetch { reply, carry_out_plan };

// Owned by whatever carries the attempt (a connection, a stream), reused from one attempt to the
// next; touched only on its connection's thread.
struct exchange {
    request_t request;
    record::journal_record record;
    record::wire_detail wire;
    operation_identity identity;
    faults::fault_decision decision;  // holds fault capacity until the attempt ends
    wall_time_point wall_now{};
    after_fetch next = after_fetch::reply;
    bool open = false;  // journaled once, when it closes
    std::uint64_t connection_id = 0;
    const listener_socket* socket = nullptr;  // its connection's: the peer of events about it
    http_core* core = nullptr;
};

// Told on its connection's thread when a fetch the backend was asked for is done. The channel holds
// it (a shared_ptr) while the fetch runs, so the carrier outlives the fetch's handlers.
class fetch_waiter {
public:
    virtual ~fetch_waiter() = default;
    virtual void on_fetched() = 0;
};

}  // namespace faultline::server::detail
