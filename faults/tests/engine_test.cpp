// The engine: triggers, first-rule-wins, seeded determinism across threads, the active-fault cap,
// overload's capacity model on a manual clock, connection verdicts, and runtime changes.
#include "faultline/faults/engine.hpp"

#include <algorithm>
#include <thread>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "faultline/core/clock.hpp"
#include "faultline/faults/decision_random.hpp"
#include "test_support.hpp"

namespace faultline::faults {
namespace {

using namespace std::chrono_literals;
using testing::attempt_builder;
using testing::messages;
using testing::parse;

std::vector<rule> rules_of(std::string_view toml) {
    rules_result result = parse(toml);
    EXPECT_TRUE(result.ok()) << messages(result);
    return std::move(result.rules);
}

constexpr std::uint64_t seed = 20240601;

TEST(engine, attempts_trigger_fails_the_first_tries_of_every_operation) {
    fault_engine engine{seed, rules_of("[[fault]]\nkind = \"status\"\n[fault.when]\nattempts = [1, 2]\n")};
    attempt_builder a;
    for (std::uint64_t op = 1; op <= 20; ++op) {
        a.operation_hash = op;
        for (std::uint32_t n = 1; n <= 4; ++n) {
            a.attempt = n;
            EXPECT_EQ(engine.on_attempt(a.build()).has_fault(), n <= 2) << op << " " << n;
        }
    }
}

TEST(engine, probability_is_a_seeded_function_of_the_operation) {
    fault_engine engine{seed, rules_of("[[fault]]\nname = \"p\"\nkind = \"status\"\n[fault.when]\nprobability = 0.3\n")};
    fault_engine same{seed, rules_of("[[fault]]\nname = \"p\"\nkind = \"status\"\n[fault.when]\nprobability = 0.3\n")};
    fault_engine other{seed + 1, rules_of("[[fault]]\nname = \"p\"\nkind = \"status\"\n[fault.when]\nprobability = 0.3\n")};
    attempt_builder a;
    int fired = 0;
    int agree_other = 0;
    constexpr int operations = 10'000;
    for (int op = 0; op < operations; ++op) {
        a.operation_hash = hash_bytes("op-" + std::to_string(op));
        const bool hit = engine.on_attempt(a.build()).has_fault();
        fired += hit ? 1 : 0;
        EXPECT_EQ(same.on_attempt(a.build()).has_fault(), hit);
        agree_other += other.on_attempt(a.build()).has_fault() == hit ? 1 : 0;
    }
    // Binomial(10000, 0.3): sd 0.0046; 0.02 is over four sd.
    EXPECT_NEAR(static_cast<double>(fired) / operations, 0.3, 0.02);
    // Another seed draws independently: agreement 0.3^2 + 0.7^2 = 0.58, far from 1.
    EXPECT_NEAR(static_cast<double>(agree_other) / operations, 0.58, 0.03);
}

TEST(engine, probability_draws_differ_per_attempt_and_per_rule) {
    // The same operation's attempts and two rules with the same probability are independent.
    const std::uint64_t op = hash_bytes("op");
    int differ_attempt = 0;
    int differ_rule = 0;
    for (std::uint32_t n = 1; n <= 1000; ++n) {
        const auto draw = [&](std::string_view rule_name, std::uint32_t attempt) {
            return unit_from_hash(decision_subkey(decision_key(seed, rule_name, op, attempt), decision_purpose::trigger));
        };
        differ_attempt += (draw("a", n) < 0.5) != (draw("a", n + 1000) < 0.5) ? 1 : 0;
        differ_rule += (draw("a", n) < 0.5) != (draw("b", n) < 0.5) ? 1 : 0;
    }
    EXPECT_NEAR(differ_attempt, 500, 80);
    EXPECT_NEAR(differ_rule, 500, 80);
}

TEST(engine, first_and_every_count_server_wide_requests) {
    fault_engine first{seed, rules_of("[[fault]]\nkind = \"status\"\n[fault.when]\nfirst = 3\n")};
    fault_engine every{seed, rules_of("[[fault]]\nkind = \"status\"\n[fault.when]\nevery = 3\n")};
    attempt_builder a;
    std::vector<bool> first_hits;
    std::vector<bool> every_hits;
    for (std::uint64_t seq = 1; seq <= 7; ++seq) {
        a.request_seq = seq;
        first_hits.push_back(first.on_attempt(a.build()).has_fault());
        every_hits.push_back(every.on_attempt(a.build()).has_fault());
    }
    EXPECT_EQ(first_hits, (std::vector<bool>{true, true, true, false, false, false, false}));
    EXPECT_EQ(every_hits, (std::vector<bool>{false, false, true, false, false, true, false}));
}

TEST(engine, time_window_from_for) {
    fault_engine engine{seed, rules_of("[[fault]]\nkind = \"status\"\n[fault.when]\nfrom = \"1s\"\nfor = \"2s\"\n")};
    attempt_builder a;
    const auto at = [&](std::chrono::nanoseconds t) {
        a.since_start = t;
        return engine.on_attempt(a.build()).has_fault();
    };
    EXPECT_FALSE(at(999ms));
    EXPECT_TRUE(at(1s));
    EXPECT_TRUE(at(2999ms));
    EXPECT_FALSE(at(3s));
    fault_engine open_ended{seed, rules_of("[[fault]]\nkind = \"status\"\n[fault.when]\nfrom = \"1s\"\n")};
    a.since_start = 1h;
    EXPECT_TRUE(open_ended.on_attempt(a.build()).has_fault());
}

TEST(engine, a_combination_needs_every_condition) {
    fault_engine engine{seed, rules_of("[[fault]]\nkind = \"status\"\n[fault.when]\nattempts = [1]\nfrom = \"1s\"\n"
                                       "[fault.match]\nmethod = \"POST\"\n")};
    attempt_builder a;
    a.since_start = 2s;
    EXPECT_TRUE(engine.on_attempt(a.build()).has_fault());
    a.attempt = 2;
    EXPECT_FALSE(engine.on_attempt(a.build()).has_fault());
    a.attempt = 1;
    a.since_start = 0s;
    EXPECT_FALSE(engine.on_attempt(a.build()).has_fault());
    a.since_start = 2s;
    a.method = "GET";
    EXPECT_FALSE(engine.on_attempt(a.build()).has_fault());
}

TEST(engine, the_first_rule_that_fires_wins) {
    fault_engine engine{seed, rules_of(R"([[fault]]
name = "first-try"
kind = "status"
status = 500
[fault.when]
attempts = [1]
[[fault]]
name = "payments"
kind = "lost_response"
[fault.match]
path = "/payments"
[[fault]]
name = "everything"
kind = "delay"
wait = "1ms"
)")};
    attempt_builder a;
    fault_decision d = engine.on_attempt(a.build());
    EXPECT_EQ(d.rule(), "first-try");
    EXPECT_EQ(d.kind(), "status");
    EXPECT_EQ(std::get<respond_action>(d.plan()->what).status, 500);
    a.attempt = 2;
    d = engine.on_attempt(a.build());
    EXPECT_EQ(d.rule(), "payments");
    EXPECT_EQ(d.plan()->phase, commit_phase::after);
    a.target = "/kv/x";
    d = engine.on_attempt(a.build());
    EXPECT_EQ(d.rule(), "everything");
    d = fault_decision{};

    const engine_counters counters = engine.counters();
    EXPECT_EQ(counters.fired_by_rule, (std::vector<std::pair<std::string, std::uint64_t>>{
                                          {"first-try", 1}, {"payments", 1}, {"everything", 1}}));
    EXPECT_EQ(counters.fired_by_kind.at("status"), 1U);
    EXPECT_EQ(counters.fired_by_kind.at("lost_response"), 1U);
    EXPECT_EQ(counters.fired_by_kind.at("delay"), 1U);
    EXPECT_EQ(counters.fired_by_kind.at("hang"), 0U);
    EXPECT_EQ(counters.fired_by_kind.size(), 16U);  // one per registered kind
    EXPECT_EQ(counters.active, 0U);
}

// What a decision looked like, for comparing runs.
struct seen {
    std::string rule;
    std::chrono::nanoseconds wait{-1};
    bool operator==(const seen&) const = default;
};

TEST(engine, decisions_do_not_depend_on_thread_interleaving) {
    constexpr const char* toml = R"([[fault]]
name = "jitter"
kind = "delay"
distribution = "uniform"
min = "0ms"
max = "1s"
[fault.when]
probability = 0.5
)";
    constexpr std::uint64_t operations = 500;
    constexpr std::uint32_t attempts = 4;
    const auto index = [](std::uint64_t op, std::uint32_t n) { return op * attempts + (n - 1); };
    // Each thread writes only its own vector.
    const auto run = [&](fault_engine& engine, bool reverse, std::vector<seen>& out) {
        out.assign(operations * attempts, seen{});
        attempt_builder a;
        for (std::uint64_t i = 0; i < operations * attempts; ++i) {
            const std::uint64_t k = reverse ? operations * attempts - 1 - i : i;
            a.operation_hash = hash_bytes("op-" + std::to_string(k / attempts));
            a.attempt = static_cast<std::uint32_t>(k % attempts) + 1;
            a.request_seq = i + 1;
            const fault_decision d = engine.on_attempt(a.build());
            seen s{d.rule(), std::chrono::nanoseconds{-1}};
            if (d.has_fault()) {
                s.wait = std::get<delay_action>(d.plan()->what).wait;
            }
            out[index(k / attempts, a.attempt)] = s;
        }
    };
    std::vector<seen> alone;
    {
        fault_engine engine{seed, rules_of(toml)};
        run(engine, false, alone);
    }
    fault_engine shared{seed, rules_of(toml)};
    std::vector<seen> forward;
    std::vector<seen> backward;
    std::thread one{[&] { run(shared, false, forward); }};
    std::thread two{[&] { run(shared, true, backward); }};
    one.join();
    two.join();
    EXPECT_EQ(forward, alone);
    EXPECT_EQ(backward, alone);
    const auto faults = std::count_if(alone.begin(), alone.end(), [](const seen& s) { return !s.rule.empty(); });
    EXPECT_GT(faults, 800);
    EXPECT_LT(faults, 1200);
}

TEST(engine, the_active_fault_cap_serves_without_a_fault_and_counts_the_overflow) {
    fault_engine engine{seed, rules_of("[[fault]]\nkind = \"hang\"\n"), engine_limits{2}};
    attempt_builder a;
    fault_decision one = engine.on_attempt(a.build());
    fault_decision two = engine.on_attempt(a.build());
    EXPECT_TRUE(one.has_fault());
    EXPECT_TRUE(two.has_fault());
    EXPECT_EQ(engine.counters().active, 2U);

    const fault_decision three = engine.on_attempt(a.build());
    EXPECT_FALSE(three.has_fault());
    EXPECT_TRUE(three.overflowed());
    EXPECT_EQ(three.rule(), "");
    EXPECT_EQ(engine.counters().overflowed, 1U);

    one = fault_decision{};
    EXPECT_EQ(engine.counters().active, 1U);
    const fault_decision four = engine.on_attempt(a.build());
    EXPECT_TRUE(four.has_fault());
    EXPECT_EQ(engine.counters().fired_by_rule.at(0).second, 3U);
    EXPECT_EQ(engine.counters_json().at("overflowed"), 1);
}

// Runs attempts at times read off a manual clock, as the server would.
struct timed {
    manual_clock clock;
    time_point start = clock.now();
    attempt_builder a;
    fault_decision at(fault_engine& engine) {
        a.since_start = clock.now() - start;
        return engine.on_attempt(a.build());
    }
};

TEST(engine, overload_rate_limit_rejects_beyond_r_per_second) {
    fault_engine engine{seed, rules_of("[[fault]]\nkind = \"overload\"\nrate = 10\nburst = 2\nretry_after = \"3s\"\n")};
    timed t;
    EXPECT_FALSE(t.at(engine).has_fault());  // within the burst of 2
    EXPECT_FALSE(t.at(engine).has_fault());
    const fault_decision third = t.at(engine);
    ASSERT_TRUE(third.has_fault());
    EXPECT_EQ(third.kind(), "overload");
    EXPECT_EQ(std::get<respond_action>(third.plan()->what).status, 503);
    EXPECT_EQ(std::get<respond_action>(third.plan()->what).headers, (header_list{{"Retry-After", "3"}}));
    t.clock.advance(99ms);
    EXPECT_TRUE(t.at(engine).has_fault());
    t.clock.advance(1ms);  // one interval (100 ms) has passed: one more slot
    EXPECT_FALSE(t.at(engine).has_fault());
    EXPECT_TRUE(t.at(engine).has_fault());
    t.clock.advance(1s);  // idle time refills only up to the burst
    EXPECT_FALSE(t.at(engine).has_fault());
    EXPECT_FALSE(t.at(engine).has_fault());
    EXPECT_TRUE(t.at(engine).has_fault());
}

TEST(engine, overload_queue_mode_delays_until_the_rate_allows) {
    fault_engine engine{seed, rules_of("[[fault]]\nkind = \"overload\"\nrate = 10\nexcess = \"queue\"\n"
                                       "max_queue_wait = \"250ms\"\n")};
    timed t;
    EXPECT_FALSE(t.at(engine).has_fault());
    const auto wait_of = [](const fault_decision& d) { return std::get<delay_action>(d.plan()->what).wait; };
    EXPECT_EQ(wait_of(t.at(engine)), 100ms);
    EXPECT_EQ(wait_of(t.at(engine)), 200ms);
    const fault_decision rejected = t.at(engine);  // would wait 300 ms
    EXPECT_EQ(std::get<respond_action>(rejected.plan()->what).status, 503);
    t.clock.advance(150ms);
    EXPECT_EQ(wait_of(t.at(engine)), 150ms);
}

TEST(engine, overload_in_flight_slots_live_as_long_as_the_decision) {
    fault_engine engine{seed, rules_of(R"([[fault]]
kind = "overload"
max_in_flight = 2
[[fault]]
kind = "delay"
wait = "5ms"
[fault.match]
path = "/slow"
)")};
    timed t;
    fault_decision one = t.at(engine);
    const fault_decision two = t.at(engine);
    EXPECT_FALSE(one.has_fault());
    EXPECT_FALSE(two.has_fault());
    EXPECT_EQ(t.at(engine).kind(), "overload");
    one = fault_decision{};
    t.a.target = "/slow";
    // Admitted by the overload rule (which does not fire), so the next rule is consulted, and the
    // decision holds the in-flight slot as well.
    const fault_decision three = t.at(engine);
    EXPECT_EQ(three.kind(), "delay");
    EXPECT_EQ(t.at(engine).kind(), "overload");
}

TEST(engine, connection_level_rules_decide_on_accept) {
    fault_engine engine{seed, rules_of(R"([[fault]]
name = "outage"
kind = "refuse"
[fault.when]
from = "1s"
for = "2s"
[[fault]]
kind = "close"
phase = "before_read"
[fault.when]
every = 2
[[fault]]
kind = "status"
)")};
    const auto verdict = [&](std::uint64_t seq, std::chrono::nanoseconds t) {
        return engine.on_connection(connection_context{seq, t});
    };
    EXPECT_EQ(verdict(1, 0s).verdict, connection_verdict::accept);
    EXPECT_EQ(verdict(1, 0s).rule, "");
    EXPECT_EQ(verdict(2, 0s).verdict, connection_verdict::close);
    EXPECT_EQ(verdict(2, 0s).rule, "close-2");
    EXPECT_EQ(verdict(3, 1500ms).verdict, connection_verdict::reset);
    EXPECT_EQ(verdict(3, 1500ms).rule, "outage");
    EXPECT_EQ(verdict(3, 1500ms).kind, "refuse");
    EXPECT_EQ(verdict(3, 3s).verdict, connection_verdict::accept);
    // Attempt-level rules never answer on_connection, and connection-level ones never on_attempt.
    attempt_builder a;
    a.since_start = 1500ms;
    EXPECT_EQ(engine.on_attempt(a.build()).kind(), "status");
}

TEST(engine, listener_level_rules_give_the_listener_its_windows) {
    fault_engine engine{seed, rules_of(R"([[fault]]
name = "closed"
kind = "refuse"
how = "closed_port"
[fault.when]
from = "1s"
for = "2s"
[[fault]]
name = "silent"
kind = "refuse"
how = "unanswered_syn"
[fault.when]
from = "2s"
for = "3s"
[[fault]]
kind = "status"
)")};
    const listener_decision before = engine.on_listener(500ms);
    EXPECT_EQ(before.verdict, std::nullopt);
    EXPECT_EQ(before.rule, "");
    EXPECT_EQ(before.next_change, 1s);
    const listener_decision closed = engine.on_listener(1s);
    EXPECT_EQ(closed.verdict, listener_verdict::closed_port);
    EXPECT_EQ(closed.rule, "closed");
    EXPECT_EQ(closed.kind, "refuse");
    EXPECT_EQ(closed.next_change, 2s);
    // Both windows hold at 2.5 s: the first rule wins; the answer may change when its window ends.
    const listener_decision overlap = engine.on_listener(2500ms);
    EXPECT_EQ(overlap.rule, "closed");
    EXPECT_EQ(overlap.next_change, 3s);
    const listener_decision silent = engine.on_listener(3s);
    EXPECT_EQ(silent.verdict, listener_verdict::unanswered_syn);
    EXPECT_EQ(silent.rule, "silent");
    EXPECT_EQ(silent.next_change, 5s);
    const listener_decision after = engine.on_listener(5s);
    EXPECT_EQ(after.verdict, std::nullopt);
    EXPECT_EQ(after.next_change, std::nullopt);

    // Asking is no firing; the listener carrying a window out is one.
    EXPECT_EQ(engine.counters().fired_by_rule.front().second, 0U);
    engine.listener_window_began("closed");
    engine.listener_window_began("status-3");  // not listener-level: no firing
    engine.listener_window_began("gone");
    const engine_counters counters = engine.counters();
    EXPECT_EQ(counters.fired_by_rule[0], (std::pair<std::string, std::uint64_t>{"closed", 1}));
    EXPECT_EQ(counters.fired_by_rule[2].second, 0U);
    EXPECT_EQ(counters.fired_by_kind.at("refuse"), 1U);

    // Listener-level rules never answer on_connection or on_attempt.
    EXPECT_EQ(engine.on_connection(connection_context{1, 1500ms}).verdict, connection_verdict::accept);
    attempt_builder a;
    a.since_start = 1500ms;
    EXPECT_EQ(engine.on_attempt(a.build()).kind(), "status");
}

TEST(engine, a_listener_window_without_for_lasts_to_the_end) {
    fault_engine engine{seed, rules_of("[[fault]]\nkind = \"refuse\"\nhow = \"closed_port\"\n")};
    const listener_decision now = engine.on_listener(0s);
    EXPECT_EQ(now.verdict, listener_verdict::closed_port);
    EXPECT_EQ(now.next_change, std::nullopt);
    EXPECT_EQ(engine.on_listener(24h).verdict, listener_verdict::closed_port);
}

TEST(engine, rule_changes_are_told_to_the_watcher) {
    fault_engine engine{seed, rules_of("[[fault]]\nname = \"b\"\nkind = \"status\"\n")};
    int changes = 0;
    engine.watch_rules([&] {
        ++changes;
        // Called outside the engine's lock: the watcher may read the rules.
        EXPECT_LE(engine.rules().size(), 2U);
    });
    rules_result a = parse_rule_json(boost::json::parse(R"({"name":"a","kind":"refuse","how":"closed_port"})"));
    ASSERT_TRUE(a.ok()) << messages(a);
    EXPECT_TRUE(engine.add(a.rules[0]).ok);
    EXPECT_EQ(engine.on_listener(0s).rule, "a");
    EXPECT_FALSE(engine.add(a.rules[0]).ok);  // refused: nothing changed
    EXPECT_TRUE(engine.remove("a"));
    EXPECT_FALSE(engine.remove("a"));
    EXPECT_TRUE(engine.replace(rules_of("[[fault]]\nkind = \"status\"\n")).ok);
    engine.clear();
    EXPECT_EQ(changes, 4);
    engine.watch_rules({});
    engine.clear();
    EXPECT_EQ(changes, 4);
}

TEST(engine, rules_change_at_runtime) {
    fault_engine engine{seed, rules_of("[[fault]]\nname = \"b\"\nkind = \"status\"\n")};
    rules_result a = parse_rule_json(boost::json::parse(R"({"name":"a","kind":"hang"})"));
    ASSERT_TRUE(a.ok()) << messages(a);
    EXPECT_TRUE(engine.add(a.rules[0], 0).ok);
    const change_result duplicate = engine.add(a.rules[0]);
    EXPECT_FALSE(duplicate.ok);
    EXPECT_EQ(duplicate.error, "a fault rule named \"a\" already exists");

    attempt_builder req;
    EXPECT_EQ(engine.on_attempt(req.build()).rule(), "a");
    EXPECT_EQ(boost::json::serialize(engine.list()), R"([{"kind":"hang","name":"a"},{"kind":"status","name":"b"}])");

    EXPECT_TRUE(engine.remove("a"));
    EXPECT_FALSE(engine.remove("a"));
    EXPECT_EQ(engine.on_attempt(req.build()).rule(), "b");

    rules_result replacement = parse("[[fault]]\nname = \"c\"\nkind = \"close\"\n[[fault]]\nname = \"d\"\nkind = \"hang\"\n");
    std::vector<rule> twice{replacement.rules[0], replacement.rules[0]};
    EXPECT_FALSE(engine.replace(twice).ok);
    EXPECT_TRUE(engine.replace(replacement.rules).ok);
    EXPECT_EQ(engine.on_attempt(req.build()).rule(), "c");
    EXPECT_EQ(engine.rules().size(), 2U);

    engine.clear();
    EXPECT_FALSE(engine.on_attempt(req.build()).has_fault());
    EXPECT_TRUE(engine.list().empty());
}

TEST(engine, a_decision_may_outlive_its_engine) {
    fault_decision d;
    {
        fault_engine engine{seed, rules_of("[[fault]]\nkind = \"overload\"\nmax_in_flight = 1\n[[fault]]\nkind = \"hang\"\n")};
        attempt_builder a;
        d = engine.on_attempt(a.build());
        EXPECT_EQ(d.kind(), "hang");
    }
    d = fault_decision{};
}

}  // namespace
}  // namespace faultline::faults
