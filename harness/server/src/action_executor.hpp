// Private to the server: carries out a fault plan (faults/action.hpp) on one attempt's carrier. The
// executor holds the policy — when the service runs (the commit point), which reply goes out, which
// bytes are written, how the attempt ends and what outcome is journaled — and the carrier holds the
// mechanism (socket or stream, timer, journal record). It is a template over the carrier so the
// server instantiates it with its HTTP/1.1 connection (http_connection.hpp) and its HTTP/2 stream
// (h2_session.cpp), and the tests with a fake: no virtual call, no allocation of its own. An HTTP/2
// stream keeps the reply's head out of raw() (it goes as HEADERS), writes raw() as DATA, and ends
// with RST_STREAM where the connection resets or closes (docs/protocols.md).
//
// Exhaustive: there is one handler per alternative of faults::action, and a deleted catch-all, so
// an action added to the variant without a handler here is a compile error in std::visit.
//
// A Connection (the carrier) provides (all called on its connection's own thread):
//   service_response run_service();            the commit point: the backend (backend.hpp)
//   void set_reply(service_response);          the reply to send
//   void set_reply(int status, const H& headers, std::string body,
//                  std::optional<std::size_t> content_length = std::nullopt);
//                                              H: faults::header_list or server::header_list;
//                                              content_length overrides the body's size in the head
//   const std::string& reply_head() const;     status line and fields, ending in the blank line
//   const std::string& reply_body() const;
//   bool reply_keep_alive() const;
//   void send_response();                      writes the reply; journals responded / client_gone
//   std::string& raw();                        the bytes of a damaged reply, kept until written
//   void write_raw(std::size_t offset, std::size_t n, Next next);
//                                              writes raw()[offset, offset + n) (counted as bytes
//                                              out); on error journals client_gone and closes,
//                                              else calls next(connection)
//   void wait_then(faults::duration, Next next);  next(connection) after the wait; closes on stop
//   void finish_attempt(wire_outcome);         the attempt's one journal record
//   void reset_now();                          RST
//   void do_graceful_close();                  FIN, then linger for the client's FIN
//   void start_hang(faults::duration limit);   silent until the client leaves or the limit; journals hung
//   void refuse_stream();                      refused unprocessed (HTTP/2 REFUSED_STREAM); journals
//   void go_away(bool processed);              HTTP/2 GOAWAY naming the stream processed or not; journals
//   void not_mapped(std::string detail);       journals a fault with no form here, and what was done instead
// and, where a reply's body may end with the connection (HTTP/1.x), also:
//   bool can_frame_by_close() const;           over TLS: only close_notify can say the body ended
//   void set_reply_framed_by_close(int status, const H& headers, std::string body);
//                                              a head with no Content-Length, the connection closing after
//   void close_without_close_notify();         TCP FIN under TLS, then linger for the client's FIN
//   void do_read();                            keep-alive: read the next request
#pragma once

#include "faultline/faults/action.hpp"
#include "faultline/record/journal_record.hpp"
#include "faultline/server/service.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <variant>

namespace faultline::server::detail {

// The pause between two chunks of a slow body: chunk_bytes at bytes_per_second. A zero rate or
// chunk counts as one; the pause is capped at an hour so the multiplication cannot overflow the
// nanosecond count.
inline faults::duration dribble_interval(const faults::slow_body_action& action) {
    const auto rate = std::max<std::size_t>(action.bytes_per_second, 1);
    const auto chunk = std::max<std::size_t>(action.chunk_bytes, 1);
    return faults::duration{
        static_cast<std::int64_t>(std::min<std::size_t>(chunk * 1'000'000'000ULL / rate, 3'600'000'000'000ULL))};
}

// The pause for a reply of `bytes`: the rule's own, unless all the pauses together would exceed
// max_fault_wait ([server]); then they are shortened evenly to fit, so a slow body, like every
// other fault wait, ends within max_fault_wait whatever the size of the reply.
inline faults::duration dribble_interval(const faults::slow_body_action& action, std::size_t bytes,
                                         faults::duration max_fault_wait) {
    const faults::duration interval = dribble_interval(action);
    const std::size_t chunk = std::max<std::size_t>(action.chunk_bytes, 1);
    const auto pauses = static_cast<std::int64_t>((std::max<std::size_t>(bytes, 1) - 1) / chunk);
    if (pauses == 0 || interval.count() <= max_fault_wait.count() / pauses) return interval;
    return max_fault_wait / pauses;
}

template <class Connection>
class action_executor {
public:
    // Holds a reference to the connection for one visit; construct on the stack.
    action_executor(Connection& connection, faults::commit_phase phase)
        : c_{connection}, after_{phase == faults::commit_phase::after} {}

    static void run(Connection& connection, const faults::fault_plan& plan) {
        std::visit(action_executor{connection, plan.phase}, plan.what);
    }

    // Kinds that deliver the service's own reply (delay, slow_body, truncate) run the service
    // whatever the phase; the others run it only in phase `after`, and discard its reply.

    void operator()(const faults::respond_action& action) const {
        if (after_) c_.run_service();
        c_.set_reply(action.status, action.headers, action.body);
        c_.send_response();
    }

    void operator()(const faults::delay_action& action) const {
        if (after_) c_.set_reply(c_.run_service());
        c_.wait_then(action.wait, [after = after_](Connection& c) {
            if (!after) c.set_reply(c.run_service());
            c.send_response();
        });
    }

    void operator()(const faults::drop_action& action) const {
        if (after_) c_.run_service();
        switch (action.mode) {
            case faults::drop_mode::reset:
                c_.finish_attempt(record::wire_outcome::reset);
                return c_.reset_now();
            case faults::drop_mode::close:
                c_.finish_attempt(record::wire_outcome::closed);
                return c_.do_graceful_close();
            case faults::drop_mode::hang:
                return c_.start_hang(action.hang_limit);
            case faults::drop_mode::refuse_stream:
                return c_.refuse_stream();
            case faults::drop_mode::go_away:
                return c_.go_away(after_);
        }
    }

    void operator()(const faults::slow_body_action& action) const {
        c_.set_reply(c_.run_service());
        c_.raw() = c_.reply_head() + c_.reply_body();
        const std::size_t chunk = std::max<std::size_t>(action.chunk_bytes, 1);
        dribble(c_, chunk, dribble_interval(action, c_.raw().size(), c_.max_fault_wait()), 0);
    }

    // The head promises the whole body; fewer bytes follow. tls_truncate's head promises nothing: the
    // body ends with the connection, which ends without close_notify.
    void operator()(const faults::truncate_action& action) const {
        service_response reply = c_.run_service();
        if (action.framed_by_close && cut_framed_by_close(reply, action.body_bytes)) return;
        // An empty body cannot be cut short: the head then promises one byte that never comes.
        const std::size_t promised = std::max<std::size_t>(reply.body.size(), 1);
        c_.set_reply(reply.status, reply.headers, std::move(reply.body), promised);
        const std::string& body = c_.reply_body();
        std::size_t keep = std::min(action.body_bytes, body.size());
        if (!body.empty() && keep == body.size()) keep = body.size() - 1;
        std::string& raw = c_.raw();
        raw = c_.reply_head();
        raw.append(body, 0, keep);
        c_.write_raw(0, raw.size(), [reset = action.reset](Connection& c) {
            c.finish_attempt(record::wire_outcome::truncated);
            if (reset) return c.reset_now();
            c.do_graceful_close();
        });
    }

    void operator()(const faults::malformed_action& action) const {
        if (after_) c_.run_service();
        c_.raw() = action.bytes;
        c_.write_raw(0, c_.raw().size(), [](Connection& c) {
            c.finish_attempt(record::wire_outcome::malformed);
            c.do_graceful_close();
        });
    }

    // False, with the reason journaled, where a cut body framed by the connection's end would not be
    // a truncation only close_notify reveals; the reply is then cut as `truncate` cuts it.
    bool cut_framed_by_close(service_response& reply, std::size_t body_bytes) const {
        if constexpr (requires(Connection& c) { c.close_without_close_notify(); }) {
            if (!c_.can_frame_by_close()) {
                c_.not_mapped("tls_truncate on a plain TCP connection has no close_notify to leave out: the head "
                              "promised the whole body, as truncate");
                return false;
            }
            c_.set_reply_framed_by_close(reply.status, reply.headers, std::move(reply.body));
            const std::string& body = c_.reply_body();
            if (body.empty()) {
                // Nothing to cut: the client would read a whole empty reply.
                c_.not_mapped("tls_truncate: the reply has no body to cut: the head promised one byte, as truncate");
                c_.set_reply(reply.status, reply.headers, std::string{}, std::size_t{1});
                c_.raw() = c_.reply_head();
            } else {
                c_.raw() = c_.reply_head();
                c_.raw().append(body, 0, std::min(body_bytes, body.size() - 1));
            }
            c_.write_raw(0, c_.raw().size(), [](Connection& c) {
                c.finish_attempt(record::wire_outcome::truncated);
                c.close_without_close_notify();
            });
            return true;
        } else {
            c_.not_mapped("tls_truncate has no HTTP/2 form (DATA frames end a body): the stream was cut as truncate");
            return false;
        }
    }

    // Exhaustiveness: an alternative without its own handler lands here and does not compile.
    template <class Action>
    void operator()(const Action&) const = delete;

private:
    // Writes raw()[sent, sent + chunk), then waits one interval, until all of raw() is out.
    static void dribble(Connection& c, std::size_t chunk, faults::duration interval, std::size_t sent) {
        const std::size_t n = std::min(chunk, c.raw().size() - sent);
        c.write_raw(sent, n, [chunk, interval, sent = sent + n](Connection& conn) {
            if (sent >= conn.raw().size()) {
                conn.finish_attempt(record::wire_outcome::responded);
                if (!conn.reply_keep_alive()) return conn.do_graceful_close();
                return conn.do_read();
            }
            conn.wait_then(interval, [chunk, interval, sent](Connection& next) { dribble(next, chunk, interval, sent); });
        });
    }

    Connection& c_;
    const bool after_;
};

}  // namespace faultline::server::detail
