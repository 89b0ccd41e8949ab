#include "faultline/runner/runner.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <csignal>

#include <mutex>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "faultline/drivers/driver.hpp"
#include "faultline/server/server.hpp"

namespace faultline::runner {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;

std::string error_text(const config_errors& errors) {
    std::string out;
    for (const auto& e : errors) out += e.to_string() + "\n";
    return out;
}

record::run_record with_verdicts(std::vector<bool> passed) {
    record::run_record run;
    for (const bool p : passed) {
        record::verdict v;
        v.check = "success_rate";
        v.passed = p;
        run.verdicts.push_back(v);
    }
    return run;
}

TEST(exit_codes, values_are_the_documented_ones) {
    EXPECT_EQ(to_int(exit_code::passed), 0);
    EXPECT_EQ(to_int(exit_code::check_failed), 1);
    EXPECT_EQ(to_int(exit_code::bad_input), 2);
    EXPECT_EQ(to_int(exit_code::harness_error), 3);
    EXPECT_EQ(to_int(exit_code::insufficient_evidence), 4);
    EXPECT_EQ(to_string(exit_code::harness_error), "harness error");
}

// A check that could not judge is neither a pass nor a failure: its own code, below any failure.
TEST(exit_codes, insufficient_evidence_is_its_own_code_and_loses_to_a_failure) {
    record::run_record unjudged = with_verdicts({true, false});
    unjudged.verdicts[1].insufficient_evidence = true;
    EXPECT_EQ(record::outcome_of(unjudged), record::verdict_outcome::insufficient_evidence);
    EXPECT_FALSE(record::all_checks_passed(unjudged));
    EXPECT_EQ(exit_code_of(unjudged), exit_code::insufficient_evidence);

    record::run_record also_failed = unjudged;
    also_failed.verdicts.push_back(also_failed.verdicts.front());
    also_failed.verdicts.back().passed = false;
    EXPECT_EQ(exit_code_of(also_failed), exit_code::check_failed);
    EXPECT_EQ(worst(exit_code::insufficient_evidence, exit_code::passed), exit_code::insufficient_evidence);
    EXPECT_EQ(worst(exit_code::insufficient_evidence, exit_code::check_failed), exit_code::check_failed);
}

// Checks that passed on part of a workload do not make a passing run; a failure found before the
// signal is still a failure.
TEST(exit_codes, an_interrupted_run_passes_no_better_than_insufficient_evidence) {
    record::run_record cut_short = with_verdicts({true, true});
    cut_short.interrupted = record::run_interruption{};
    EXPECT_EQ(record::outcome_of(cut_short), record::verdict_outcome::insufficient_evidence);
    EXPECT_FALSE(record::all_checks_passed(cut_short));

    record::run_record failed_first = with_verdicts({true, false});
    failed_first.interrupted = record::run_interruption{};
    EXPECT_EQ(record::outcome_of(failed_first), record::verdict_outcome::fail);
}

TEST(exit_codes, a_run_maps_to_its_code) {
    EXPECT_EQ(exit_code_of(with_verdicts({true, true})), exit_code::passed);
    EXPECT_EQ(exit_code_of(with_verdicts({true, false})), exit_code::check_failed);
    record::run_record broken = with_verdicts({true});
    broken.harness_error = "the fault server failed to start";
    EXPECT_EQ(exit_code_of(broken), exit_code::harness_error);
}

TEST(exit_codes, the_worst_code_wins) {
    EXPECT_EQ(worst(exit_code::passed, exit_code::check_failed), exit_code::check_failed);
    EXPECT_EQ(worst(exit_code::harness_error, exit_code::check_failed), exit_code::harness_error);
    EXPECT_EQ(worst(exit_code::harness_error, exit_code::bad_input), exit_code::bad_input);
    EXPECT_EQ(worst(exit_code::passed, exit_code::passed), exit_code::passed);

    record::run_record broken = with_verdicts({true});
    broken.harness_error = "driver";
    EXPECT_EQ(exit_code_of(std::vector<record::run_record>{}), exit_code::passed);
    EXPECT_EQ(exit_code_of(std::vector<record::run_record>{with_verdicts({true}), with_verdicts({false})}),
              exit_code::check_failed);
    EXPECT_EQ(exit_code_of(std::vector<record::run_record>{with_verdicts({false}), broken}), exit_code::harness_error);
}

// A tiny scenario through real sockets: every operation's first attempt gets a 503, the builtin
// client retries once and succeeds.
constexpr const char* tiny = R"(name = "tiny"
seed = 7
time_limit = "10s"

[[fault]]
kind = "status"
status = 503
[fault.when]
attempts = [1]

[client]
clients = 2
operations = 3
[client.policy]
max_attempts = 3
[client.policy.backoff]
base = "1ms"
cap = "5ms"

[[expect]]
check = "success_rate"
min = 1.0

[[expect]]
check = "max_attempts"
max = 2
)";

scenario load(const std::string& text) {
    scenario_result loaded = parse_scenario(text, "tiny.toml");
    EXPECT_TRUE(loaded.ok()) << error_text(loaded.errors);
    return std::move(*loaded.value);
}

// A journal with something for most checks to find: 40 operations of 1 to 4 attempts, retried after
// 503s (every third after a 400, which must not be retried), one committed twice.
record::run_record judged_run() {
    record::run_record run;
    std::uint64_t seq = 0;
    for (int op = 0; op < 40; ++op) {
        const int attempts = 1 + op % 4;
        for (int a = 1; a <= attempts; ++a) {
            record::journal_record r;
            r.seq = ++seq;
            r.connection = static_cast<std::uint32_t>(seq);
            r.request_ns = (op * 50 + a * (op % 5 + 3)) * std::int64_t{1'000'000};
            r.finished_ns = r.request_ns + 2'000'000;
            r.method = "POST";
            r.target = "/pay";
            r.operation = "op-" + std::to_string(op);
            r.identity = record::identity_source::header;
            r.attempt = static_cast<std::uint32_t>(a);
            r.status = a < attempts ? (op % 3 == 0 ? 400 : 503) : 200;
            r.effect = a == attempts || op == 5 ? record::effect_kind::committed : record::effect_kind::none;
            run.journal.push_back(r);
        }
    }
    return run;
}

// Every check that judges from the journal alone, some expected to fail, some twice.
constexpr const char* all_checks = R"(name = "judged"
[client]
clients = 1
operations = 1
[[expect]]
check = "no_double_effects"
[[expect]]
check = "max_attempts"
max = 3
[[expect]]
check = "retry_budget"
[[expect]]
check = "deadline"
[[expect]]
check = "no_retry_on_status"
expect_failure = true
[[expect]]
check = "retry_after"
[[expect]]
check = "backoff"
base = "10ms"
cap = "200ms"
[[expect]]
check = "jittered"
[[expect]]
check = "desynchronized"
[[expect]]
check = "amplification"
[[expect]]
check = "idempotency_keys"
[[expect]]
check = "success_rate"
[[expect]]
check = "latency"
p99 = "1ms"
[[expect]]
check = "max_attempts"
max = 4
[[expect]]
check = "no_double_effects"
expect_failure = true
)";

void expect_same(const record::verdict& a, const record::verdict& b) {
    EXPECT_EQ(a.check, b.check);
    EXPECT_EQ(a.passed, b.passed) << a.check;
    EXPECT_EQ(a.expected_to_fail, b.expected_to_fail) << a.check;
    EXPECT_EQ(a.insufficient_evidence, b.insufficient_evidence) << a.check;
    EXPECT_EQ(a.summary, b.summary);
    EXPECT_EQ(a.evidence_total, b.evidence_total) << a.check;
    EXPECT_EQ(a.parameters, b.parameters) << a.check;
    ASSERT_EQ(a.evidence.size(), b.evidence.size()) << a.check;
    for (std::size_t i = 0; i < a.evidence.size(); ++i) {
        EXPECT_EQ(a.evidence[i].operation, b.evidence[i].operation) << a.check;
        EXPECT_EQ(a.evidence[i].seqs, b.evidence[i].seqs) << a.check;
        EXPECT_EQ(a.evidence[i].detail, b.evidence[i].detail) << a.check;
    }
}

TEST(evaluate_checks, checks_on_several_threads_give_one_threads_verdicts_in_expectation_order) {
    const scenario s = load(all_checks);
    ASSERT_EQ(s.expectations.size(), 15U);
    record::run_record one_thread = judged_run();
    evaluate_checks(s.expectations, one_thread, 1);
    ASSERT_EQ(one_thread.verdicts.size(), s.expectations.size());
    // Not all alike, so a verdict in the wrong place shows.
    std::set<record::verdict_outcome> outcomes;
    for (const record::verdict& v : one_thread.verdicts) outcomes.insert(v.outcome());
    EXPECT_EQ(outcomes.size(), 3U);
    for (const std::size_t threads : {2U, 3U, 64U}) {
        record::run_record run = judged_run();
        run.verdicts.resize(2);  // replaced, not appended to
        evaluate_checks(s.expectations, run, threads);
        ASSERT_EQ(run.verdicts.size(), s.expectations.size()) << threads;
        for (std::size_t i = 0; i < run.verdicts.size(); ++i) {
            EXPECT_EQ(run.verdicts[i].check, s.expectations[i].check_name) << threads << " threads, " << i;
            expect_same(run.verdicts[i], one_thread.verdicts[i]);
        }
    }
}

TEST(evaluate_checks, no_expectations_leave_no_verdicts) {
    record::run_record run = judged_run();
    run.verdicts.resize(3);
    evaluate_checks({}, run, 4);
    EXPECT_TRUE(run.verdicts.empty());
}

// Counts its evaluations; throws when given a message.
class test_check final : public checks::check {
public:
    test_check(std::atomic<int>& evaluated, std::string failure) : evaluated_{evaluated}, failure_{std::move(failure)} {}
    record::verdict evaluate(const record::run_record&, const record::operation_groups&) const override {
        ++evaluated_;
        if (!failure_.empty()) throw std::runtime_error{failure_};
        record::verdict v;
        v.passed = true;
        v.summary = "fine";
        return v;
    }

private:
    std::atomic<int>& evaluated_;
    std::string failure_;
};

TEST(evaluate_checks, a_throwing_check_throws_the_first_failure_after_every_check_ran) {
    for (const std::size_t threads : {1U, 2U, 8U}) {
        std::atomic<int> evaluated{0};
        std::vector<checks::expectation> expectations;
        for (const char* failure : {"", "", "second", "", "fourth", "", "", ""}) {
            checks::expectation e;
            e.check_name = "test";
            e.impl = std::make_shared<test_check>(evaluated, failure);
            expectations.push_back(std::move(e));
        }
        record::run_record run = judged_run();
        try {
            evaluate_checks(expectations, run, threads);
            ADD_FAILURE() << "no exception on " << threads << " threads";
        } catch (const std::runtime_error& e) {
            EXPECT_STREQ(e.what(), "second") << threads;
        }
        EXPECT_EQ(evaluated.load(), 8) << threads;
    }
}

TEST(runner, runs_a_tiny_scenario_end_to_end) {
    const scenario s = load(tiny);
    const record::run_record run = run_scenario(s);
    ASSERT_EQ(run.harness_error, "");
    EXPECT_EQ(run.scenario, "tiny");
    EXPECT_EQ(run.scenario_file, "tiny.toml");
    EXPECT_EQ(run.seed, 7U);
    EXPECT_THAT(run.clients, SizeIs(6));
    // Six operations, each a 503 and then a success.
    ASSERT_THAT(run.journal, SizeIs(12));
    EXPECT_TRUE(std::is_sorted(run.journal.begin(), run.journal.end(),
                               [](const record::journal_record& a, const record::journal_record& b) { return a.seq < b.seq; }));
    EXPECT_EQ(std::count_if(run.journal.begin(), run.journal.end(),
                            [](const record::journal_record& r) { return r.status == 503 && r.fault == "status"; }),
              6);
    // The [[expect]] checks, then evidence_intact, which every run gets.
    ASSERT_THAT(run.verdicts, SizeIs(3));
    EXPECT_TRUE(run.verdicts[0].passed) << run.verdicts[0].summary;
    EXPECT_TRUE(run.verdicts[1].passed) << run.verdicts[1].summary;
    EXPECT_EQ(run.verdicts[2].check, "evidence_intact");
    EXPECT_TRUE(run.verdicts[2].passed) << run.verdicts[2].summary;
    ASSERT_THAT(run.rule_firings, SizeIs(1));
    EXPECT_EQ(run.rule_firings[0].rule, "status-1");
    EXPECT_EQ(run.rule_firings[0].kind, "status");
    EXPECT_EQ(run.rule_firings[0].fired, 6u);
    EXPECT_FALSE(run.interrupted.has_value());
    EXPECT_EQ(exit_code_of(run), exit_code::passed);
}

// Wire details are kept beside the journal, in its seq order, unless no report will write them:
// then the run holds only what the checks read, and judges the same.
TEST(runner, keeps_wire_details_only_when_asked) {
    const scenario s = load(tiny);
    const record::run_record kept = run_scenario(s);
    ASSERT_EQ(kept.harness_error, "");
    ASSERT_THAT(kept.wire, SizeIs(kept.journal.size()));
    for (std::size_t i = 0; i < kept.journal.size(); ++i) {
        EXPECT_EQ(kept.wire[i].seq, kept.journal[i].seq);
        EXPECT_GT(kept.wire[i].bytes_in, 0U);
        EXPECT_LE(kept.wire[i].accepted_ns, kept.journal[i].request_ns);
    }
    run_options lean;
    lean.keep_wire_details = false;
    const record::run_record bare = run_scenario(s, lean);
    ASSERT_EQ(bare.harness_error, "");
    EXPECT_TRUE(bare.wire.empty());
    ASSERT_THAT(bare.journal, SizeIs(kept.journal.size()));
    ASSERT_EQ(bare.verdicts.size(), kept.verdicts.size());
    for (std::size_t i = 0; i < bare.verdicts.size(); ++i) EXPECT_EQ(bare.verdicts[i].passed, kept.verdicts[i].passed);
}

TEST(runner, seed_override_and_failing_checks) {
    std::string text = tiny;
    text.replace(text.find("max = 2"), 7, "max = 1");
    const scenario s = load(text);
    run_options options;
    options.seed = 99;
    const record::run_record run = run_scenario(s, options);
    ASSERT_EQ(run.harness_error, "");
    EXPECT_EQ(run.seed, 99U);
    ASSERT_THAT(run.verdicts, SizeIs(3));
    EXPECT_FALSE(run.verdicts[1].passed);
    EXPECT_FALSE(run.verdicts[1].evidence.empty());
    EXPECT_EQ(exit_code_of(run), exit_code::check_failed);
}

TEST(runner, an_expected_failure_makes_the_scenario_pass) {
    std::string text = tiny;
    text.replace(text.find("max = 2"), 7, "max = 1\nexpect_failure = true");
    const record::run_record run = run_scenario(load(text));
    ASSERT_EQ(run.harness_error, "");
    ASSERT_THAT(run.verdicts, SizeIs(3));
    EXPECT_TRUE(run.verdicts[1].passed) << run.verdicts[1].summary;
    EXPECT_TRUE(run.verdicts[1].expected_to_fail);
    EXPECT_EQ(exit_code_of(run), exit_code::passed);
}

// A second rule that matches nothing the client sends: it never fires.
std::string with_idle_rule(std::string_view extra_keys) {
    std::string text = tiny;
    text.replace(text.find("[client]"), 8,
                 "[[fault]]\nname = \"never\"\nkind = \"status\"\nstatus = 500\n" + std::string(extra_keys) +
                     "\n[fault.match]\npath = \"/nowhere\"\n\n[client]");
    return text;
}

TEST(runner, a_rule_below_its_min_fired_fails_the_run) {
    const record::run_record run = run_scenario(load(with_idle_rule("min_fired = 1")));
    ASSERT_EQ(run.harness_error, "");
    ASSERT_THAT(run.rule_firings, SizeIs(2));
    EXPECT_EQ(run.rule_firings[1].rule, "never");
    EXPECT_EQ(run.rule_firings[1].fired, 0u);
    EXPECT_EQ(run.rule_firings[1].min_fired, 1u);
    ASSERT_THAT(run.verdicts, SizeIs(4));
    EXPECT_EQ(run.verdicts[3].check, "fired:never");
    EXPECT_FALSE(run.verdicts[3].passed);
    EXPECT_EQ(run.verdicts[3].summary, "rule `never` (status) fired 0 times (min_fired = 1)");
    EXPECT_EQ(exit_code_of(run), exit_code::check_failed);
}

TEST(runner, a_rule_that_never_fired_is_a_warning_that_strict_makes_fatal) {
    const scenario s = load(with_idle_rule(""));
    const record::run_record lenient = run_scenario(s);
    EXPECT_THAT(record::never_fired(lenient), SizeIs(1));
    EXPECT_EQ(exit_code_of(lenient), exit_code::passed);

    run_options strict;
    strict.strict = true;
    const record::run_record judged = run_scenario(s, strict);
    EXPECT_TRUE(judged.strict);
    ASSERT_THAT(judged.verdicts, SizeIs(5));  // success_rate, max_attempts, evidence_intact, fired:status-1, fired:never
    EXPECT_EQ(judged.verdicts[3].check, "fired:status-1");
    EXPECT_TRUE(judged.verdicts[3].passed);
    EXPECT_EQ(judged.verdicts[4].check, "fired:never");
    EXPECT_FALSE(judged.verdicts[4].passed);
    EXPECT_EQ(exit_code_of(judged), exit_code::check_failed);

    // The scenario's own `strict = true` does the same.
    const record::run_record declared = run_scenario(load("strict = true\n" + with_idle_rule("")));
    EXPECT_EQ(exit_code_of(declared), exit_code::check_failed);
}

// A builtin herd held by a hang fault far longer than the test may take; the interrupt ends it.
constexpr const char* hanging = R"(name = "hanging"
time_limit = "60s"

[[fault]]
kind = "hang"
limit = "60s"

[client]
clients = 2
operations = 5

[[expect]]
check = "success_rate"
)";

TEST(runner, an_interrupt_stops_the_builtin_clients_and_the_checks_judge_what_ran) {
    drivers::run_interrupt interrupt;
    interrupt.request(SIGINT);
    run_options options;
    options.interrupt = &interrupt;
    const record::run_record run = run_scenario(load(hanging), options);
    ASSERT_EQ(run.harness_error, "");
    ASSERT_TRUE(run.interrupted.has_value());
    EXPECT_EQ(run.interrupted->signal, SIGINT);
    EXPECT_LT(run.duration, std::chrono::seconds{30});
    ASSERT_THAT(run.verdicts, SizeIs(2));
    EXPECT_EQ(run.verdicts[0].check, "success_rate");
    EXPECT_NE(run.verdicts[0].outcome(), record::verdict_outcome::pass);
}

TEST(runner, no_scenario_starts_after_an_interrupt) {
    drivers::run_interrupt interrupt;
    interrupt.request(SIGTERM);
    run_options options;
    options.interrupt = &interrupt;
    std::size_t reported = 0;
    const std::vector<record::run_record> runs =
        run_scenarios({load(tiny), load(tiny)}, options, 1, [&](std::size_t, const record::run_record&) { ++reported; });
    ASSERT_THAT(runs, SizeIs(2));
    EXPECT_TRUE(runs[0].not_run);
    EXPECT_TRUE(runs[1].not_run);
    EXPECT_EQ(runs[0].scenario, "tiny");
    EXPECT_EQ(reported, 0u);
}

TEST(exit_codes, an_interrupted_run_exits_as_the_shell_reports_the_signal) {
    EXPECT_EQ(interrupted_exit_status(SIGINT), 130);
    EXPECT_EQ(interrupted_exit_status(SIGTERM), 143);
}

TEST(runner, parallel_scenarios_get_their_own_servers) {
    std::vector<scenario> scenarios;
    for (int i = 0; i < 3; ++i) scenarios.push_back(load(tiny));
    std::vector<std::size_t> finished;
    const std::vector<record::run_record> runs =
        run_scenarios(scenarios, {}, 2, [&](std::size_t index, const record::run_record&) { finished.push_back(index); });
    ASSERT_THAT(runs, SizeIs(3));
    for (const record::run_record& run : runs) {
        EXPECT_EQ(run.harness_error, "");
        EXPECT_THAT(run.journal, SizeIs(12));
    }
    std::sort(finished.begin(), finished.end());
    EXPECT_EQ(finished, (std::vector<std::size_t>{0, 1, 2}));
    EXPECT_EQ(exit_code_of(runs), exit_code::passed);
}

// The lane's scenarios run one after another (never two at once), the rest beside them.
TEST(runner, a_lanes_scenarios_run_one_after_another) {
    std::vector<scenario> scenarios;
    for (int i = 0; i < 4; ++i) scenarios.push_back(load(tiny));
    const std::vector<record::run_record> runs = run_scenarios(scenarios, {}, 2, {}, 3);
    ASSERT_THAT(runs, SizeIs(4));
    for (const record::run_record& run : runs) EXPECT_THAT(run.journal, SizeIs(12));
    for (std::size_t i = 1; i < 3; ++i) {
        EXPECT_GE(runs[i].started_at, runs[i - 1].started_at + runs[i - 1].duration) << i;
    }
}

// The scenarios after the lane (score's lone probes) start only once its last has ended, the rest
// beside the lane from the start; every one runs.
TEST(runner, the_scenarios_after_a_lane_start_together_once_it_has_ended) {
    std::vector<scenario> scenarios;
    for (int i = 0; i < 6; ++i) scenarios.push_back(load(tiny));
    const std::vector<record::run_record> runs = run_scenarios(scenarios, {}, 2, {}, 2, 2);
    ASSERT_THAT(runs, SizeIs(6));
    for (const record::run_record& run : runs) EXPECT_THAT(run.journal, SizeIs(12));
    const auto lane_end = runs[1].started_at + runs[1].duration;
    EXPECT_GE(runs[1].started_at, runs[0].started_at + runs[0].duration);
    for (std::size_t i = 2; i < 4; ++i) EXPECT_GE(runs[i].started_at, lane_end) << i;

    // With one job, the two after the lane still run at once, beside the rest: each holds its one
    // attempt 300 ms, so one after the other would not overlap.
    // Each its own load: copies of one scenario share its driver, which runs one at a time.
    const auto held = [] { return load(R"(name = "held"
seed = 7
time_limit = "10s"

[[fault]]
kind = "delay"
wait = "300ms"

[client]
clients = 1
operations = 1

[[expect]]
check = "success_rate"
min = 1.0
)"); };
    const std::vector<record::run_record> one_job = run_scenarios({held(), held(), held(), held()}, {}, 1, {}, 1, 2);
    ASSERT_THAT(one_job, SizeIs(4));
    EXPECT_GE(one_job[1].started_at, one_job[0].started_at + one_job[0].duration);
    EXPECT_GE(one_job[2].started_at, one_job[0].started_at + one_job[0].duration);
    EXPECT_LT(one_job[2].started_at, one_job[1].started_at + one_job[1].duration);
    EXPECT_LT(one_job[1].started_at, one_job[2].started_at + one_job[2].duration);

    // Staggered, the second starts that much after the lane's end, still while the first runs.
    const std::vector<record::run_record> staggered =
        run_scenarios({held(), held(), held(), held()}, {}, 1, {}, 1, 2, std::chrono::milliseconds{100});
    ASSERT_THAT(staggered, SizeIs(4));
    EXPECT_GE(staggered[2].started_at, staggered[0].started_at + staggered[0].duration + std::chrono::milliseconds{100});
    EXPECT_LT(staggered[2].started_at, staggered[1].started_at + staggered[1].duration);
}

// Records the progress events as text, and the live count each open journal reached by the time
// it closed.
class recording_listener final : public progress_listener {
public:
    void attempts_opened(const server::journal& live) override {
        const std::lock_guard lock(mutex_);
        open_.push_back(&live);
        events.push_back("opened " + std::to_string(live.appended()));
    }
    void attempts_closed(const server::journal& live) override {
        const std::lock_guard lock(mutex_);
        std::erase(open_, &live);
        events.push_back("closed " + std::to_string(live.appended()));
    }
    void scenario_finished(const record::run_record& run) override {
        const std::lock_guard lock(mutex_);
        events.push_back("finished " + run.scenario + " " + std::to_string(run.journal.size()) + " open " +
                         std::to_string(open_.size()));
    }

    std::vector<std::string> events;

private:
    std::mutex mutex_;
    std::vector<const server::journal*> open_;
};

TEST(runner, tells_the_progress_listener_as_each_journal_opens_closes_and_the_scenario_finishes) {
    recording_listener listener;
    run_options options;
    options.progress = &listener;
    const std::vector<record::run_record> runs = run_scenarios({load(tiny), load(tiny)}, options, 1);
    ASSERT_THAT(runs, SizeIs(2));
    // One at a time: each journal opens empty, closes with the tiny scenario's 12 attempts, and is
    // gone before its record is reported.
    EXPECT_THAT(listener.events, ElementsAre("opened 0", "closed 12", "finished tiny 12 open 0", "opened 0",
                                             "closed 12", "finished tiny 12 open 0"));
}

TEST(runner, a_scenario_that_fails_before_its_server_starts_still_reports_finished) {
    recording_listener listener;
    run_options options;
    options.progress = &listener;
    scenario s = load(tiny);
    s.client.reset();
    const record::run_record run = run_scenario(s, options);
    EXPECT_EQ(run.harness_error, "the scenario has no client");
    EXPECT_THAT(listener.events, ElementsAre("finished tiny 0 open 0"));
}

TEST(runner, a_journal_overflow_is_a_harness_error) {
    std::string text = tiny;
    text.replace(text.find("[[fault]]"), 0, "[server]\njournal_max_records = 3\n\n");
    const record::run_record run = run_scenario(load(text));
    EXPECT_NE(run.harness_error, "");
    EXPECT_TRUE(run.verdicts.empty());
    EXPECT_EQ(exit_code_of(run), exit_code::harness_error);
}

// A third-party client through real sockets: curl sends one POST with the process's key and gets a
// 503; then the client's "retries" fail locally (here: it sleeps) and it returns long after the
// deadline it declared. Only its process times can show that.
constexpr const char* late_command = R"(name = "late-command"
seed = 7
time_limit = "10s"

[[fault]]
kind = "status"
status = 503

[client]
driver = "command"
command = ["sh", "-c", "curl -s -o /dev/null -X POST -H 'Idempotency-Key: {key}' {url}/payments; sleep 0.4; exit 1"]
deadline = "100ms"
max_attempts = 1

[[expect]]
check = "deadline"
process_tolerance = "10ms"

[[expect]]
check = "max_attempts"
)";

bool have_curl() { return std::system("command -v curl > /dev/null 2>&1") == 0; }

TEST(runner, a_command_clients_process_times_share_the_journals_clock) {
    if (!have_curl()) GTEST_SKIP() << "needs curl";
    const record::run_record run = run_scenario(load(late_command));
    ASSERT_EQ(run.harness_error, "");
    ASSERT_TRUE(run.command.has_value());
    ASSERT_THAT(run.command->processes, SizeIs(1));
    ASSERT_THAT(run.journal, SizeIs(1));
    const record::process_record& p = run.command->processes.front();
    const record::journal_record& attempt = run.journal.front();
    EXPECT_EQ(p.op, 0u);
    EXPECT_GT(p.pid, 0);
    EXPECT_EQ(p.exit_status, 1);
    EXPECT_FALSE(p.killed);
    // The attempt happened inside the process's life, on the same clock.
    EXPECT_LE(p.started_ns, attempt.request_ns);
    EXPECT_LE(attempt.finished_ns, p.finished_ns);
    // It slept 400 ms after its attempt before exiting.
    EXPECT_GE(p.finished_ns - attempt.request_ns, 400'000'000);
    EXPECT_EQ(attempt.operation, drivers::operation_key(7, 0).view());
    EXPECT_EQ(run.declared.deadline, std::chrono::nanoseconds{std::chrono::milliseconds{100}});

    ASSERT_THAT(run.verdicts, SizeIs(3));
    const record::verdict& deadline = run.verdicts[0];
    EXPECT_FALSE(deadline.passed) << deadline.summary;
    ASSERT_THAT(deadline.evidence, SizeIs(1));
    EXPECT_THAT(deadline.evidence[0].seqs, ElementsAre(attempt.seq));
    EXPECT_THAT(deadline.evidence[0].detail,
                HasSubstr("process 0 (pid " + std::to_string(p.pid) + ") started at "));
    EXPECT_THAT(deadline.evidence[0].detail, HasSubstr("with status 1: "));
    // One attempt, as it declared.
    EXPECT_TRUE(run.verdicts[1].passed) << run.verdicts[1].summary;
    EXPECT_EQ(exit_code_of(run), exit_code::check_failed);
}

TEST(runner, a_command_client_that_returns_within_its_declared_deadline_passes) {
    if (!have_curl()) GTEST_SKIP() << "needs curl";
    std::string text = late_command;
    text.replace(text.find("sleep 0.4; exit 1"), 17, "exit 0");
    text.replace(text.find("deadline = \"100ms\""), 18, "deadline = \"5s\"");
    const record::run_record run = run_scenario(load(text));
    ASSERT_EQ(run.harness_error, "");
    ASSERT_THAT(run.verdicts, SizeIs(3));
    EXPECT_TRUE(run.verdicts[0].passed) << run.verdicts[0].summary;
    EXPECT_THAT(run.verdicts[0].summary, HasSubstr("0 of 1 processes exited after the declared deadline"));
    EXPECT_EQ(exit_code_of(run), exit_code::passed);
}

// [server] tls: the builtin client trusts the run's own CA (and nothing else would get an answer:
// the port speaks only TLS); every attempt is journaled as over plain TCP.
TEST(runner, with_tls_the_builtin_client_trusts_the_runs_ca) {
    std::string text = tiny;
    text.replace(text.find("[[fault]]"), 9, "[server]\ntls = true\n\n[[fault]]");
    const scenario s = load(text);
    ASSERT_TRUE(s.tls);
    const record::run_record run = run_scenario(s);
    ASSERT_EQ(run.harness_error, "");
    ASSERT_THAT(run.journal, SizeIs(12));
    EXPECT_EQ(std::count_if(run.journal.begin(), run.journal.end(), [](const record::journal_record& r) { return r.status == 503; }),
              6);
    for (const record::verdict& v : run.verdicts) EXPECT_TRUE(v.passed) << v.check << ": " << v.summary;
}

// [client] protocol = "h2": the builtin clients speak HTTP/2 to the same server (h2c without TLS).
// A stream refused (REFUSED_STREAM) and a GOAWAY below the stream were never processed, so a POST
// without a key is sent again after each and every operation ends with one charge. Two driver
// threads, so ThreadSanitizer sees the clients' connections wound down across threads.
constexpr const char* h2_unprocessed = R"(name = "h2-unprocessed"
seed = 11
time_limit = "10s"

[[fault]]
name = "refuse-first"
kind = "refused_stream"
[fault.match]
method = "POST"
path = "/payments"
[fault.when]
attempts = [1]

[[fault]]
name = "go-away-second"
kind = "goaway"
[fault.match]
method = "POST"
path = "/payments"
[fault.when]
attempts = [2]

[client]
protocol = "h2"
clients = 2
operations = 3
threads = 2
[client.policy]
max_attempts = 3
idempotency_keys = "none"
budget = { kind = "none" }
[client.policy.backoff]
base = "1ms"
cap = "5ms"

[[expect]]
check = "no_double_effects"

[[expect]]
check = "success_rate"
min = 1.0
)";

TEST(runner, h2_builtin_clients_retry_an_unkeyed_post_that_was_never_processed) {
    const record::run_record run = run_scenario(load(h2_unprocessed));
    ASSERT_EQ(run.harness_error, "");
    ASSERT_THAT(run.journal, SizeIs(18));
    ASSERT_THAT(run.wire, SizeIs(18));
    for (const record::wire_detail& w : run.wire) {
        ASSERT_TRUE(w.protocol);
        EXPECT_EQ(*w.protocol, "h2c");
        EXPECT_TRUE(w.stream);
    }
    for (const record::client_record& c : run.clients) {
        EXPECT_EQ(c.attempts, 3u) << c.operation;
        EXPECT_EQ(c.attempt_outcomes, "reset_before_write, reset_before_write, 201") << c.operation;
    }
    ASSERT_THAT(run.rule_firings, SizeIs(2));
    EXPECT_EQ(run.rule_firings[0].fired, 6u);
    EXPECT_EQ(run.rule_firings[1].fired, 6u);
    for (const record::verdict& v : run.verdicts) EXPECT_TRUE(v.passed) << v.check << ": " << v.summary;
    EXPECT_EQ(exit_code_of(run), exit_code::passed);
}

// GOAWAY after the commit, then the end of the connection: the client cannot know whether the POST
// was processed. The same scenario passes with a policy that does not resend an unkeyed POST and
// fails no_double_effects with one that treats it as idempotent (the naive preset).
std::string h2_lost_response(std::string_view preset) {
    return R"(name = "h2-lost-response"
seed = 12
time_limit = "10s"

[[fault]]
kind = "goaway"
phase = "after"
[fault.match]
method = "POST"
path = "/payments"
[fault.when]
attempts = [1]

[client]
protocol = "h2"
preset = ")" + std::string{preset} + R"("
clients = 2
operations = 2
[client.policy]
idempotency_keys = "none"
budget = { kind = "none" }
[client.policy.backoff]
base = "1ms"
cap = "5ms"

[[expect]]
check = "no_double_effects"
)";
}

TEST(runner, h2_a_policy_that_resends_an_unkeyed_post_after_a_goaway_covering_it_fails_no_double_effects) {
    const record::run_record careful = run_scenario(load(h2_lost_response("good")));
    ASSERT_EQ(careful.harness_error, "");
    ASSERT_THAT(careful.journal, SizeIs(4));
    for (const record::client_record& c : careful.clients) EXPECT_EQ(c.attempt_outcomes, "eof_after_write") << c.operation;
    ASSERT_FALSE(careful.verdicts.empty());
    EXPECT_EQ(careful.verdicts[0].check, "no_double_effects");
    EXPECT_TRUE(careful.verdicts[0].passed) << careful.verdicts[0].summary;

    const record::run_record naive = run_scenario(load(h2_lost_response("naive")));
    ASSERT_EQ(naive.harness_error, "");
    ASSERT_FALSE(naive.verdicts.empty());
    EXPECT_EQ(naive.verdicts[0].check, "no_double_effects");
    EXPECT_FALSE(naive.verdicts[0].passed);
    EXPECT_THAT(naive.verdicts[0].evidence, SizeIs(4));
    EXPECT_EQ(exit_code_of(naive), exit_code::check_failed);
}

// With [server] tls, protocol = "h2" is HTTP/2 chosen by ALPN.
TEST(runner, h2_over_tls_is_chosen_by_alpn) {
    std::string text = tiny;
    text.replace(text.find("[[fault]]"), 9, "[server]\ntls = true\n\n[[fault]]");
    text.replace(text.find("[client]"), 8, "[client]\nprotocol = \"h2\"");
    const record::run_record run = run_scenario(load(text));
    ASSERT_EQ(run.harness_error, "");
    ASSERT_THAT(run.wire, SizeIs(12));
    for (const record::wire_detail& w : run.wire) {
        ASSERT_TRUE(w.protocol);
        EXPECT_EQ(*w.protocol, "h2");
    }
    for (const record::verdict& v : run.verdicts) EXPECT_TRUE(v.passed) << v.check << ": " << v.summary;
}

// A command client gets the CA as {ca} and FAULTLINE_CA; the file is the run's and goes with it.
TEST(runner, with_tls_a_command_client_gets_the_ca_file_which_the_run_removes) {
    if (!have_curl()) GTEST_SKIP() << "needs curl";
    std::string text = late_command;
    text.replace(text.find("[[fault]]"), 9, "[server]\ntls = true\n\n[[fault]]");
    text.replace(text.find("curl -s"), 7, "echo $FAULTLINE_CA; test {ca} = $FAULTLINE_CA && curl -s --cacert {ca}");
    text.replace(text.find("sleep 0.4; exit 1"), 17, "exit 0");
    const record::run_record run = run_scenario(load(text));
    ASSERT_EQ(run.harness_error, "");
    ASSERT_TRUE(run.command.has_value());
    ASSERT_THAT(run.command->processes, SizeIs(1));
    const record::process_record& p = run.command->processes.front();
    EXPECT_EQ(p.exit_status, 0) << run.command->stderr_text;
    ASSERT_THAT(run.journal, SizeIs(1));
    EXPECT_EQ(run.journal.front().status, 503);
    const std::string ca_file = run.command->stdout_text.substr(0, run.command->stdout_text.find('\n'));
    EXPECT_THAT(ca_file, HasSubstr("-ca.pem"));
    EXPECT_FALSE(std::filesystem::exists(ca_file)) << ca_file;
}

TEST(runner, a_command_that_names_the_ca_without_tls_is_a_harness_error) {
    std::string text = late_command;
    text.replace(text.find("curl -s"), 7, "curl -s --cacert {ca}");
    const record::run_record run = run_scenario(load(text));
    EXPECT_THAT(run.harness_error, HasSubstr("names {ca}, the run's CA file, but the server does not speak TLS"));
    EXPECT_EQ(exit_code_of(run), exit_code::harness_error);
}

// client -> relay-a -> relay-b -> a service that always answers 503, every layer making 2 attempts:
// per operation 2 attempts at relay-a, 4 at relay-b and 8 at the backend, as one merged history.
TEST(runner, relay_tiers_multiply_attempts_and_their_journals_are_merged) {
    const scenario s = load(R"(name = "chain"
seed = 5
time_limit = "20s"

[[fault]]
kind = "status"
status = 503

[client]
operations = 3
[[client.request]]
method = "GET"
path = "/kv/k{op}"
[client.policy]
max_attempts = 2
[client.policy.backoff]
base = "1ms"
cap = "2ms"
[client.policy.budget]
kind = "none"

[[relay]]
name = "relay-a"
[relay.policy]
max_attempts = 2
[relay.policy.backoff]
base = "1ms"
cap = "2ms"
[relay.policy.budget]
kind = "none"

[[relay]]
name = "relay-b"
[relay.policy]
max_attempts = 2
[relay.policy.backoff]
base = "1ms"
cap = "2ms"
[relay.policy.budget]
kind = "none"

[[expect]]
check = "amplification"
max_ratio = 14
max_peak_ratio = 14
window = "20s"
min_first_attempts = 3
)");
    const record::run_record run = run_scenario(s);
    ASSERT_EQ(run.harness_error, "");
    auto at = [&](std::string_view instance) {
        return std::count_if(run.journal.begin(), run.journal.end(),
                             [&](const record::journal_record& r) { return r.instance == instance; });
    };
    EXPECT_EQ(at("relay-a"), 6);
    EXPECT_EQ(at("relay-b"), 12);
    EXPECT_EQ(at("backend"), 24);
    ASSERT_THAT(run.journal, SizeIs(42));
    // One operation per client operation across every tier: the relays pass its name on.
    EXPECT_THAT(group_operations(run.journal), SizeIs(3));
    ASSERT_THAT(run.clients, SizeIs(3));
    for (const record::client_record& c : run.clients) EXPECT_EQ(c.attempts, 2u);
    ASSERT_FALSE(run.verdicts.empty());
    EXPECT_TRUE(run.verdicts[0].passed) << run.verdicts[0].summary;
    EXPECT_EQ(exit_code_of(run), exit_code::passed);
}

// [proxy] in front of a real service: the upstream is a faultline server with no rules, started here
// on an ephemeral port, whose built-in POST /payments charges every time it runs (not idempotent).
// The lost response after commit happens at the proxy, so the upstream's own ledger tells what
// really committed.
class proxied_upstream {
public:
    proxied_upstream() : context_{server::model_config{}, {}, 1}, listener_{context_} {
        if (const auto ec = listener_.start()) ADD_FAILURE() << "upstream did not start: " << ec.message();
    }
    std::uint16_t port() const { return listener_.port(); }
    std::uint64_t charges() const { return context_.model.charge_count(); }

private:
    server::server_context context_;
    server::server listener_;
};

std::string proxied_scenario(std::uint16_t upstream_port, std::string_view client_policy) {
    return R"(name = "proxied"
seed = 5
time_limit = "10s"

[proxy]
upstream = "127.0.0.1:)" + std::to_string(upstream_port) + R"("
upstream_timeout = "5s"

[[fault]]
name = "lose-first-reply"
kind = "lost_response"
then = "reset"
[fault.match]
method = "POST"
path = "/payments"
[fault.when]
attempts = [1]

[client]
clients = 2
operations = 3
)" + std::string{client_policy} + R"(
[[client.request]]
method = "POST"
path = "/payments"
body = '{"amount":5}'
[client.policy.backoff]
base = "1ms"
cap = "2ms"

[[expect]]
check = "no_double_effects"
)";
}

TEST(runner, through_a_proxy_a_retried_lost_response_charges_the_real_service_twice) {
    proxied_upstream upstream;
    const scenario s = load(proxied_scenario(upstream.port(), "preset = \"no_keys\""));
    const record::run_record run = run_scenario(s);
    ASSERT_EQ(run.harness_error, "");
    // Six operations, each: attempt 1 forwarded (the upstream commits, 201), its reply reset at the
    // proxy; attempt 2 forwarded again and answered.
    EXPECT_EQ(upstream.charges(), 12U);
    ASSERT_THAT(run.journal, SizeIs(12));
    // What the upstream did is in each attempt's wire detail, in the journal's (seq) order.
    ASSERT_THAT(run.wire, SizeIs(12));
    for (std::size_t i = 0; i < run.journal.size(); ++i) {
        EXPECT_EQ(run.wire[i].seq, run.journal[i].seq);
        EXPECT_EQ(run.wire[i].upstream_status, 201) << run.wire[i].seq;
    }
    for (const record::journal_record& r : run.journal) {
        EXPECT_EQ(r.effect, record::effect_kind::committed) << r.seq;
        EXPECT_EQ(r.outcome, r.attempt == 1 ? record::wire_outcome::reset : record::wire_outcome::responded) << r.seq;
    }
    // The proxy's merge anchor is not a run event (a spell of the machine's load may be).
    for (const record::server_event& e : run.server_events) EXPECT_EQ(e.kind, record::server_event_kind::server_late);
    ASSERT_FALSE(run.verdicts.empty());
    const record::verdict& v = run.verdicts.front();
    EXPECT_EQ(v.check, "no_double_effects");
    EXPECT_FALSE(v.passed);
    EXPECT_THAT(v.summary, HasSubstr("6 operations, 12 committed effects, 6 operations with more than one"));
    ASSERT_EQ(v.evidence_total, 6U);
    for (const record::evidence_item& e : v.evidence) {
        // Both attempts of the operation, by seq, and the detail says two commits.
        ASSERT_THAT(e.seqs, SizeIs(2));
        const auto attempt_of = [&](std::uint64_t seq) {
            const auto it = std::find_if(run.journal.begin(), run.journal.end(),
                                         [&](const record::journal_record& r) { return r.seq == seq; });
            return it == run.journal.end() ? record::journal_record{} : *it;
        };
        EXPECT_EQ(attempt_of(e.seqs[0]).operation, e.operation);
        EXPECT_EQ(attempt_of(e.seqs[1]).operation, e.operation);
        EXPECT_EQ(attempt_of(e.seqs[0]).attempt, 1U);
        EXPECT_EQ(attempt_of(e.seqs[1]).attempt, 2U);
        EXPECT_THAT(e.detail, HasSubstr("2 committed effects"));
    }
    EXPECT_EQ(exit_code_of(run), exit_code::check_failed);
}

TEST(runner, through_a_proxy_a_client_that_does_not_resend_an_unkeyed_write_passes) {
    proxied_upstream upstream;
    const scenario s = load(proxied_scenario(upstream.port(), "preset = \"good\"\n[client.policy]\nidempotency_keys = \"none\""));
    const record::run_record run = run_scenario(s);
    ASSERT_EQ(run.harness_error, "");
    EXPECT_EQ(upstream.charges(), 6U);
    ASSERT_THAT(run.journal, SizeIs(6));
    ASSERT_FALSE(run.verdicts.empty());
    const record::verdict& v = run.verdicts.front();
    EXPECT_EQ(v.check, "no_double_effects");
    EXPECT_TRUE(v.passed) << v.summary;
    EXPECT_THAT(v.summary, HasSubstr("6 operations, 6 committed effects, 0 operations with more than one; "
                                     "6 indeterminate"));
    EXPECT_EQ(exit_code_of(run), exit_code::passed);
}

TEST(runner, a_proxy_upstream_that_is_not_listening_is_a_harness_error) {
    std::uint16_t closed = 0;
    {
        proxied_upstream gone;
        closed = gone.port();
    }
    const scenario s = load(proxied_scenario(closed, "preset = \"good\""));
    const record::run_record run = run_scenario(s);
    EXPECT_THAT(run.harness_error, HasSubstr("the [proxy] upstream 127.0.0.1:" + std::to_string(closed) +
                                             " is not reachable: "));
    EXPECT_EQ(exit_code_of(run), exit_code::harness_error);
}

}  // namespace
}  // namespace faultline::runner
