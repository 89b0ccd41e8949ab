// The fault actions carried out on a fake connection: which bytes go out, whether the service runs
// (the commit point), how the connection ends and what the attempt journals. Writes complete at
// once; waits are held until the test fires them, so the timed actions need no clock at all.
#include "action_executor.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace faultline::server::detail {
namespace {

using namespace std::chrono_literals;

// FramesByClose: an HTTP/1.x carrier, whose reply body may end with the connection (tls_truncate);
// without it, one like an HTTP/2 stream.
template <bool FramesByClose>
class basic_fake_connection {
public:
    // What the connection was asked to do, in order ("service", "wait 250ms", "finish truncated", …).
    std::vector<std::string> events;
    std::string wire;  // every byte written
    std::size_t commits = 0;
    std::optional<record::wire_outcome> outcome;
    int status = 0;
    bool keep_alive = true;
    bool fail_writes = false;
    std::string service_body = "0123456789";
    faults::duration fault_wait_limit = std::chrono::hours{1};

    // Runs the pending wait's continuation; false when nothing waits.
    bool fire() {
        if (!pending_) return false;
        auto next = std::exchange(pending_, {});
        next(*this);
        return true;
    }
    std::size_t waits() const { return waits_; }
    faults::duration waited() const { return waited_; }

    // ---- the Connection requirements (action_executor.hpp) ----

    service_response run_service() {
        ++commits;
        events.emplace_back("service");
        return service_response{200, {{"Content-Type", "text/plain"}}, service_body, record::effect_kind::committed};
    }

    void set_reply(service_response reply) { set_reply(reply.status, reply.headers, std::move(reply.body)); }

    template <class Headers>
    void set_reply(int s, const Headers& headers, std::string body,
                   std::optional<std::size_t> content_length = std::nullopt) {
        status = s;
        events.push_back("reply " + std::to_string(s));
        head_ = "HTTP/1.1 " + std::to_string(s) + "\r\n";
        for (const auto& [name, value] : headers) head_ += name + ": " + value + "\r\n";
        head_ += "Content-Length: " + std::to_string(content_length.value_or(body.size())) + "\r\n\r\n";
        body_ = std::move(body);
    }
    bool secure = true;  // over TLS
    bool can_frame_by_close() const requires FramesByClose { return secure; }
    template <class Headers>
    void set_reply_framed_by_close(int s, const Headers& headers, std::string body) requires FramesByClose {
        status = s;
        events.push_back("reply " + std::to_string(s) + " framed by close");
        head_ = "HTTP/1.1 " + std::to_string(s) + "\r\n";
        for (const auto& [name, value] : headers) head_ += name + ": " + value + "\r\n";
        head_ += "Connection: close\r\n\r\n";
        body_ = std::move(body);
    }
    void close_without_close_notify() requires FramesByClose { events.emplace_back("fin without close_notify"); }
    void not_mapped(std::string detail) { events.push_back("not mapped: " + detail); }
    const std::string& reply_head() const { return head_; }
    const std::string& reply_body() const { return body_; }
    bool reply_keep_alive() const { return keep_alive; }

    void send_response() {
        events.emplace_back("send");
        wire += head_ + body_;
        finish_attempt(record::wire_outcome::responded);
    }

    std::string& raw() { return raw_; }
    faults::duration max_fault_wait() const { return fault_wait_limit; }

    template <class Next>
    void write_raw(std::size_t offset, std::size_t n, Next next) {
        events.push_back("write " + std::to_string(n));
        if (fail_writes) {
            finish_attempt(record::wire_outcome::client_gone);
            return close_now();
        }
        wire.append(raw_, offset, n);
        next(*this);
    }

    template <class Next>
    void wait_then(faults::duration wait, Next next) {
        ++waits_;
        waited_ += wait;
        events.push_back("wait " + std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(wait).count()) +
                         "ms");
        pending_ = std::move(next);
    }

    void finish_attempt(record::wire_outcome o) {
        ASSERT_FALSE(outcome.has_value()) << "an attempt is journaled once";
        outcome = o;
        events.push_back("finish " + std::string{to_string(o)});
    }
    void reset_now() { events.emplace_back("reset"); }
    void close_now() { events.emplace_back("close_now"); }
    void do_graceful_close() { events.emplace_back("graceful_close"); }
    void start_hang(faults::duration limit) {
        events.push_back("hang " + std::to_string(std::chrono::duration_cast<std::chrono::seconds>(limit).count()) +
                         "s");
    }
    void do_read() { events.emplace_back("read"); }
    void refuse_stream() {
        events.emplace_back("refuse_stream");
        finish_attempt(record::wire_outcome::reset);
    }
    void go_away(bool processed) {
        events.emplace_back(processed ? "go_away processed" : "go_away unprocessed");
        finish_attempt(record::wire_outcome::closed);
    }

private:
    std::string head_;
    std::string body_;
    std::string raw_;
    std::function<void(basic_fake_connection&)> pending_;
    std::size_t waits_ = 0;
    faults::duration waited_{0};
};

using fake_connection = basic_fake_connection<true>;
using fake_stream = basic_fake_connection<false>;
using executor = action_executor<fake_connection>;
using events = std::vector<std::string>;

template <bool FramesByClose>
void run(basic_fake_connection<FramesByClose>& c, faults::action what,
         faults::commit_phase phase = faults::commit_phase::before) {
    action_executor<basic_fake_connection<FramesByClose>>::run(c, faults::fault_plan{std::move(what), phase});
}

constexpr auto after = faults::commit_phase::after;

// Every alternative of faults::action has a handler; anything else does not compile.
template <class Variant>
struct handles_all;
template <class... Actions>
struct handles_all<std::variant<Actions...>>
    : std::bool_constant<(std::is_invocable_v<const executor&, const Actions&> && ...)> {};
static_assert(handles_all<faults::action>::value);
struct unhandled_action {};
static_assert(!std::is_invocable_v<const executor&, const unhandled_action&>);

TEST(action_executor, a_goaway_tells_the_carrier_whether_the_service_ran_first) {
    fake_connection unprocessed;
    run(unprocessed, faults::drop_action{faults::drop_mode::go_away});
    EXPECT_EQ(unprocessed.commits, 0U);
    EXPECT_EQ(unprocessed.events, (std::vector<std::string>{"go_away unprocessed", "finish closed"}));
    fake_connection processed;
    run(processed, faults::drop_action{faults::drop_mode::go_away}, after);
    EXPECT_EQ(processed.commits, 1U);
    EXPECT_EQ(processed.events, (std::vector<std::string>{"service", "go_away processed", "finish closed"}));
}

TEST(action_executor, a_refused_stream_is_the_carriers_own_ending_before_the_commit) {
    fake_connection c;
    executor::run(c, faults::fault_plan{faults::drop_action{faults::drop_mode::refuse_stream}, faults::commit_phase::before});
    EXPECT_EQ(c.commits, 0U);
    EXPECT_EQ(c.events, (std::vector<std::string>{"refuse_stream", "finish reset"}));
}

TEST(action_executor, respond_before_commit_sends_the_fault_reply_without_running_the_service) {
    fake_connection c;
    run(c, faults::respond_action{503, {{"Retry-After", "2"}}, "busy"});
    EXPECT_EQ(c.commits, 0U);
    EXPECT_EQ(c.wire, "HTTP/1.1 503\r\nRetry-After: 2\r\nContent-Length: 4\r\n\r\nbusy");
    EXPECT_EQ(c.events, (events{"reply 503", "send", "finish responded"}));
}

TEST(action_executor, respond_after_commit_runs_the_service_and_discards_its_reply) {
    fake_connection c;
    run(c, faults::respond_action{500, {}, ""}, after);
    EXPECT_EQ(c.commits, 1U);
    EXPECT_EQ(c.wire, "HTTP/1.1 500\r\nContent-Length: 0\r\n\r\n");
    EXPECT_EQ(c.events, (events{"service", "reply 500", "send", "finish responded"}));
}

TEST(action_executor, delay_before_commit_runs_the_service_only_when_the_wait_ends) {
    fake_connection c;
    run(c, faults::delay_action{250ms});
    EXPECT_EQ(c.events, (events{"wait 250ms"}));
    EXPECT_EQ(c.commits, 0U);
    ASSERT_TRUE(c.fire());
    EXPECT_EQ(c.commits, 1U);
    EXPECT_EQ(c.wire, "HTTP/1.1 200\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\n0123456789");
    EXPECT_EQ(c.events, (events{"wait 250ms", "service", "reply 200", "send", "finish responded"}));
}

TEST(action_executor, delay_after_commit_runs_the_service_then_holds_its_reply) {
    fake_connection c;
    run(c, faults::delay_action{2s}, after);
    EXPECT_EQ(c.events, (events{"service", "reply 200", "wait 2000ms"}));
    EXPECT_TRUE(c.wire.empty());
    ASSERT_TRUE(c.fire());
    EXPECT_EQ(c.commits, 1U);
    EXPECT_EQ(c.events, (events{"service", "reply 200", "wait 2000ms", "send", "finish responded"}));
}

TEST(action_executor, drop_reset_and_close_journal_their_outcome_and_write_nothing) {
    fake_connection reset;
    run(reset, faults::drop_action{faults::drop_mode::reset});
    EXPECT_EQ(reset.events, (events{"finish reset", "reset"}));
    EXPECT_TRUE(reset.wire.empty());

    fake_connection closed;
    run(closed, faults::drop_action{faults::drop_mode::close}, after);
    EXPECT_EQ(closed.commits, 1U);
    EXPECT_EQ(closed.events, (events{"service", "finish closed", "graceful_close"}));
    EXPECT_TRUE(closed.wire.empty());
}

TEST(action_executor, drop_hang_leaves_the_attempt_open_until_the_hang_ends) {
    fake_connection c;
    run(c, faults::drop_action{faults::drop_mode::hang, 5s});
    EXPECT_EQ(c.events, (events{"hang 5s"}));
    EXPECT_FALSE(c.outcome.has_value());  // the session journals `hung` when the hang ends
    EXPECT_EQ(c.commits, 0U);
}

TEST(action_executor, slow_body_writes_the_reply_in_chunks_one_interval_apart) {
    fake_connection c;
    c.service_body = "abcdef";
    // 4-byte chunks at 8 bytes/s: one chunk per 500ms.
    run(c, faults::slow_body_action{8, 4});
    EXPECT_EQ(c.commits, 1U);
    const std::string reply = "HTTP/1.1 200\r\nContent-Type: text/plain\r\nContent-Length: 6\r\n\r\nabcdef";
    const std::size_t chunks = (reply.size() + 3) / 4;
    std::size_t fired = 0;
    while (c.fire()) ++fired;
    EXPECT_EQ(fired, chunks - 1);
    EXPECT_EQ(c.waits(), chunks - 1);
    EXPECT_EQ(c.wire, reply);
    EXPECT_EQ(c.outcome, record::wire_outcome::responded);
    ASSERT_GE(c.events.size(), 4U);
    EXPECT_EQ(c.events[2], "write 4");
    EXPECT_EQ(c.events[3], "wait 500ms");
    EXPECT_EQ(c.events.back(), "read");  // keep-alive: the next request
}

TEST(action_executor, slow_body_closes_after_the_last_chunk_without_keep_alive) {
    fake_connection c;
    c.keep_alive = false;
    run(c, faults::slow_body_action{1'000'000, 1'000'000});  // one chunk: no wait at all
    EXPECT_EQ(c.waits(), 0U);
    EXPECT_EQ(c.events.back(), "graceful_close");
    EXPECT_EQ(c.outcome, record::wire_outcome::responded);
}

TEST(action_executor, dribble_interval_treats_zero_as_one_and_caps_at_an_hour) {
    EXPECT_EQ(dribble_interval({8, 4}), faults::duration{500ms});
    EXPECT_EQ(dribble_interval({0, 0}), faults::duration{1s});
    EXPECT_EQ(dribble_interval({1, 1'000'000}), faults::duration{std::chrono::hours{1}});
}

TEST(action_executor, slow_body_pauses_shrink_so_the_whole_reply_ends_within_max_fault_wait) {
    fake_connection c;
    c.service_body = std::string(100, 'x');
    c.fault_wait_limit = 2s;
    // 1-byte chunks at 1 byte/s would take minutes for this reply; the pauses are cut to fit 2s.
    run(c, faults::slow_body_action{1, 1});
    while (c.fire()) {
    }
    EXPECT_EQ(c.waits(), c.wire.size() - 1);
    EXPECT_LE(c.waited(), faults::duration{2s});
    EXPECT_GT(c.waited(), faults::duration{1900ms});
    EXPECT_EQ(c.outcome, record::wire_outcome::responded);
}

TEST(action_executor, dribble_interval_keeps_the_rule_pause_when_the_reply_fits_max_fault_wait) {
    EXPECT_EQ(dribble_interval({8, 4}, 12, 1s), faults::duration{500ms});     // 2 pauses of 500ms: 1s
    EXPECT_EQ(dribble_interval({8, 4}, 16, 1s), faults::duration{1s} / 3);    // 3 pauses would be 1.5s
    EXPECT_EQ(dribble_interval({8, 4}, 4, 1ms), faults::duration{500ms});     // one chunk: no pause
}

TEST(action_executor, truncate_promises_the_whole_body_and_sends_part_of_it) {
    fake_connection c;
    run(c, faults::truncate_action{3, false});
    const std::string sent = "HTTP/1.1 200\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\n012";
    EXPECT_EQ(c.wire, sent);
    const std::string write = "write " + std::to_string(sent.size());
    EXPECT_EQ(c.events, (events{"service", "reply 200", write, "finish truncated", "graceful_close"}));
}

TEST(action_executor, truncate_keeps_at_least_one_byte_back_and_can_reset) {
    fake_connection c;
    run(c, faults::truncate_action{100, true});
    EXPECT_EQ(c.wire, "HTTP/1.1 200\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\n012345678");
    EXPECT_EQ(c.events.back(), "reset");
    EXPECT_EQ(c.outcome, record::wire_outcome::truncated);
}

TEST(action_executor, truncate_of_an_empty_body_promises_one_byte) {
    fake_connection c;
    c.service_body.clear();
    run(c, faults::truncate_action{0, false});
    EXPECT_EQ(c.wire, "HTTP/1.1 200\r\nContent-Type: text/plain\r\nContent-Length: 1\r\n\r\n");
    EXPECT_EQ(c.outcome, record::wire_outcome::truncated);
}

TEST(action_executor, tls_truncate_frames_the_body_by_the_close_and_leaves_out_close_notify) {
    fake_connection c;
    run(c, faults::truncate_action{4, false, true}, after);
    const std::string sent = "HTTP/1.1 200\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n0123";
    EXPECT_EQ(c.wire, sent);
    EXPECT_EQ(c.events, (events{"service", "reply 200 framed by close", "write " + std::to_string(sent.size()),
                                "finish truncated", "fin without close_notify"}));
    EXPECT_EQ(c.commits, 1U);
}

TEST(action_executor, tls_truncate_keeps_at_least_one_byte_back) {
    fake_connection c;
    run(c, faults::truncate_action{100, false, true}, after);
    EXPECT_EQ(c.wire, "HTTP/1.1 200\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n012345678");
}

TEST(action_executor, tls_truncate_without_tls_or_a_body_or_on_http2_is_a_truncate_and_says_so) {
    const std::string promised = "HTTP/1.1 200\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\n01";
    fake_connection plain;
    plain.secure = false;
    run(plain, faults::truncate_action{2, false, true}, after);
    EXPECT_EQ(plain.wire, promised);
    EXPECT_EQ(plain.events[1].rfind("not mapped: tls_truncate on a plain TCP connection", 0), 0U) << plain.events[1];
    EXPECT_EQ(plain.events.back(), "graceful_close");

    fake_stream stream;
    run(stream, faults::truncate_action{2, false, true}, after);
    EXPECT_EQ(stream.wire, promised);
    EXPECT_EQ(stream.events[1].rfind("not mapped: tls_truncate has no HTTP/2 form", 0), 0U) << stream.events[1];
    EXPECT_EQ(stream.outcome, record::wire_outcome::truncated);

    fake_connection empty;
    empty.service_body.clear();
    run(empty, faults::truncate_action{2, false, true}, after);
    EXPECT_EQ(empty.wire, "HTTP/1.1 200\r\nContent-Type: text/plain\r\nContent-Length: 1\r\n\r\n");
    EXPECT_EQ(empty.events.back(), "fin without close_notify");
    EXPECT_EQ(empty.outcome, record::wire_outcome::truncated);
}

TEST(action_executor, malformed_sends_its_bytes_then_closes) {
    fake_connection before;
    run(before, faults::malformed_action{"HTTP/9 ???\r\n\r\n"});
    EXPECT_EQ(before.commits, 0U);
    EXPECT_EQ(before.wire, "HTTP/9 ???\r\n\r\n");
    EXPECT_EQ(before.events, (events{"write 14", "finish malformed", "graceful_close"}));

    fake_connection after_commit;
    run(after_commit, faults::malformed_action{"x"}, after);
    EXPECT_EQ(after_commit.commits, 1U);
    EXPECT_EQ(after_commit.wire, "x");
}

TEST(action_executor, a_failed_write_journals_client_gone_once) {
    fake_connection c;
    c.fail_writes = true;
    run(c, faults::slow_body_action{8, 4});
    EXPECT_EQ(c.outcome, record::wire_outcome::client_gone);
    EXPECT_EQ(c.events.back(), "close_now");
    EXPECT_FALSE(c.fire());
}

}  // namespace
}  // namespace faultline::server::detail
