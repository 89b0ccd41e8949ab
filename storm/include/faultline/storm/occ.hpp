// The optimistic-concurrency contention model of the AWS Architecture Blog's "Exponential Backoff
// And Jitter" (2015): N clients all start at time 0 and each must make one conditional write to a
// single row. A client reads the row's version, then writes with it; the write fails when another
// client's write landed in between, and the client then backs off (retry n) and starts over. Every
// network hop (read request, read reply, write request, write reply) takes |N(hop_mean, hop_sd)|.
//
// Per trial: `work`, the number of write calls, and `completion`, when the last client received its
// successful write's reply. A trial is a pure function of (config, seed).
//
// The backoff between tries is retry/'s `backoff` on the simulation's virtual time (a plain count of
// nanoseconds): exponential = jitter_kind::none, equal / full / decorrelated = the jitter kinds of
// the same names; `none` retries at once, with no backoff at all (the blog's "no backoff" line).
// The blog numbers its first retry 1, not 0: see curve_base in occ.cpp.
//
// Only the server's ordering matters: a write at t3 whose read reached the server at t1 succeeds
// exactly when no successful write reached the server in (t1, t3). The simulation therefore keeps
// one event per try, the write's arrival at the server (carrying its read's arrival time), and the
// time of the last successful write; reads need no events of their own. A read and a write at the
// same nanosecond: the read sees the write.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "faultline/core/clock.hpp"
#include "faultline/core/enum_names.hpp"

namespace faultline::storm {

using faultline::duration;

enum class occ_strategy { none, exponential, equal, full, decorrelated };

inline constexpr enum_names occ_strategy_names{std::to_array<enum_name<occ_strategy>>({
    {occ_strategy::none, "none"},
    {occ_strategy::exponential, "exponential"},
    {occ_strategy::equal, "equal"},
    {occ_strategy::full, "full"},
    {occ_strategy::decorrelated, "decorrelated"},
})};
inline constexpr std::array all_occ_strategies = occ_strategy_names.values();

inline std::string_view to_string(occ_strategy strategy) { return occ_strategy_names(strategy); }
inline std::optional<occ_strategy> occ_strategy_from_string(std::string_view name) { return occ_strategy_names.from(name); }
// "all", or a comma list of strategy names ("full,equal"): the strategies in order, or an error
// message naming the unknown one and the known ones.
std::variant<std::vector<occ_strategy>, std::string> parse_occ_strategies(std::string_view text);

struct occ_config {
    std::uint32_t clients{100};
    occ_strategy strategy{occ_strategy::full};
    duration base{std::chrono::milliseconds{5}};
    duration cap{std::chrono::milliseconds{2000}};
    duration hop_mean{std::chrono::milliseconds{10}};
    duration hop_sd{std::chrono::milliseconds{2}};
};

struct occ_trial_result {
    std::uint64_t work = 0;  // write calls, the successful ones included (also the event count)
    duration completion{0};  // the last client's successful write reply
};

// The largest backoff cap and hop latency (mean or deviation) accepted: beyond any real network,
// and small enough that no sum of them can overflow the simulation's clock arithmetic.
inline constexpr duration max_occ_cap{std::chrono::hours{24}};
inline constexpr duration max_occ_hop{std::chrono::hours{1}};

// A trial's virtual clock reached its limit, 2^50 ns (13 days; the heap packs a time and a client
// index into one word): only absurd settings get there (hours-long hops, say).
struct occ_clock_overflow : std::range_error {
    occ_clock_overflow()
        : std::range_error{"a trial ran past 13 days of virtual time (2^50 ns, the simulator's clock limit): "
                           "shorter hops or cap, or fewer clients"} {}
};

// One trial. Deterministic: the same (config, seed) gives the same result on every platform.
// Throws std::invalid_argument when clients is 0 or above max_occ_clients, or a duration is out of
// range (base in (0, cap], cap up to max_occ_cap, hops in [0, max_occ_hop]); occ_clock_overflow.
occ_trial_result run_occ_trial(const occ_config& config, std::uint64_t seed);

// The largest client count accepted: a no-backoff trial does about N^2 / 4 writes, so 10,000 clients
// is already some 25 million events per trial.
inline constexpr std::uint32_t max_occ_clients = 10'000;

// A sweep: every client count x every strategy, `trials` trials each.
struct occ_sweep_config {
    std::vector<std::uint32_t> clients;
    std::vector<occ_strategy> strategies;
    std::uint32_t trials{100};
    std::uint64_t seed{1};
    unsigned threads{2};
    duration base{std::chrono::milliseconds{5}};
    duration cap{std::chrono::milliseconds{2000}};
    duration hop_mean{std::chrono::milliseconds{10}};
    duration hop_sd{std::chrono::milliseconds{2}};
};

// Mean and spread of one quantity over a point's trials.
struct summary {
    double mean = 0;
    double stddev = 0;  // sample standard deviation (n - 1); 0 for one trial
    double min = 0;
    double max = 0;
};

struct occ_point {
    std::uint32_t clients = 0;
    occ_strategy strategy = occ_strategy::none;
    summary work;
    summary completion_s;  // seconds
};

struct occ_sweep_result {
    std::vector<occ_point> points;  // clients-major, strategies in the order given
    std::uint64_t events = 0;       // write arrivals processed, all trials
};

// The seed of one trial: a function of (sweep seed, clients, strategy, trial) only, so a point's
// numbers do not depend on the other points of the sweep, on the thread count or on scheduling.
std::uint64_t occ_trial_seed(std::uint64_t sweep_seed, std::uint32_t clients, occ_strategy strategy,
                             std::uint32_t trial);

// Called now and then from the calling thread with (trials done, trials in all).
using progress_callback = std::function<void(std::uint64_t, std::uint64_t)>;

// Sweep limits: trials per point, trials in all (one 16-byte result each is kept), and the estimated
// events (write arrivals) of the whole sweep, N^2 / 4 per trial (no backoff's work, the largest),
// about two minutes on one core.
inline constexpr std::uint32_t max_occ_trials = 100'000;
inline constexpr std::uint64_t max_occ_jobs = 10'000'000;
inline constexpr double max_occ_estimated_events = 2e9;
inline constexpr unsigned max_occ_threads = 256;

double estimated_occ_events(const occ_sweep_config& config);

// Throws std::invalid_argument saying what is wrong: an empty client or strategy list, a client
// count out of 1..max_occ_clients, trials or threads 0 or beyond their limits, a sweep beyond
// max_occ_jobs or max_occ_estimated_events, or a duration out of range (as run_occ_trial).
void validate(const occ_sweep_config& config);

// Runs the sweep on `threads` threads (the calling thread is one of them); validates first. A
// trial's occ_clock_overflow stops the sweep and is rethrown here.
occ_sweep_result run_occ_sweep(const occ_sweep_config& config, const progress_callback& progress = {});

summary summarise(const std::vector<double>& values);

}  // namespace faultline::storm
