#include "faultline/storm/occ.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <stdexcept>

namespace faultline::storm {
namespace {

using namespace std::chrono_literals;

// Hops of exactly 10 ms, so a run can be followed by hand.
occ_config fixed_hops(std::uint32_t clients, occ_strategy strategy) {
    occ_config c;
    c.clients = clients;
    c.strategy = strategy;
    c.hop_sd = 0ms;
    return c;
}

TEST(occ_trial, one_client_writes_once_after_four_hops) {
    const occ_trial_result r = run_occ_trial(fixed_hops(1, occ_strategy::full), 7);
    EXPECT_EQ(r.work, 1u);
    EXPECT_EQ(r.completion, 40ms);  // read request, read reply, write request, write reply
}

TEST(occ_trial, two_clients_without_backoff_by_hand) {
    // Both read at 10 ms and write at 30 ms; client 0 goes first at the tie and wins, client 1's
    // version is stale: its reply comes at 40 ms, it reads again at 50 ms, writes at 70 ms, wins,
    // and hears so at 80 ms.
    const occ_trial_result r = run_occ_trial(fixed_hops(2, occ_strategy::none), 7);
    EXPECT_EQ(r.work, 3u);
    EXPECT_EQ(r.completion, 80ms);
}

TEST(occ_trial, three_clients_without_backoff_by_hand) {
    // 30 ms: 3 writes, 1 wins; 70 ms: 2 writes, 1 wins; 110 ms: the last one wins, reply at 120 ms.
    const occ_trial_result r = run_occ_trial(fixed_hops(3, occ_strategy::none), 7);
    EXPECT_EQ(r.work, 6u);
    EXPECT_EQ(r.completion, 120ms);
}

TEST(occ_trial, exponential_first_retry_waits_twice_the_base) {
    // As two_clients_without_backoff, but the loser sleeps min(cap, 5 ms * 2^1) = 10 ms after its
    // 40 ms reply: read at 60 ms, write at 80 ms, reply at 90 ms.
    const occ_trial_result r = run_occ_trial(fixed_hops(2, occ_strategy::exponential), 7);
    EXPECT_EQ(r.work, 3u);
    EXPECT_EQ(r.completion, 90ms);
}

TEST(occ_trial, same_seed_same_numbers_other_seed_other_numbers) {
    occ_config c;
    c.clients = 50;
    c.strategy = occ_strategy::decorrelated;
    const occ_trial_result a = run_occ_trial(c, 42);
    const occ_trial_result b = run_occ_trial(c, 42);
    const occ_trial_result other = run_occ_trial(c, 43);
    EXPECT_EQ(a.work, b.work);
    EXPECT_EQ(a.completion, b.completion);
    EXPECT_NE(a.completion, other.completion);
}

occ_sweep_config sweep_at(std::vector<std::uint32_t> clients, std::uint32_t trials, unsigned threads) {
    occ_sweep_config c;
    c.clients = std::move(clients);
    c.strategies.assign(all_occ_strategies.begin(), all_occ_strategies.end());
    c.trials = trials;
    c.threads = threads;
    c.seed = 2015;
    return c;
}

TEST(occ_sweep, numbers_do_not_depend_on_threads_or_on_other_points) {
    const occ_sweep_result one = run_occ_sweep(sweep_at({10, 40}, 8, 1));
    const occ_sweep_result two = run_occ_sweep(sweep_at({10, 40}, 8, 2));
    const occ_sweep_result alone = run_occ_sweep(sweep_at({40}, 8, 2));
    ASSERT_EQ(one.points.size(), 10u);
    ASSERT_EQ(two.points.size(), 10u);
    for (std::size_t i = 0; i < one.points.size(); ++i) {
        EXPECT_EQ(one.points[i].work.mean, two.points[i].work.mean);
        EXPECT_EQ(one.points[i].completion_s.mean, two.points[i].completion_s.mean);
    }
    for (std::size_t i = 0; i < alone.points.size(); ++i) {
        EXPECT_EQ(alone.points[i].work.mean, one.points[5 + i].work.mean);
        EXPECT_EQ(alone.points[i].work.stddev, one.points[5 + i].work.stddev);
    }
    EXPECT_EQ(one.events, two.events);
}

// The AWS blog's published shape at 100 clients (read off its sweep): work, completion in seconds.
TEST(occ_sweep, matches_the_published_shape_at_100_clients) {
    const occ_sweep_result r = run_occ_sweep(sweep_at({100}, 100, 2));
    const std::map<occ_strategy, std::pair<double, double>> published{
        {occ_strategy::none, {2423, 2.0}},         {occ_strategy::exponential, {1859, 63.7}},
        {occ_strategy::full, {796, 4.9}},          {occ_strategy::equal, {812, 6.6}},
        {occ_strategy::decorrelated, {1000, 4.7}}};
    for (const occ_point& p : r.points) {
        const auto [work, completion] = published.at(p.strategy);
        EXPECT_NEAR(p.work.mean, work, 0.05 * work) << to_string(p.strategy);
        // Completion is noisy (a single slowest client); the published figures are one sweep's means.
        EXPECT_NEAR(p.completion_s.mean, completion, 0.15 * completion) << to_string(p.strategy);
    }
}

TEST(occ_sweep, jitter_beats_plain_exponential_backoff) {
    const occ_sweep_result r = run_occ_sweep(sweep_at({100}, 20, 2));
    std::map<occ_strategy, occ_point> at;
    for (const occ_point& p : r.points) at[p.strategy] = p;
    // No-jitter exponential does more work than full and decorrelated jitter...
    EXPECT_GT(at[occ_strategy::exponential].work.mean, 1.5 * at[occ_strategy::full].work.mean);
    EXPECT_GT(at[occ_strategy::exponential].work.mean, 1.5 * at[occ_strategy::decorrelated].work.mean);
    // ...full jitter does less work than equal jitter, and finishes sooner...
    EXPECT_LT(at[occ_strategy::full].work.mean, at[occ_strategy::equal].work.mean);
    EXPECT_LT(at[occ_strategy::full].completion_s.mean, at[occ_strategy::equal].completion_s.mean);
    // ...and lock-step exponential backoff takes by far the longest; no backoff is quickest but busiest.
    EXPECT_GT(at[occ_strategy::exponential].completion_s.mean, 5 * at[occ_strategy::full].completion_s.mean);
    EXPECT_LT(at[occ_strategy::none].completion_s.mean, at[occ_strategy::full].completion_s.mean);
    EXPECT_GT(at[occ_strategy::none].work.mean, at[occ_strategy::exponential].work.mean);
}

TEST(occ_sweep, refuses_what_it_cannot_run) {
    EXPECT_THROW(run_occ_sweep(sweep_at({}, 1, 1)), std::invalid_argument);
    EXPECT_THROW(run_occ_sweep(sweep_at({10}, 0, 1)), std::invalid_argument);
    EXPECT_THROW(run_occ_sweep(sweep_at({10}, 1, 0)), std::invalid_argument);
    EXPECT_THROW(run_occ_sweep(sweep_at({0}, 1, 1)), std::invalid_argument);
    EXPECT_THROW(run_occ_sweep(sweep_at({max_occ_clients + 1}, 1, 1)), std::invalid_argument);
    occ_sweep_config no_strategy = sweep_at({10}, 1, 1);
    no_strategy.strategies.clear();
    EXPECT_THROW(run_occ_sweep(no_strategy), std::invalid_argument);
    // 10,000 clients x 5 strategies x 100 trials: some 1.25e11 events.
    try {
        validate(sweep_at({max_occ_clients}, 100, 1));
        ADD_FAILURE() << "an absurd sweep was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string{e.what()}.find("events"), std::string::npos) << e.what();
    }
    EXPECT_THROW(run_occ_trial(occ_config{.clients = 0}, 1), std::invalid_argument);
    occ_sweep_config slow = sweep_at({10}, 1, 1);
    slow.hop_mean = 61min;
    EXPECT_THROW(validate(slow), std::invalid_argument);
    slow.hop_mean = 10ms;
    slow.cap = 25h;
    EXPECT_THROW(validate(slow), std::invalid_argument);
    EXPECT_THROW(run_occ_trial(occ_config{.clients = 10, .cap = 25h}, 1), std::invalid_argument);
}

TEST(occ_sweep, a_trial_past_the_virtual_clock_limit_stops_the_sweep) {
    // 190 clients without backoff make some 95 tries each; at 4 hops of 40 minutes a try the last
    // ones finish weeks after the start, beyond the clock's 2^50 ns (13 days).
    occ_config one;
    one.clients = 190;
    one.strategy = occ_strategy::none;
    one.hop_mean = 40min;
    EXPECT_THROW(run_occ_trial(one, 1), occ_clock_overflow);
    occ_sweep_config sweep = sweep_at({10, 190}, 3, 2);
    sweep.hop_mean = 40min;
    EXPECT_THROW(run_occ_sweep(sweep), occ_clock_overflow);
    // The limit is far from the blog's settings: its slowest point finishes in minutes.
    one.hop_mean = 10ms;
    EXPECT_NO_THROW(run_occ_trial(one, 1));
}

TEST(occ_strategy_names, round_trip) {
    for (occ_strategy s : all_occ_strategies) EXPECT_EQ(occ_strategy_from_string(to_string(s)), s);
    EXPECT_FALSE(occ_strategy_from_string("fast").has_value());
}

}  // namespace
}  // namespace faultline::storm
