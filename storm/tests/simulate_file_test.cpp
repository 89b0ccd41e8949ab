// Simulation files: every key read exactly, the defaults filled in by make_*_config, and every kind
// of bad input an error at its file:line:column.
#include "faultline/storm/simulate_file.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>

namespace faultline::storm {
namespace {

using namespace std::chrono_literals;

std::string first_error(const std::string& text) {
    const simulate_file_result r = parse_simulate_file(text, "f.toml");
    EXPECT_FALSE(r.ok()) << text;
    return r.errors.empty() ? std::string{} : r.errors.front().to_string();
}

TEST(simulate_file, an_occ_file_sets_every_key) {
    const simulate_file_result r = parse_simulate_file(R"(name = "aws"
description = "the blog's sweep"
seed = 42

[simulate]
model = "occ"
clients = "10..30:10"
strategy = ["full", "equal"]
trials = 7
threads = 1
base = "4ms"
cap = "1s"
hop_mean = "9ms"
hop_sd = "1ms"
csv = "a.csv"
json = "a.json"
svg = "a.svg"
)",
                                                       "f.toml");
    ASSERT_TRUE(r.ok()) << r.errors.front().to_string();
    EXPECT_EQ(r.value->name, "aws");
    EXPECT_EQ(r.value->description, "the blog's sweep");
    const simulate_settings& s = r.value->settings;
    EXPECT_EQ(s.model, simulate_model::occ);
    EXPECT_EQ(s.clients, (std::vector<std::uint32_t>{10, 20, 30}));
    EXPECT_EQ(s.strategies, (std::vector<occ_strategy>{occ_strategy::full, occ_strategy::equal}));
    EXPECT_EQ(s.trials, 7u);
    EXPECT_EQ(s.seed, 42u);
    EXPECT_EQ(s.threads, 1u);
    EXPECT_EQ(s.base, duration{4ms});
    EXPECT_EQ(s.cap, duration{1s});
    EXPECT_EQ(s.hop_mean, duration{9ms});
    EXPECT_EQ(s.hop_sd, duration{1ms});
    EXPECT_EQ(s.csv, "a.csv");
    EXPECT_EQ(s.json, "a.json");
    EXPECT_EQ(s.svg, "a.svg");

    const occ_sweep_config c = make_occ_config(s);
    EXPECT_EQ(c.clients, (std::vector<std::uint32_t>{10, 20, 30}));
    EXPECT_EQ(c.trials, 7u);
    EXPECT_EQ(c.seed, 42u);
    EXPECT_EQ(c.threads, 1u);
    EXPECT_EQ(c.base, duration{4ms});
    EXPECT_EQ(c.cap, duration{1s});
    EXPECT_EQ(c.hop_mean, duration{9ms});
    EXPECT_EQ(c.hop_sd, duration{1ms});
}

TEST(simulate_file, an_empty_simulate_table_is_the_blogs_sweep) {
    const simulate_file_result r = parse_simulate_file("[simulate]\n", "f.toml");
    ASSERT_TRUE(r.ok()) << r.errors.front().to_string();
    EXPECT_FALSE(r.value->settings.seed);
    const occ_sweep_config c = make_occ_config(r.value->settings);
    EXPECT_EQ(c.clients.size(), 19u);
    EXPECT_EQ(c.clients.front(), 10u);
    EXPECT_EQ(c.clients.back(), 190u);
    EXPECT_EQ(c.strategies.size(), 5u);
    EXPECT_EQ(c.trials, 100u);
    EXPECT_EQ(c.seed, 1u);
    EXPECT_EQ(c.threads, 2u);
    EXPECT_EQ(c.base, duration{5ms});
    EXPECT_EQ(c.cap, duration{2000ms});
}

TEST(simulate_file, clients_and_strategies_in_either_form) {
    const simulate_file_result r = parse_simulate_file(
        "[simulate]\nclients = [100, 5]\nstrategy = \"none,decorrelated\"\n", "f.toml");
    ASSERT_TRUE(r.ok()) << r.errors.front().to_string();
    EXPECT_EQ(r.value->settings.clients, (std::vector<std::uint32_t>{100, 5}));
    EXPECT_EQ(r.value->settings.strategies,
              (std::vector<occ_strategy>{occ_strategy::none, occ_strategy::decorrelated}));
    const simulate_file_result all = parse_simulate_file("[simulate]\nstrategy = \"all\"\n", "f.toml");
    ASSERT_TRUE(all.ok());
    EXPECT_EQ(all.value->settings.strategies->size(), 5u);
}

TEST(simulate_file, a_capacity_file_lays_its_parameters_over_the_scenario) {
    const simulate_file_result r = parse_simulate_file(R"(seed = 3
[simulate]
model = "capacity"
scenario = "metastable"
clients = 400
ops = 20

[simulate.capacity]
op_interval = "500ms"
capacity_per_sec = 1500
queue_limit = 300
failure_probability = 0.25
outage_start = "2s"
outage_end = "4s"
outage_capacity_factor = 0.5
attempt_timeout = "800ms"
hop = "2ms"
bin = "50ms"
)",
                                                       "f.toml");
    ASSERT_TRUE(r.ok()) << r.errors.front().to_string();
    const capacity_config c = make_capacity_config(r.value->settings);
    const capacity_config scenario = *find_capacity_scenario("metastable");
    EXPECT_EQ(c.clients, 400u);
    EXPECT_EQ(c.ops_per_client, 20u);
    EXPECT_EQ(c.op_interval, duration{500ms});
    EXPECT_EQ(c.capacity_per_sec, 1500);
    EXPECT_EQ(c.queue_limit, 300u);
    EXPECT_EQ(c.failure_probability, 0.25);
    EXPECT_EQ(c.outage_start, duration{2s});
    EXPECT_EQ(c.outage_end, duration{4s});
    EXPECT_EQ(c.outage_capacity_factor, 0.5);
    EXPECT_EQ(c.attempt_timeout, duration{800ms});
    EXPECT_EQ(c.hop, duration{2ms});
    EXPECT_EQ(c.bin, duration{50ms});
    EXPECT_EQ(c.seed, 3u);
    ASSERT_EQ(c.layers.size(), scenario.layers.size());  // what the file does not name is the scenario's
    EXPECT_EQ(c.layers.front().max_attempts, scenario.layers.front().max_attempts);
}

TEST(simulate_file, a_capacity_file_without_overrides_is_the_scenario) {
    const simulate_file_result r =
        parse_simulate_file("[simulate]\nmodel = \"capacity\"\nscenario = \"layers_3x3\"\n", "f.toml");
    ASSERT_TRUE(r.ok()) << r.errors.front().to_string();
    const capacity_config c = make_capacity_config(r.value->settings);
    const capacity_config scenario = *find_capacity_scenario("layers_3x3");
    EXPECT_EQ(c.clients, scenario.clients);
    EXPECT_EQ(c.ops_per_client, scenario.ops_per_client);
    EXPECT_EQ(c.failure_probability, scenario.failure_probability);
    EXPECT_EQ(c.seed, 1u);
}

struct bad_file {
    std::string text;
    std::string error;  // the whole first error, position included
};

TEST(simulate_file, bad_input_is_an_error_at_its_position) {
    const std::vector<bad_file> cases{
        {"[simulate]\nmodle = \"occ\"\n",
         "f.toml:2:1: [simulate]: unknown key \"modle\"; allowed: base, cap, capacity, clients, csv, hop_mean, hop_sd, "
         "json, model, ops, scenario, strategy, svg, threads, trials"},
        {"[simulate]\nmodel = \"queue\"\n", "f.toml:2:9: [simulate]: model: unknown value \"queue\"; allowed: occ, capacity"},
        {"[simulate]\nstrategy = [\"full\", \"fast\"]\n",
         "f.toml:2:12: [simulate]: strategy: unknown strategy 'fast'; known: all, none, exponential, equal, full, decorrelated"},
        {"[simulate]\nstrategy = []\n", "f.toml:2:12: [simulate]: strategy: the strategy list is empty"},
        {"[simulate]\ntrials = 0\n", "f.toml:2:10: [simulate]: trials: must be in [1, 100000], got 0"},
        {"[simulate]\ntrials = \"5\"\n", "f.toml:2:10: [simulate]: trials: expected an integer, got a string"},
        {"[simulate]\nclients = \"190..10:10\"\n",
         "f.toml:2:11: [simulate]: clients: the range '190..10:10' is inverted (190 > 10)"},
        {"[simulate]\nclients = \"\"\n", "f.toml:2:11: [simulate]: clients: the client list is empty"},
        {"[simulate]\nclients = []\n", "f.toml:2:11: [simulate]: clients: the client list is empty"},
        {"[simulate]\nclients = 0\n", "f.toml:2:11: [simulate]: clients: must be in [1, 4294967295], got 0"},
        {"[simulate]\nclients = [10, 0]\n",
         "f.toml:2:16: [simulate]: clients: every item must be an integer in [1, 4294967295], got 0"},
        {"[simulate]\nhop_mean = \"2h\"\n", "f.toml:2:12: [simulate]: hop_mean: must be in [0s, 1h], got \"2h\""},
        {"[simulate]\nbase = \"5\"\n", "f.toml:2:8: [simulate]: base: bad duration \"5\": missing unit (ns, us, ms, s, m, h)"},
        {"[simulate]\nclients = \"10000\"\ntrials = 1000\n",
         "f.toml:1:1: [simulate]: the sweep would process about 125000000000 events (clients^2 / 4 per trial); at most "
         "2000000000 are allowed: fewer clients, strategies or trials"},
        {"[simulate]\nclients = \"20000\"\n", "f.toml:1:1: [simulate]: clients must be in 1..10000, got 20000"},
        {"[simulate]\nscenario = \"layers_3x3\"\n",
         "f.toml:2:12: [simulate]: scenario: applies to model = \"capacity\"; this file's model is \"occ\""},
        {"[simulate]\nmodel = \"capacity\"\nscenario = \"layers_3x3\"\ntrials = 3\n",
         "f.toml:4:10: [simulate]: trials: applies to model = \"occ\"; this file's model is \"capacity\""},
        {"[simulate]\nmodel = \"capacity\"\nscenario = \"nope\"\n",
         "f.toml:3:12: [simulate]: scenario: unknown value \"nope\"; allowed: layers_3x3, budget_per_layer, "
         "token_bucket, retries_p50, metastable, metastable_budget"},
        {"[simulate]\nmodel = \"capacity\"\nscenario = \"layers_3x3\"\nclients = \"10,20\"\n",
         "f.toml:1:1: [simulate]: the capacity model takes one client count, got 2"},
        {"[simulate]\nmodel = \"capacity\"\nscenario = \"layers_3x3\"\nclients = 1000000\nops = 1000\n",
         "f.toml:1:1: [simulate]: clients x ops_per_client must be at most 100000000"},
        {"[simulate]\nmodel = \"capacity\"\nscenario = \"layers_3x3\"\n[simulate.capacity]\nqueue = 5\n",
         "f.toml:5:1: [simulate.capacity]: unknown key \"queue\"; allowed: attempt_timeout, bin, capacity_per_sec, "
         "failure_probability, hop, op_interval, outage_capacity_factor, outage_end, outage_start, queue_limit"},
        {"[simulate]\nseed = 4\n", "f.toml:2:8: [simulate]: seed: seed is a top-level key, as in scenarios"},
        {"seed = -1\n[simulate]\n", "f.toml:1:8: seed: must be at least 0, got -1"},
        {"name = \"x\"\n", "f.toml:1:1: missing required key \"simulate\""},
        {"[simulate]\ncsv = \"\"\n", "f.toml:2:7: [simulate]: csv: must name a file"},
        {"[simulate\n", "f.toml:1:10: TOML syntax error:"},
    };
    for (const bad_file& c : cases) {
        const std::string error = first_error(c.text);
        EXPECT_EQ(error.substr(0, c.error.size()), c.error) << c.text;
    }
}

TEST(simulate_file, a_missing_file_is_an_error) {
    const simulate_file_result r = load_simulate_file("/nonexistent/sweep.toml");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.errors.front().to_string().find("/nonexistent/sweep.toml"), std::string::npos);
}

TEST(simulate_settings, settings_of_the_other_model_are_refused) {
    simulate_settings s;
    s.scenario = "layers_3x3";
    EXPECT_THROW((void)make_occ_config(s), std::invalid_argument);
    s.model = simulate_model::capacity;
    s.trials = 3;
    EXPECT_THROW((void)make_capacity_config(s), std::invalid_argument);
    s.trials.reset();
    EXPECT_NO_THROW((void)make_capacity_config(s));
    s.scenario.reset();
    EXPECT_THROW((void)make_capacity_config(s), std::invalid_argument);
}

}  // namespace
}  // namespace faultline::storm
