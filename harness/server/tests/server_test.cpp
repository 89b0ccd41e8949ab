// The server engine without faults: serving the model, keep-alive, the journal's fields, client
// garbage, limits, stopping, loopback only, seeded determinism across thread counts, and the
// idempotency layer under concurrent attempts.
#include "server_fixture.hpp"
#include "test_client.hpp"

#include "faultline/record/journal_json.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <utility>

namespace faultline::server::testing {
namespace {

using namespace std::chrono_literals;
namespace asio = boost::asio;

TEST(server, serves_the_model_and_journals_the_attempt) {
    test_server s{""};
    const auto reply = exchange(s.port(), make_request("GET", "/hello"));
    const auto res = reply.parsed();
    ASSERT_TRUE(res) << reply.bytes;
    EXPECT_EQ(res->result_int(), 200);
    EXPECT_EQ(res->body(), "ok");
    EXPECT_EQ((*res)[http::field::server], "faultline");

    const auto journal = s.journal();
    ASSERT_EQ(journal.size(), 1U);
    const record::journal_record& r = journal[0];
    EXPECT_EQ(r.seq, 1U);
    EXPECT_EQ(r.connection, 1U);
    EXPECT_EQ(r.connection_request, 1U);
    EXPECT_EQ(r.method, "GET");
    EXPECT_EQ(r.target, "/hello");
    EXPECT_EQ(r.identity, record::identity_source::request_hash);
    EXPECT_EQ(r.operation, to_hex(request_hash("GET", "/hello", "")));
    EXPECT_EQ(r.attempt, 1U);
    EXPECT_EQ(r.outcome, record::wire_outcome::responded);
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.effect, record::effect_kind::unmatched);  // no endpoint declares /hello: a read, answered "ok"
    EXPECT_TRUE(r.rule.empty());
    EXPECT_TRUE(r.fault.empty());
    const auto wire = s.wire();
    ASSERT_EQ(wire.size(), 1U);
    const record::wire_detail& w = wire[0];
    EXPECT_EQ(w.seq, r.seq);
    EXPECT_EQ(w.bytes_in, make_request("GET", "/hello").size());
    EXPECT_EQ(w.bytes_out, reply.bytes.size());
    EXPECT_LE(w.accepted_ns, r.request_ns);
    EXPECT_LE(r.request_ns, r.response_ns);
    EXPECT_LE(r.response_ns, r.finished_ns);
}

TEST(server, keep_alive_counts_attempts_of_one_operation) {
    test_server s{""};
    connection c{s.port()};
    ASSERT_TRUE(c.connected());
    const std::string req = make_request("POST", "/payments", R"({"amount":100})", {}, true);
    const auto first = c.round_trip(req).parsed();
    const auto second = c.round_trip(req).parsed();
    ASSERT_TRUE(first && second);
    EXPECT_EQ(first->result_int(), 201);
    EXPECT_EQ(second->result_int(), 201);
    c.close();

    const auto journal = s.journal();
    ASSERT_EQ(journal.size(), 2U);
    EXPECT_EQ(journal[0].connection, journal[1].connection);
    // The retry went out on the kept-alive connection: its second request.
    EXPECT_EQ(journal[0].connection_request, 1U);
    EXPECT_EQ(journal[1].connection_request, 2U);
    EXPECT_EQ(journal[0].operation, journal[1].operation);
    EXPECT_EQ(journal[0].attempt, 1U);
    EXPECT_EQ(journal[1].attempt, 2U);
    EXPECT_EQ(journal[0].effect, record::effect_kind::committed);
    EXPECT_EQ(journal[1].effect, record::effect_kind::committed);
    // A naive server (idempotency off): the retry is a second charge.
    EXPECT_EQ(s.context().effects.commits_for(journal[0].operation), 2U);
    EXPECT_EQ(s.context().effects.double_effects().size(), 1U);
}

// What a run frees once its server has stopped: the service's own state, not the evidence.
TEST(server, releasing_the_service_state_keeps_the_journal_and_the_ledger) {
    test_server s{"[server]\nidempotency = \"keys\"\n"};
    const std::string req = make_request("POST", "/payments", R"({"amount":5})", {{"Idempotency-Key", "pay-1"}});
    ASSERT_TRUE(exchange(s.port(), req).parsed());
    ASSERT_TRUE(exchange(s.port(), req).parsed());
    s.finish();
    server_context& context = s.context();
    ASSERT_EQ(context.idempotency.stored(), 1U);
    ASSERT_EQ(context.model.charge_count(), 1U);
    ASSERT_EQ(context.attempts.operations(), 1U);
    context.release_service_state();
    EXPECT_EQ(context.idempotency.stored(), 0U);
    EXPECT_EQ(context.model.charge_count(), 0U);
    EXPECT_EQ(context.attempts.operations(), 0U);
    const auto journal = s.journal();
    ASSERT_EQ(journal.size(), 2U);
    EXPECT_EQ(journal[1].effect, record::effect_kind::replayed);
    EXPECT_EQ(context.effects.size(), 1U);
}

TEST(server, answers_pipelined_requests_in_order) {
    test_server s{""};
    connection c{s.port()};
    ASSERT_TRUE(c.connected());
    // More than the server serves inline before yielding, all in one write.
    constexpr int count = 12;
    std::string burst;
    for (int i = 0; i < count; ++i) burst += make_request("PUT", "/kv/k" + std::to_string(i), std::to_string(i), {}, true);
    auto reply = c.round_trip(burst);
    for (int i = 0; i < count; ++i) {
        const auto res = reply.parsed();
        ASSERT_TRUE(res) << "response " << i << ": " << reply.bytes;
        EXPECT_EQ(res->result_int(), 200);
        EXPECT_NE(res->body().find("\"k" + std::to_string(i) + "\""), std::string::npos) << res->body();
        if (i + 1 < count) reply = c.read_response();
    }
    c.close();
    const auto journal = s.journal();
    ASSERT_EQ(journal.size(), static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) EXPECT_EQ(journal[static_cast<std::size_t>(i)].target, "/kv/k" + std::to_string(i));
}

TEST(server, records_attempt_and_deadline_headers_as_sent) {
    test_server s{""};
    exchange(s.port(), make_request("GET", "/a", "", {{"Faultline-Attempt", "3"}, {"Faultline-Deadline-Ms", "250"}}));
    exchange(s.port(), make_request("GET", "/b", "",
                                    {{"x-envoy-attempt-count", "2"},
                                     {"x-envoy-expected-rq-timeout-ms", "900"},
                                     {"grpc-previous-rpc-attempts", "1"}}));
    exchange(s.port(), make_request("GET", "/c", "", {{"Faultline-Deadline-Ms", "soon"}}));
    auto journal = s.journal();
    ASSERT_EQ(journal.size(), 3U);
    std::sort(journal.begin(), journal.end(), [](const auto& a, const auto& b) { return a.target < b.target; });
    EXPECT_EQ(journal[0].attempt_header, "3");
    EXPECT_EQ(journal[0].deadline_ms, 250);
    EXPECT_FALSE(journal[0].previous_attempts);
    EXPECT_EQ(journal[1].attempt_header, "2");
    EXPECT_EQ(journal[1].deadline_ms, 900);
    EXPECT_EQ(journal[1].previous_attempts, "1");
    EXPECT_FALSE(journal[2].attempt_header);
    EXPECT_FALSE(journal[2].deadline_ms);  // not a number: not a deadline
}

TEST(server, client_garbage_gets_400_and_close_and_the_server_goes_on) {
    test_server s{""};
    const auto bad = exchange(s.port(), "THIS IS NOT HTTP\r\n\r\n");
    const auto res = bad.parsed();
    ASSERT_TRUE(res) << bad.bytes;
    EXPECT_EQ(res->result_int(), 400);
    EXPECT_NE(res->body().find("bad request"), std::string::npos);
    EXPECT_FALSE(res->keep_alive());

    const auto good = exchange(s.port(), make_request("GET", "/"));
    ASSERT_TRUE(good.parsed());
    EXPECT_EQ(good.parsed()->result_int(), 200);
    EXPECT_EQ(s.engine().counters().bad_requests, 1U);
    EXPECT_EQ(s.journal().size(), 1U);  // garbage is not an attempt
}

TEST(server, body_over_the_limit_gets_413) {
    server_options options;
    options.body_limit = 16;
    test_server s{"", 7, options};
    const auto reply = exchange(s.port(), make_request("POST", "/payments", std::string(64, 'x')));
    ASSERT_TRUE(reply.parsed()) << reply.bytes;
    EXPECT_EQ(reply.parsed()->result_int(), 413);
    EXPECT_TRUE(s.journal().empty());
    EXPECT_EQ(s.context().effects.size(), 0U);
}

TEST(server, refuses_to_bind_beyond_loopback_unless_asked) {
    server_context context{{}, {}, 1};
    server_options options;
    options.address = "0.0.0.0";
    server s{context, options};
    EXPECT_TRUE(s.start());
}

TEST(server, stop_closes_idle_connections_and_flushes_the_journal_file) {
    const auto path =
        std::filesystem::temp_directory_path() / ("faultline_server_test_" + std::to_string(::getpid()) + ".jsonl");
    journal_options journal;
    journal.path = path.string();
    test_server s{"", 7, {}, journal};
    connection idle{s.port()};
    ASSERT_TRUE(idle.connected());
    const auto reply = idle.round_trip(make_request("GET", "/x", "", {}, true));
    ASSERT_TRUE(reply.parsed());
    s.finish();  // returns although the client keeps its connection open
    const auto after = idle.read_response(1s);
    EXPECT_FALSE(after.timed_out);
    EXPECT_EQ(after.read_error, asio::error::eof);

    const auto file = record::read_jsonl(path.string());
    EXPECT_TRUE(file.ok());
    ASSERT_EQ(file.records.size(), 1U);
    EXPECT_EQ(file.records[0].target, "/x");
    std::filesystem::remove(path);
}

TEST(server, the_control_port_serves_only_the_control_api) {
    server_options options;
    options.control_port = 0;
    test_server s{"", 7, options};
    ASSERT_TRUE(s.engine().control_port());
    const auto health = exchange(*s.engine().control_port(), make_request("GET", "/__faultline/health"));
    ASSERT_TRUE(health.parsed());
    EXPECT_EQ(health.parsed()->result_int(), 200);
    const auto other = exchange(*s.engine().control_port(), make_request("GET", "/payments/ch_1"));
    ASSERT_TRUE(other.parsed());
    EXPECT_EQ(other.parsed()->result_int(), 404);
    EXPECT_TRUE(s.journal().empty());
}

// (operation, attempt) -> fault applied ("" for none), from a journal.
std::map<std::pair<std::string, std::uint32_t>, std::string> fault_map(const std::vector<record::journal_record>& journal) {
    std::map<std::pair<std::string, std::uint32_t>, std::string> out;
    for (const auto& r : journal) out[{r.operation.str(), r.attempt}] = r.rule + "/" + r.fault;
    return out;
}

TEST(server, same_seed_same_faults_whatever_the_threads_and_the_order) {
    constexpr std::string_view rules = R"(
[[fault]]
name = "flaky"
kind = "status"
status = 503
[fault.when]
probability = 0.4

[[fault]]
name = "slow"
kind = "delay"
wait = "1ms"
[fault.when]
probability = 0.3
)";
    constexpr int operations = 30;
    constexpr int attempts = 3;
    std::vector<std::string> requests;
    for (int op = 0; op < operations; ++op) {
        for (int a = 0; a < attempts; ++a) {
            requests.push_back(make_request("POST", "/payments", "", {{"Idempotency-Key", "op-" + std::to_string(op)}}));
        }
    }

    // Run 1: one thread, one request at a time, in order.
    test_server one{rules, 42};
    for (const auto& r : requests) ASSERT_TRUE(exchange(one.port(), r).parsed());
    const auto first = fault_map(one.journal());

    // Run 2: four threads, all requests at once, in reverse order.
    server_options four_threads;
    four_threads.threads = 4;
    test_server four{rules, 42, four_threads};
    std::vector<std::string> reversed(requests.rbegin(), requests.rend());
    for (const auto& reply : exchange_concurrently(four.port(), reversed)) ASSERT_TRUE(reply.parsed());
    const auto second = fault_map(four.journal());

    ASSERT_EQ(first.size(), static_cast<std::size_t>(operations * attempts));
    EXPECT_EQ(first, second);
    // The seed matters: some attempts were faulted and some were not.
    const auto faulted = std::count_if(first.begin(), first.end(), [](const auto& kv) { return kv.second != "/"; });
    EXPECT_GT(faulted, 0);
    EXPECT_LT(faulted, operations * attempts);
}

constexpr std::string_view keys_mode = R"(
[server]
idempotency = "keys"
idempotency_required = true
)";

TEST(server, idempotency_keys_under_concurrent_attempts) {
    server_options options;
    options.threads = 4;
    test_server s{keys_mode, 7, options};
    const std::string body = R"({"amount":250})";
    const std::vector<std::string> same(16, make_request("POST", "/payments", body, {{"Idempotency-Key", "\"k-1\""}}));
    const auto replies = exchange_concurrently(s.port(), same);

    std::set<std::string> successful_bodies;
    int conflicts = 0;
    for (const auto& reply : replies) {
        const auto res = reply.parsed();
        ASSERT_TRUE(res) << reply.bytes;
        if (res->result_int() == 409) {
            EXPECT_EQ((*res)[idempotency_marker_header], idempotency_marker_in_flight);
            ++conflicts;
            continue;
        }
        EXPECT_EQ(res->result_int(), 201);
        successful_bodies.insert(res->body());
    }
    // Exactly one commit; every success is that commit's reply, byte for byte.
    EXPECT_EQ(s.context().effects.commits_for("k-1"), 1U);
    EXPECT_EQ(successful_bodies.size(), 1U);
    EXPECT_LT(conflicts, 16);

    // Same key, different payload: 422. No key on a non-idempotent request: 400 (required).
    const auto mismatch = exchange(s.port(), make_request("POST", "/payments", R"({"amount":1})",
                                                          {{"Idempotency-Key", "\"k-1\""}}));
    ASSERT_TRUE(mismatch.parsed());
    EXPECT_EQ(mismatch.parsed()->result_int(), 422);
    const auto missing = exchange(s.port(), make_request("POST", "/payments", body));
    ASSERT_TRUE(missing.parsed());
    EXPECT_EQ(missing.parsed()->result_int(), 400);

    const auto journal = s.journal();
    EXPECT_EQ(journal.size(), 18U);
    const auto count = [&](record::effect_kind e) {
        return std::count_if(journal.begin(), journal.end(), [e](const auto& r) { return r.effect == e; });
    };
    EXPECT_EQ(count(record::effect_kind::committed), 1);
    EXPECT_EQ(count(record::effect_kind::replayed) + count(record::effect_kind::conflict), 16);  // 15 replays/409s + the 422
    EXPECT_EQ(count(record::effect_kind::rejected), 1);
    EXPECT_EQ(s.context().effects.size(), 1U);
}

TEST(server, rules_file_errors_carry_positions) {
    const auto bad = parse_serve_config("[server]\nthreads = 0\nbogus = 1\n[[fault]]\nkind = \"nope\"\n[extra]\n",
                                        "rules.toml");
    ASSERT_FALSE(bad.ok());
    std::string all;
    for (const auto& e : bad.errors) all += e.to_string() + "\n";
    EXPECT_NE(all.find("rules.toml:2:"), std::string::npos) << all;  // threads out of range
    EXPECT_NE(all.find("rules.toml:3:"), std::string::npos) << all;  // unknown [server] key
    EXPECT_NE(all.find("rules.toml:5:"), std::string::npos) << all;  // unknown kind
    EXPECT_NE(all.find("rules.toml:6:"), std::string::npos) << all;  // unknown top-level table
    const auto unparsable = parse_serve_config("[server\n", "broken.toml");
    ASSERT_EQ(unparsable.errors.size(), 1U);
    EXPECT_EQ(unparsable.errors[0].where.line, 1U);
}

TEST(server, rules_file_waits_are_bounded_by_its_own_max_fault_wait) {
    // The rule comes first in the file; [server] is read first all the same.
    const auto bad = parse_serve_config("[[fault]]\nkind = \"delay\"\nwait = \"2s\"\n\n[server]\nmax_fault_wait = \"1s\"\n",
                                        "rules.toml");
    ASSERT_EQ(bad.errors.size(), 1U);
    EXPECT_EQ(bad.errors[0].to_string(),
              "rules.toml:3:8: fault kind \"delay\": wait: must be at most [server] max_fault_wait = 1s, got 2s");
    const auto raised = parse_serve_config("[[fault]]\nkind = \"delay\"\nwait = \"2h\"\n\n[server]\nmax_fault_wait = \"3h\"\n",
                                           "rules.toml");
    EXPECT_TRUE(raised.ok());
}

TEST(server, a_context_refuses_rules_that_wait_longer_than_its_limit) {
    // A scenario's rules are parsed with the default bound; its own [server] max_fault_wait is
    // applied when the run's context is built.
    auto rules = parse_serve_config("[[fault]]\nname = \"h\"\nkind = \"hang\"\nlimit = \"20s\"\n", "s.toml");
    ASSERT_TRUE(rules.ok());
    model_config model;
    model.limits.max_fault_wait = std::chrono::seconds{10};
    try {
        server_context context{model, rules.config->rules, 7};
        FAIL() << "constructed";
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(), "s.toml:1:1: fault rule \"h\": limit = 20s is longer than [server] max_fault_wait = 10s");
    }
}

}  // namespace
}  // namespace faultline::server::testing
