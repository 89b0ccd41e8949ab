// The capacity model's shipped scenarios (docs/storms.md explains each, and storm/tests asserts the
// figure each one is known for).
#include <chrono>

#include "faultline/storm/capacity.hpp"

namespace faultline::storm {

namespace {

using namespace std::chrono_literals;

layer_config attempts(std::uint32_t n) {
    layer_config layer;
    layer.max_attempts = n;
    return layer;
}

layer_config with_ratio_budget(layer_config layer, double percent) {
    layer.budget = budget_kind::ratio;
    layer.percent_can_retry = percent;
    // A floor is needed: retry::ratio_budget holds every window to the rule, so with no floor a
    // retry right after its window's first attempts would have no credit yet (budget.hpp).
    layer.min_retries_per_sec = 1;
    return layer;
}

layer_config with_token_bucket(layer_config layer, double max_tokens, double ratio) {
    layer.budget = budget_kind::token_bucket;
    layer.max_tokens = max_tokens;
    layer.token_ratio = ratio;
    return layer;
}

// A dependency that fails every request: what each layer's retries multiply.
capacity_config failing_backend() {
    capacity_config c;
    c.clients = 1000;
    c.ops_per_client = 10;
    c.capacity_per_sec = 1e6;
    c.queue_limit = 100'000;
    c.failure_probability = 1.0;
    c.outage_start = 0s;
    c.outage_end = 0s;
    return c;
}

// 800 operations/s against a backend of 1000/s whose capacity drops to 10 % for 5 s; callers give up
// after 1 s and retry up to 4 times; the backend queue holds 5 s of work.
capacity_config slowdown() {
    capacity_config c;
    c.clients = 800;
    c.ops_per_client = 60;
    c.op_interval = 1s;
    c.capacity_per_sec = 1000;
    c.queue_limit = 5000;
    c.outage_start = 10s;
    c.outage_end = 15s;
    c.outage_capacity_factor = 0.1;
    c.attempt_timeout = 1s;
    c.layers = {attempts(4)};
    return c;
}

}  // namespace

std::vector<capacity_scenario> capacity_scenarios() {
    std::vector<capacity_scenario> out;

    capacity_config layered = failing_backend();
    layered.layers = {attempts(3), attempts(3), attempts(3)};
    out.push_back({"layers_3x3", "3 layers x 3 attempts, backend failing every request: 27x at the backend", layered});

    capacity_config budgeted = layered;
    for (layer_config& layer : budgeted.layers) layer = with_ratio_budget(layer, 0.1);
    out.push_back({"budget_per_layer", "the same with a 10 % retry budget at each layer: about 1.1x per layer", budgeted});

    capacity_config bucket = failing_backend();
    // The bucket's worst case: 0.085 is just under ratio / (1 + ratio) = 0.091, the highest failure
    // rate at which successes still refill what failures cost, so nearly every retry gets through;
    // above it the bucket drains and cuts retries (towards 1.0x): it holds amplification near 1.1x.
    bucket.failure_probability = 0.085;
    bucket.layers = {with_token_bucket(attempts(3), 100, 0.1)};
    out.push_back({"token_bucket", "gRFC A6 token bucket (100 tokens, ratio 0.1) at its break-even failure rate: about 1.1x", bucket});

    capacity_config half = failing_backend();
    half.clients = 10'000;
    half.failure_probability = 0.5;
    half.layers = {attempts(4)};
    out.push_back({"retries_p50", "3 retries, each attempt failing with p = 0.5: 1 + 1/2 + 1/4 + 1/8 = 1.875x", half});

    out.push_back({"metastable", "a 5 s slowdown to 10 % capacity; 4 attempts, 1 s timeout: never recovers", slowdown()});

    capacity_config recovering = slowdown();
    recovering.layers = {with_ratio_budget(attempts(4), 0.1)};
    out.push_back({"metastable_budget", "the same slowdown with a 10 % retry budget: recovers", recovering});
    return out;
}

std::optional<capacity_config> find_capacity_scenario(std::string_view name) {
    for (const capacity_scenario& s : capacity_scenarios())
        if (s.name == name) return s.config;
    return std::nullopt;
}

}  // namespace faultline::storm
