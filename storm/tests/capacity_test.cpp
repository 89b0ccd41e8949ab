#include "faultline/storm/capacity.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>

namespace faultline::storm {
namespace {

using namespace std::chrono_literals;

capacity_config scenario(std::string_view name) {
    const auto found = find_capacity_scenario(name);
    EXPECT_TRUE(found.has_value()) << name;
    return found.value_or(capacity_config{});
}

// One client, one operation at time 0 (an interval of 1 ns leaves no room for a phase), one layer
// with plain exponential backoff from 10 ms, a backend serving in 1 ms, hops of 1 ms.
capacity_config by_hand(std::uint32_t attempts) {
    capacity_config c;
    c.clients = 1;
    c.ops_per_client = 1;
    c.op_interval = 1ns;
    c.capacity_per_sec = 1000;
    c.outage_end = 0s;
    c.layers[0].max_attempts = attempts;
    c.layers[0].backoff.with_jitter(retry::jitter_kind::none);
    return c;
}

TEST(capacity_model, a_failing_attempt_and_its_retries_by_hand) {
    capacity_config c = by_hand(3);
    c.failure_probability = 1.0;
    const capacity_result r = run_capacity(c);
    // Sent 0, served 1..2 ms, reply 3 ms; +10 ms: sent 13, reply 16; +20 ms: sent 36, reply 39.
    EXPECT_EQ(r.end, 39ms);
    EXPECT_EQ(r.events, 7u);  // the start, and an arrival and a reply per attempt
    EXPECT_EQ(r.attempts, (std::vector<std::uint64_t>{3}));
    EXPECT_EQ(r.failed, 1u);
    EXPECT_EQ(r.succeeded, 0u);
}

TEST(capacity_model, a_caller_that_gives_up_leaves_the_work_behind) {
    capacity_config c = by_hand(2);
    c.capacity_per_sec = 1;  // 1 s per request
    c.attempt_timeout = 100ms;
    const capacity_result r = run_capacity(c);
    // Attempt 1: served 1 ms .. 1001 ms, but the caller gives up at 100 ms; attempt 2 (sent 110 ms)
    // queues behind it, and its caller gives up at 210 ms.
    EXPECT_EQ(r.end, 210ms);
    EXPECT_EQ(r.failed, 1u);
    std::uint64_t timed_out = 0;
    std::uint64_t longest = 0;
    for (const capacity_bin& b : r.bins) {
        timed_out += b.timed_out;
        longest = std::max(longest, b.max_queue);
    }
    EXPECT_EQ(timed_out, 2u);
    EXPECT_EQ(longest, 1u);  // attempt 2 found attempt 1 still in the backend
}

TEST(capacity_model, a_full_queue_rejects_at_once) {
    capacity_config c = by_hand(2);
    c.capacity_per_sec = 1;
    c.attempt_timeout = 100ms;
    c.queue_limit = 1;
    const capacity_result r = run_capacity(c);
    // Attempt 2 arrives at 111 ms to a full backend and hears so one hop later.
    EXPECT_EQ(r.end, 112ms);
    std::uint64_t rejected = 0;
    for (const capacity_bin& b : r.bins) rejected += b.rejected;
    EXPECT_EQ(rejected, 1u);
}

TEST(capacity_model, same_seed_same_run) {
    capacity_config c = scenario("metastable");
    c.ops_per_client = 20;
    const capacity_result a = run_capacity(c);
    const capacity_result b = run_capacity(c);
    ASSERT_EQ(a.bins.size(), b.bins.size());
    for (std::size_t i = 0; i < a.bins.size(); ++i) {
        EXPECT_EQ(a.bins[i].offered, b.bins[i].offered);
        EXPECT_EQ(a.bins[i].goodput, b.bins[i].goodput);
    }
    EXPECT_EQ(a.events, b.events);
    c.seed = 2;
    EXPECT_NE(run_capacity(c).events, a.events);
}

TEST(capacity_scenarios, three_layers_of_three_attempts_make_27x) {
    const capacity_result r = run_capacity(scenario("layers_3x3"));
    EXPECT_EQ(r.amplification, 27.0);
    EXPECT_EQ(r.layer_amplification, (std::vector<double>{3.0, 3.0, 3.0}));
}

TEST(capacity_scenarios, a_ten_percent_budget_per_layer_keeps_each_near_1_1x) {
    const capacity_result r = run_capacity(scenario("budget_per_layer"));
    for (double a : r.layer_amplification) EXPECT_NEAR(a, 1.1, 0.02);
    EXPECT_LT(r.amplification, 1.4);  // about 1.1^3, against 27 without the budgets
}

TEST(capacity_scenarios, a_token_bucket_levels_near_1_1x) {
    const capacity_result r = run_capacity(scenario("token_bucket"));
    EXPECT_NEAR(r.amplification, 1.09, 0.02);
    // And at any failure rate: above the break-even rate the bucket drains and cuts retries.
    for (double p : {0.02, 0.05, 0.1, 0.2, 0.5, 1.0}) {
        capacity_config c = scenario("token_bucket");
        c.failure_probability = p;
        EXPECT_LT(run_capacity(c).amplification, 1.11) << "p = " << p;
    }
    capacity_config outage = scenario("token_bucket");
    outage.failure_probability = 1.0;
    EXPECT_LT(run_capacity(outage).amplification, 1.01);  // a total outage: only the first 50 retries
}

TEST(capacity_scenarios, three_retries_at_half_failure_give_1_875x) {
    const capacity_result r = run_capacity(scenario("retries_p50"));
    EXPECT_NEAR(r.amplification, 1.875, 0.02);
}

TEST(capacity_scenarios, a_slowdown_without_budget_is_metastable_and_with_one_recovers) {
    const capacity_result storm = run_capacity(scenario("metastable"));
    EXPECT_TRUE(storm.metastable);
    EXPECT_FALSE(storm.recovery.has_value());
    EXPECT_GT(storm.peak_load_per_bin, 5 * storm.normal_load_per_bin);
    const capacity_result calm = run_capacity(scenario("metastable_budget"));
    EXPECT_FALSE(calm.metastable);
    ASSERT_TRUE(calm.recovery.has_value());
    EXPECT_LT(*calm.recovery, 40s);
}

TEST(capacity_scenarios, every_shipped_scenario_is_valid_and_named_once) {
    std::vector<std::string_view> names;
    for (const capacity_scenario& s : capacity_scenarios()) {
        EXPECT_NO_THROW(validate(s.config)) << s.name;
        EXPECT_EQ(std::count(names.begin(), names.end(), s.name), 0) << s.name;
        names.push_back(s.name);
    }
    EXPECT_FALSE(find_capacity_scenario("no_such").has_value());
}

TEST(capacity_model, refuses_what_it_cannot_run) {
    auto refused = [](auto change) {
        capacity_config c;
        change(c);
        EXPECT_THROW(validate(c), std::invalid_argument);
    };
    refused([](capacity_config& c) { c.clients = 0; });
    refused([](capacity_config& c) { c.ops_per_client = 0; });
    refused([](capacity_config& c) { c.clients = 1'000'000; c.ops_per_client = 1000; });
    refused([](capacity_config& c) { c.layers.clear(); });
    refused([](capacity_config& c) { c.layers.resize(4); });
    refused([](capacity_config& c) { c.layers[0].max_attempts = 0; });
    refused([](capacity_config& c) { c.failure_probability = 1.5; });
    refused([](capacity_config& c) { c.queue_limit = 0; });
    refused([](capacity_config& c) { c.capacity_per_sec = 0; });
    refused([](capacity_config& c) { c.bin = 1ns; c.ops_per_client = 100; });
    refused([](capacity_config& c) { c.layers[0].budget = budget_kind::token_bucket; c.layers[0].max_tokens = 0; });
}

}  // namespace
}  // namespace faultline::storm
