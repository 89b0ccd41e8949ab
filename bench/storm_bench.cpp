// The simulator's speed: the AWS contention sweep (19 client counts x 5 strategies x 100 trials on
// 2 threads) and capacity storms of 100,000 clients x 10 operations. A plain timed program, not
// Google Benchmark: one sweep is the measurement. Prints wall and process CPU time (the machine may
// be shared, see docs/benchmarks.md) and events per second, the median of --repeat runs.
//   storm_bench [--repeat N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "faultline/storm/capacity.hpp"
#include "faultline/storm/occ.hpp"

namespace {

using namespace faultline::storm;

struct timing {
    double wall_s;
    double cpu_s;
    std::uint64_t events;
};

timing measure(const std::function<std::uint64_t()>& run) {
    const std::clock_t cpu = std::clock();
    const auto wall = std::chrono::steady_clock::now();
    const std::uint64_t events = run();
    return {std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count(),
            static_cast<double>(std::clock() - cpu) / CLOCKS_PER_SEC, events};
}

void report(const char* name, int repeat, const std::function<std::uint64_t()>& run) {
    std::vector<timing> runs;
    for (int i = 0; i < repeat; ++i) runs.push_back(measure(run));
    std::sort(runs.begin(), runs.end(), [](const timing& a, const timing& b) { return a.wall_s < b.wall_s; });
    const timing& median = runs[runs.size() / 2];
    std::printf("%-44s wall %7.3f s (min %7.3f)  cpu %7.3f s  %6.2f M events  %6.1f M events/s wall\n", name,
                median.wall_s, runs.front().wall_s, median.cpu_s, static_cast<double>(median.events) / 1e6,
                static_cast<double>(median.events) / 1e6 / median.wall_s);
}

capacity_config at_scale(const char* scenario) {
    capacity_config c = find_capacity_scenario(scenario).value();
    const double scale = 100'000.0 / c.clients;
    c.clients = 100'000;
    c.ops_per_client = 10;
    // The same load relative to capacity as the shipped scenario.
    c.capacity_per_sec *= scale;
    c.queue_limit = static_cast<std::uint32_t>(std::min(c.queue_limit * scale, double{max_capacity_queue}));
    // 10 operations a client last 10 s: move an outage inside that (3 s .. 5 s).
    if (c.outage_end > c.outage_start) {
        c.outage_start = std::chrono::seconds{3};
        c.outage_end = std::chrono::seconds{5};
    }
    return c;
}

}  // namespace

int main(int argc, char** argv) {
    int repeat = 5;
    if (argc == 3 && std::string{argv[1]} == "--repeat") repeat = std::max(1, std::atoi(argv[2]));
    occ_sweep_config sweep;
    for (std::uint32_t n = 10; n <= 190; n += 10) sweep.clients.push_back(n);
    sweep.strategies.assign(all_occ_strategies.begin(), all_occ_strategies.end());
    sweep.trials = 100;
    sweep.threads = 2;
    report("occ sweep 19 x 5 x 100, 2 threads", repeat, [&] { return run_occ_sweep(sweep).events; });
    sweep.threads = 1;
    report("occ sweep 19 x 5 x 100, 1 thread", repeat, [&] { return run_occ_sweep(sweep).events; });
    for (const char* name : {"retries_p50", "budget_per_layer", "metastable", "metastable_budget", "layers_3x3"}) {
        const capacity_config c = at_scale(name);
        const std::string label = std::string{"capacity "} + name + " 100k x 10";
        report(label.c_str(), repeat, [&] { return run_capacity(c).events; });
    }
    return 0;
}
