// Every fault kind observed through real sockets by a raw client, and its journal record (and for
// the listener-level ones, the server events of their windows).
#include "server_fixture.hpp"
#include "test_client.hpp"

#include <boost/asio/error.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

namespace faultline::server::testing {
namespace {

using namespace std::chrono_literals;
namespace asio = boost::asio;

std::string rule(std::string_view kind_and_keys, std::string_view path = "/*") {
    return "[[fault]]\nname = \"r\"\n" + std::string{kind_and_keys} + "\n[fault.match]\npath = \"" +
           std::string{path} + "\"\n";
}

// The one record of a journal (a copy: journals are usually temporaries here).
template <class Entry>
Entry only(const std::vector<Entry>& entries) {
    EXPECT_EQ(entries.size(), 1U);
    return entries.empty() ? Entry{} : entries.front();
}

TEST(faults_e2e, reset_after_read_is_a_connection_reset_and_commits_nothing) {
    test_server s{rule("kind = \"reset\"")};
    const auto reply = exchange(s.port(), make_request("POST", "/payments", "{}"));
    EXPECT_EQ(reply.read_error, asio::error::connection_reset);
    EXPECT_TRUE(reply.bytes.empty());
    const auto journal = s.journal();
    const auto r = only(journal);
    EXPECT_EQ(r.outcome, record::wire_outcome::reset);
    EXPECT_EQ(r.rule, "r");
    EXPECT_EQ(r.fault, "reset");
    EXPECT_EQ(r.effect, record::effect_kind::none);
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.response_ns, -1);
    EXPECT_EQ(s.context().effects.size(), 0U);
}

TEST(faults_e2e, close_is_eof_with_no_response) {
    test_server s{rule("kind = \"close\"")};
    const auto reply = exchange(s.port(), make_request("GET", "/x"));
    EXPECT_EQ(reply.read_error, asio::error::eof);
    EXPECT_TRUE(reply.bytes.empty());
    EXPECT_EQ(only(s.journal()).outcome, record::wire_outcome::closed);
}

TEST(faults_e2e, lost_response_commits_then_the_reply_never_arrives) {
    test_server s{rule("kind = \"lost_response\"\nthen = \"reset\"", "/payments")};
    const auto reply = exchange(s.port(), make_request("POST", "/payments", R"({"amount":5})"));
    EXPECT_EQ(reply.read_error, asio::error::connection_reset);
    EXPECT_TRUE(reply.bytes.empty());
    // The effect is in the ledger although the client saw nothing.
    EXPECT_EQ(s.context().effects.size(), 1U);
    const auto r = only(s.journal());
    EXPECT_EQ(r.effect, record::effect_kind::committed);
    EXPECT_EQ(r.outcome, record::wire_outcome::reset);
    EXPECT_EQ(s.context().effects.commits_for(r.operation), 1U);
}

TEST(faults_e2e, lost_response_then_retry_with_the_same_key_is_replayed_not_recommitted) {
    std::string rules{"[server]\nidempotency = \"keys\"\n"};
    rules += rule("kind = \"lost_response\"\nthen = \"close\"\n[fault.when]\nattempts = [1]", "/payments");
    test_server s{rules};
    const std::string req = make_request("POST", "/payments", R"({"amount":5})", {{"Idempotency-Key", "pay-1"}});
    const auto lost = exchange(s.port(), req);
    EXPECT_EQ(lost.read_error, asio::error::eof);
    EXPECT_TRUE(lost.bytes.empty());

    const auto retry = exchange(s.port(), req);
    const auto again = exchange(s.port(), req);
    ASSERT_TRUE(retry.parsed()) << retry.bytes;
    ASSERT_TRUE(again.parsed());
    EXPECT_EQ(retry.parsed()->result_int(), 201);
    EXPECT_EQ(retry.parsed()->body(), again.parsed()->body());
    EXPECT_NE(retry.parsed()->body().find("ch_1"), std::string::npos);

    EXPECT_EQ(s.context().effects.commits_for("pay-1"), 1U);
    const auto journal = s.journal();
    ASSERT_EQ(journal.size(), 3U);
    EXPECT_EQ(journal[0].effect, record::effect_kind::committed);
    EXPECT_EQ(journal[0].outcome, record::wire_outcome::closed);
    EXPECT_EQ(journal[1].effect, record::effect_kind::replayed);
    EXPECT_EQ(journal[1].attempt, 2U);
    EXPECT_EQ(journal[2].effect, record::effect_kind::replayed);
}

TEST(faults_e2e, status_with_retry_after_in_seconds_is_sent_and_journaled) {
    test_server s{rule("kind = \"status\"\nstatus = 503\nretry_after = \"2s\"\nbody = \"busy\"")};
    const auto reply = exchange(s.port(), make_request("GET", "/x"));
    const auto res = reply.parsed();
    ASSERT_TRUE(res) << reply.bytes;
    EXPECT_EQ(res->result_int(), 503);
    EXPECT_EQ((*res)[http::field::retry_after], "2");
    EXPECT_EQ(res->body(), "busy");
    const auto r = only(s.journal());
    EXPECT_EQ(r.status, 503);
    EXPECT_EQ(r.retry_after_ms, 2000);
    EXPECT_EQ(r.outcome, record::wire_outcome::responded);
    EXPECT_EQ(r.fault, "status");
}

TEST(faults_e2e, status_with_retry_after_as_http_date) {
    test_server s{rule("kind = \"status\"\nstatus = 429\nretry_after = \"3s\"\nretry_after_format = \"http_date\"")};
    const auto reply = exchange(s.port(), make_request("GET", "/x"));
    const auto res = reply.parsed();
    ASSERT_TRUE(res) << reply.bytes;
    EXPECT_EQ(res->result_int(), 429);
    EXPECT_NE(std::string{(*res)[http::field::retry_after]}.find("GMT"), std::string::npos);
    const auto r = only(s.journal());
    ASSERT_TRUE(r.retry_after_ms);
    // An HTTP-date has whole seconds: the kind counts 3 s from the next whole second.
    EXPECT_GE(*r.retry_after_ms, 3000);
    EXPECT_LE(*r.retry_after_ms, 4000);
}

TEST(faults_e2e, status_after_commit_commits_then_answers_the_error) {
    test_server s{rule("kind = \"status\"\nstatus = 500\nphase = \"after\"", "/payments")};
    const auto reply = exchange(s.port(), make_request("POST", "/payments", "{}"));
    ASSERT_TRUE(reply.parsed());
    EXPECT_EQ(reply.parsed()->result_int(), 500);
    EXPECT_EQ(s.context().effects.size(), 1U);
    EXPECT_EQ(only(s.journal()).effect, record::effect_kind::committed);
}

TEST(faults_e2e, hang_outlasts_the_client_which_times_out) {
    test_server s{rule("kind = \"hang\"\nlimit = \"30s\"")};
    const auto reply = exchange(s.port(), make_request("GET", "/x"), 200ms);
    EXPECT_TRUE(reply.timed_out);
    EXPECT_TRUE(reply.bytes.empty());
    // The client has closed; stopping the server ends the attempt either way.
    const auto r = only(s.journal());
    EXPECT_EQ(r.outcome, record::wire_outcome::hung);
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.response_ns, -1);
}

TEST(faults_e2e, hang_ends_at_its_limit_with_a_close) {
    test_server s{rule("kind = \"hang\"\nlimit = \"20ms\"")};
    const auto reply = exchange(s.port(), make_request("GET", "/x"));
    EXPECT_FALSE(reply.timed_out);
    EXPECT_EQ(reply.read_error, asio::error::eof);
    EXPECT_TRUE(reply.bytes.empty());
    const auto r = only(s.journal());
    EXPECT_EQ(r.outcome, record::wire_outcome::hung);
    EXPECT_GE(r.finished_ns - r.request_ns, std::chrono::nanoseconds{20ms}.count());
}

TEST(faults_e2e, slow_body_arrives_whole_but_paced) {
    test_server s{rule("kind = \"slow_body\"\nbytes_per_second = 2000\nchunk_bytes = 20")};
    const auto reply = exchange(s.port(), make_request("GET", "/x"));
    const auto res = reply.parsed();
    ASSERT_TRUE(res) << reply.bytes;
    EXPECT_EQ(res->result_int(), 200);
    EXPECT_EQ(res->body(), "ok");
    const auto r = only(s.journal());
    const auto w = only(s.wire());
    EXPECT_EQ(r.outcome, record::wire_outcome::responded);
    EXPECT_EQ(w.bytes_out, reply.bytes.size());
    // ceil(bytes / 20) chunks, 10 ms apart: the timer never fires early.
    const auto chunks = static_cast<std::int64_t>((reply.bytes.size() + 19) / 20);
    EXPECT_GE(r.finished_ns - r.response_ns, (chunks - 1) * std::chrono::nanoseconds{10ms}.count());
}

TEST(faults_e2e, truncate_promises_more_than_it_sends) {
    test_server s{"[[fault]]\nkind = \"truncate\"\nbody_bytes = 3\n[fault.match]\nmethod = \"GET\"\n"};
    ASSERT_TRUE(exchange(s.port(), make_request("PUT", "/kv/k", "0123456789")).parsed());
    const auto reply = exchange(s.port(), make_request("GET", "/kv/k"));
    EXPECT_EQ(reply.read_error, asio::error::eof);
    EXPECT_FALSE(reply.parsed());
    const auto head_end = reply.bytes.find("\r\n\r\n");
    ASSERT_NE(head_end, std::string::npos) << reply.bytes;
    EXPECT_NE(reply.bytes.find("Content-Length: 10"), std::string::npos) << reply.bytes;
    EXPECT_EQ(reply.bytes.substr(head_end + 4), "012");
    const auto journal = s.journal();
    ASSERT_EQ(journal.size(), 2U);
    EXPECT_EQ(journal[1].outcome, record::wire_outcome::truncated);
    EXPECT_EQ(journal[1].status, 200);
    EXPECT_EQ(s.wire().at(1).bytes_out, reply.bytes.size());
}

TEST(faults_e2e, reset_mid_response_cuts_the_body_with_an_rst) {
    test_server s{rule("kind = \"reset\"\nphase = \"mid_response\"\nbody_bytes = 1")};
    const auto reply = exchange(s.port(), make_request("GET", "/x"));
    EXPECT_FALSE(reply.parsed());
    EXPECT_TRUE(reply.read_error == asio::error::connection_reset || reply.read_error == asio::error::eof)
        << reply.read_error.message();
    EXPECT_EQ(only(s.journal()).outcome, record::wire_outcome::truncated);
}

TEST(faults_e2e, malformed_sends_garbage_instead_of_a_status_line) {
    test_server s{rule("kind = \"malformed\"\nbytes = \"NOT-HTTP\\r\\n\"")};
    const auto reply = exchange(s.port(), make_request("GET", "/x"));
    EXPECT_EQ(reply.bytes, "NOT-HTTP\r\n");
    EXPECT_FALSE(reply.parsed());
    const auto r = only(s.journal());
    const auto w = only(s.wire());
    EXPECT_EQ(r.outcome, record::wire_outcome::malformed);
    EXPECT_EQ(w.bytes_out, 10U);
}

TEST(faults_e2e, refuse_resets_the_connection_on_accept) {
    test_server s{"[[fault]]\nkind = \"refuse\"\n[fault.when]\nfirst = 1\n"};
    const auto refused = exchange(s.port(), make_request("GET", "/x"));
    EXPECT_TRUE(refused.was_reset()) << "connect: " << refused.connect_error.message()
                                     << ", write: " << refused.write_error.message()
                                     << ", read: " << refused.read_error.message();
    EXPECT_TRUE(refused.bytes.empty());
    // Only the first connection: the next one is served.
    const auto served = exchange(s.port(), make_request("GET", "/x"));
    ASSERT_TRUE(served.parsed());
    EXPECT_EQ(s.engine().counters().refused, 1U);
    EXPECT_EQ(s.journal().size(), 1U);  // a refused connection carries no attempt
}

// The server events of kind listener_closed / listener_reopened, in order.
std::vector<record::server_event> listener_events(test_server& s) {
    s.finish();
    std::vector<record::server_event> out;
    for (record::server_event& e : s.context().records.events()) {
        if (e.kind == record::server_event_kind::listener_closed || e.kind == record::server_event_kind::listener_reopened) {
            out.push_back(std::move(e));
        }
    }
    return out;
}

std::uint64_t fired(test_server& s, std::string_view rule) {
    for (const auto& [name, count] : s.context().engine.counters().fired_by_rule) {
        if (name == rule) return count;
    }
    return 0;
}

TEST(faults_e2e, refuse_closed_port_refuses_connects_from_the_start) {
    test_server s{"[[fault]]\nname = \"closed\"\nkind = \"refuse\"\nhow = \"closed_port\"\n[fault.when]\nfor = \"1h\"\n"};
    // The window holds from the start: the port was switched before it accepted anything.
    const auto refused = exchange(s.port(), make_request("GET", "/x"));
    EXPECT_EQ(refused.connect_error, asio::error::connection_refused) << refused.connect_error.message();
    EXPECT_EQ(fired(s, "closed"), 1U);
    EXPECT_TRUE(s.journal().empty());
    const auto events = listener_events(s);
    ASSERT_EQ(events.size(), 1U);
    EXPECT_EQ(events[0].kind, record::server_event_kind::listener_closed);
    EXPECT_EQ(events[0].rule, "closed");
    EXPECT_EQ(events[0].detail,
              "closed_port: the port is bound and not listening: connects are refused (ECONNREFUSED)");
}

TEST(faults_e2e, refuse_closed_port_serves_again_after_its_window) {
    constexpr auto window = 600ms;
    test_server s{"[[fault]]\nname = \"closed\"\nkind = \"refuse\"\nhow = \"closed_port\"\nmin_fired = 1\n"
                  "[fault.when]\nfor = \"600ms\"\n"};
    const auto window_end = s.engine().run_start() + window;
    // A client that retries refused connects every 50 ms, until one is served.
    struct connect_try {
        std::chrono::steady_clock::time_point started;
        std::chrono::steady_clock::time_point ended;
        boost::system::error_code error;
    };
    std::vector<connect_try> tries;
    asio::io_context io;
    asio::ip::tcp::socket client{io};
    asio::steady_timer pause{io};
    std::function<void()> try_connect = [&] {
        client = asio::ip::tcp::socket{io};
        tries.push_back({std::chrono::steady_clock::now(), {}, {}});
        client.async_connect({asio::ip::make_address("127.0.0.1"), s.port()}, [&](boost::system::error_code ec) {
            tries.back().ended = std::chrono::steady_clock::now();
            tries.back().error = ec;
            if (!ec || tries.size() >= 100) return;
            pause.expires_after(50ms);
            pause.async_wait([&](boost::system::error_code) { try_connect(); });
        });
    };
    try_connect();
    io.run_for(10s);
    ASSERT_FALSE(tries.empty());
    ASSERT_FALSE(tries.back().error) << tries.back().error.message() << " after " << tries.size() << " connects";
    for (std::size_t i = 0; i + 1 < tries.size(); ++i) {
        EXPECT_EQ(tries[i].error, asio::error::connection_refused) << i << ": " << tries[i].error.message();
    }
    // Nothing is served before the window ends; a connect that ended inside it was refused.
    EXPECT_GE(tries.back().ended, window_end);
    if (tries.front().ended < window_end) {
        EXPECT_GT(tries.size(), 1U);
    }
    client.close();
    EXPECT_TRUE(exchange(s.port(), make_request("GET", "/x")).parsed());
    EXPECT_EQ(fired(s, "closed"), 1U);
    const auto events = listener_events(s);
    ASSERT_EQ(events.size(), 2U);
    EXPECT_EQ(events[0].kind, record::server_event_kind::listener_closed);
    EXPECT_EQ(events[1].kind, record::server_event_kind::listener_reopened);
    EXPECT_EQ(events[1].rule, "closed");
    EXPECT_EQ(events[1].detail, "closed_port over: listening and accepting again");
    EXPECT_GE(events[1].at_ns, std::chrono::nanoseconds{window}.count());
    EXPECT_LT(events[0].seq, events[1].seq);
}

TEST(faults_e2e, refuse_unanswered_syn_leaves_a_connect_hanging_until_the_window_ends) {
    test_server s{"[[fault]]\nname = \"silent\"\nkind = \"refuse\"\nhow = \"unanswered_syn\"\n"};
    asio::io_context io;
    asio::ip::tcp::socket client{io};
    boost::system::error_code connect_error = asio::error::would_block;
    client.async_connect({asio::ip::make_address("127.0.0.1"), s.port()},
                         [&](boost::system::error_code ec) { connect_error = ec; });
    io.run_for(300ms);
    EXPECT_EQ(connect_error, asio::error::would_block) << "the connect ended: " << connect_error.message();

    // The window ends with the rule: the client's kernel resends its SYN and the connect completes.
    EXPECT_TRUE(s.context().engine.remove("silent"));
    io.restart();
    io.run_for(5s);
    ASSERT_FALSE(connect_error) << connect_error.message();
    std::string bytes;
    boost::system::error_code read_error;
    asio::write(client, asio::buffer(make_request("GET", "/x")));
    asio::async_read(client, asio::dynamic_buffer(bytes),
                     [&](boost::system::error_code ec, std::size_t) { read_error = ec; });
    io.restart();
    io.run_for(5s);
    EXPECT_EQ(read_error, asio::error::eof) << read_error.message();
    EXPECT_TRUE(parse_response(bytes)) << bytes;
    EXPECT_EQ(s.journal().size(), 1U);
    const auto events = listener_events(s);
    ASSERT_EQ(events.size(), 2U);
    EXPECT_EQ(events[0].kind, record::server_event_kind::listener_closed);
    EXPECT_EQ(events[0].rule, "silent");
    EXPECT_EQ(events[0].detail,
              "unanswered_syn: the listen queue is held full and not accepted: SYNs go unanswered");
    EXPECT_EQ(events[1].kind, record::server_event_kind::listener_reopened);
    EXPECT_EQ(events[1].rule, "silent");
    EXPECT_EQ(events[1].detail, "unanswered_syn over: listening and accepting again");
}

TEST(faults_e2e, close_before_read_is_a_fin_on_accept) {
    test_server s{"[[fault]]\nkind = \"close\"\nphase = \"before_read\"\n"};
    const auto reply = exchange(s.port(), make_request("GET", "/x"));
    EXPECT_EQ(reply.read_error, asio::error::eof);
    EXPECT_TRUE(reply.bytes.empty());
    EXPECT_TRUE(s.journal().empty());
}

TEST(faults_e2e, overload_refuses_beyond_capacity) {
    // Two attempts fit; the admitted ones then hang (the next rule), holding their slots.
    const std::string rules = R"(
[[fault]]
name = "capacity"
kind = "overload"
max_in_flight = 2
retry_after = "1s"

[[fault]]
name = "stall"
kind = "hang"
limit = "30s"
)";
    server_options options;
    options.threads = 2;
    test_server s{rules, 7, options};
    std::vector<std::string> requests;
    for (int i = 0; i < 10; ++i) requests.push_back(make_request("GET", "/work/" + std::to_string(i)));
    const auto replies = exchange_concurrently(s.port(), requests, 1500ms);
    int rejected = 0;
    int timed_out = 0;
    for (const auto& reply : replies) {
        if (reply.timed_out) {
            ++timed_out;
            continue;
        }
        const auto res = reply.parsed();
        ASSERT_TRUE(res) << reply.bytes;
        EXPECT_EQ(res->result_int(), 503);
        EXPECT_EQ((*res)[http::field::retry_after], "1");
        ++rejected;
    }
    EXPECT_EQ(timed_out, 2);
    EXPECT_EQ(rejected, 8);
    const auto journal = s.journal();
    EXPECT_EQ(std::count_if(journal.begin(), journal.end(), [](const auto& r) { return r.fault == "overload"; }), 8);
    EXPECT_EQ(std::count_if(journal.begin(), journal.end(), [](const auto& r) { return r.outcome == record::wire_outcome::hung; }),
              2);
}

TEST(faults_e2e, delay_shows_in_the_journal_times) {
    test_server s{rule("kind = \"delay\"\nwait = \"30ms\"")};
    const auto reply = exchange(s.port(), make_request("GET", "/x"));
    ASSERT_TRUE(reply.parsed());
    const auto r = only(s.journal());
    EXPECT_EQ(r.fault, "delay");
    EXPECT_EQ(r.outcome, record::wire_outcome::responded);
    EXPECT_GE(r.response_ns - r.request_ns, std::chrono::nanoseconds{30ms}.count());
}

// A herd of first attempts, one operation each (distinct bodies), for the barrier tests.
std::vector<std::string> herd_requests(int n) {
    std::vector<std::string> out;
    for (int i = 0; i < n; ++i) out.push_back(make_request("PUT", "/kv/k" + std::to_string(i), "v" + std::to_string(i)));
    return out;
}

template <class Entry>
std::int64_t spread(const std::vector<Entry>& entries, std::int64_t Entry::*time) {
    const auto [lo, hi] = std::minmax_element(entries.begin(), entries.end(),
                                              [time](const auto& a, const auto& b) { return a.*time < b.*time; });
    return (*hi).*time - (*lo).*time;
}

std::chrono::nanoseconds spread(const std::vector<raw_reply>& replies) {
    const auto [lo, hi] = std::minmax_element(replies.begin(), replies.end(),
                                              [](const auto& a, const auto& b) { return a.ended < b.ended; });
    return hi->ended - lo->ended;
}

// Clients that reach the server 60 ms apart all get their 503 at one instant: the N-th releases the
// group. Two server threads, so the release crosses threads.
TEST(faults_e2e, barrier_releases_a_staggered_herd_at_once) {
    server_options options;
    options.threads = 2;
    test_server s{"[[fault]]\nname = \"herd\"\nkind = \"status\"\nstatus = 503\n[fault.when]\nattempts = [1]\n"
                  "barrier = 4\nbarrier_timeout = \"1h\"\n",
                  7, options};
    const auto replies = exchange_staggered(s.port(), herd_requests(4), 60ms);
    for (const auto& reply : replies) {
        ASSERT_TRUE(reply.parsed()) << reply.bytes;
        EXPECT_EQ(reply.parsed()->result_int(), 503);
    }
    const auto journal = s.journal();
    ASSERT_EQ(journal.size(), 4U);
    // Arrivals 180 ms apart from first to last (less whatever the client timers lag), one release.
    EXPECT_GE(spread(journal, &record::journal_record::request_ns), std::chrono::nanoseconds{150ms}.count());
    EXPECT_LT(spread(journal, &record::journal_record::response_ns), std::chrono::nanoseconds{20ms}.count());
    EXPECT_LT(spread(replies), 20ms);
    for (const auto& r : journal) {
        EXPECT_EQ(r.rule, "herd");
        EXPECT_EQ(r.status, 503);
        EXPECT_EQ(r.outcome, record::wire_outcome::responded);
    }
}

// A client that gave up on its attempt (closed the connection: its own timeout ran out) before the
// reply asking it to wait was written never read that Retry-After: the attempt is client_gone, its
// 503 and Retry-After kept as evidence. One that only half-closed after its request still reads the
// reply: responded. The barrier holds the first client's reply until the second one comes.
raw_reply first_client_leaves_then_second_releases(test_server& s, bool close_fully) {
    asio::io_context io;
    asio::ip::tcp::socket first{io};
    first.connect({asio::ip::make_address("127.0.0.1"), s.port()});
    asio::write(first, asio::buffer(make_request("PUT", "/kv/a", "1")));
    if (close_fully) {
        first.close();
    } else {
        first.shutdown(asio::ip::tcp::socket::shutdown_send);
    }
    const auto second = exchange(s.port(), make_request("PUT", "/kv/b", "2"));
    EXPECT_TRUE(second.parsed()) << second.bytes;
    raw_reply reply;
    if (!close_fully) {
        std::string bytes;
        boost::system::error_code ec;
        asio::read(first, asio::dynamic_buffer(bytes), ec);  // to the server's close
        reply.bytes = bytes;
    }
    return reply;
}

constexpr std::string_view held_503 =
    "[[fault]]\nkind = \"status\"\nstatus = 503\nretry_after = \"1s\"\n[fault.when]\nbarrier = 2\n"
    "barrier_timeout = \"10s\"\n";

TEST(faults_e2e, a_retry_after_reply_to_a_client_that_had_closed_is_client_gone) {
    test_server s{std::string{held_503}};
    first_client_leaves_then_second_releases(s, true);
    const auto journal = s.journal();
    ASSERT_EQ(journal.size(), 2U);
    const auto first = std::find_if(journal.begin(), journal.end(), [](const auto& r) { return r.target.view() == "/kv/a"; });
    ASSERT_NE(first, journal.end());
    EXPECT_EQ(first->outcome, record::wire_outcome::client_gone);
    EXPECT_EQ(first->status, 503);
    EXPECT_EQ(first->retry_after_ms, 1000);
    const auto second = std::find_if(journal.begin(), journal.end(), [](const auto& r) { return r.target.view() == "/kv/b"; });
    ASSERT_NE(second, journal.end());
    EXPECT_EQ(second->outcome, record::wire_outcome::responded);
}

TEST(faults_e2e, a_retry_after_reply_to_a_half_closed_client_is_read_and_responded) {
    test_server s{std::string{held_503}};
    const auto first_reply = first_client_leaves_then_second_releases(s, false);
    ASSERT_TRUE(first_reply.parsed()) << first_reply.bytes;
    EXPECT_EQ(first_reply.parsed()->result_int(), 503);
    const auto journal = s.journal();
    ASSERT_EQ(journal.size(), 2U);
    for (const auto& r : journal) EXPECT_EQ(r.outcome, record::wire_outcome::responded) << r.target.view();
}

// Fewer clients than the barrier's count: the timeout, counted from the first arrival, releases those
// that came, together.
TEST(faults_e2e, barrier_timeout_releases_a_short_herd) {
    test_server s{"[[fault]]\nkind = \"status\"\nstatus = 503\n[fault.when]\nbarrier = 5\nbarrier_timeout = \"300ms\"\n"};
    const auto replies = exchange_staggered(s.port(), herd_requests(2), 50ms);
    for (const auto& reply : replies) {
        ASSERT_TRUE(reply.parsed()) << reply.bytes;
        EXPECT_EQ(reply.parsed()->result_int(), 503);
    }
    const auto journal = s.journal();
    ASSERT_EQ(journal.size(), 2U);
    const std::int64_t first_arrival = std::min(journal[0].request_ns, journal[1].request_ns);
    for (const auto& r : journal) {
        EXPECT_GE(r.response_ns - first_arrival, std::chrono::nanoseconds{300ms}.count());
        EXPECT_LT(r.response_ns - first_arrival, std::chrono::nanoseconds{1s}.count());
    }
    EXPECT_LT(spread(journal, &record::journal_record::response_ns), std::chrono::nanoseconds{20ms}.count());
}

// Stopping the server releases a held attempt at once: it gets its fault, not an hour's wait.
TEST(faults_e2e, server_stop_releases_held_attempts) {
    test_server s{"[[fault]]\nkind = \"status\"\nstatus = 503\n[fault.when]\nbarrier = 5\nbarrier_timeout = \"1h\"\n"};
    connection c{s.port()};
    ASSERT_TRUE(c.connected());
    EXPECT_TRUE(c.round_trip(make_request("GET", "/x"), 200ms).timed_out);
    s.finish();
    const auto reply = c.read_response(1s);
    ASSERT_TRUE(reply.parsed()) << reply.bytes;
    EXPECT_EQ(reply.parsed()->result_int(), 503);
    const auto r = only(s.journal());
    EXPECT_EQ(r.status, 503);
    EXPECT_EQ(r.outcome, record::wire_outcome::responded);
    // Held from its arrival until the stop, which came after the client's 200 ms.
    EXPECT_GE(r.response_ns - r.request_ns, std::chrono::nanoseconds{150ms}.count());
}

}  // namespace
}  // namespace faultline::server::testing
