#include "faultline/storm/occ.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include "faultline/core/random.hpp"
#include "faultline/retry/backoff.hpp"
#include "fast_random.hpp"
#include "normal.hpp"

namespace faultline::storm {

namespace {

using ns = std::int64_t;

// A write reaching the server, packed into one word: its time in the high 50 bits, its client in
// the low 14. Comparing two words then orders by time and equal times by client index (so the order
// never depends on the heap's layout) in one comparison, and the heap moves 8 bytes, not 16. The
// try's read time lives beside the heap (read_at[client]): a client has one try in flight at most.
class write_arrival {
public:
    static constexpr int client_bits = 14;
    static_assert(max_occ_clients < (1u << client_bits), "a client index must fit its bits");
    // 2^50 ns, 13 days of virtual time: a trial reaching it stops with occ_clock_overflow.
    static constexpr ns max_time = (ns{1} << (64 - client_bits)) - 1;

    write_arrival(ns at, std::uint32_t client)
        : key_{(static_cast<std::uint64_t>(at) << client_bits) | client} {}

    ns at() const { return static_cast<ns>(key_ >> client_bits); }
    std::uint32_t client() const { return static_cast<std::uint32_t>(key_ & ((1u << client_bits) - 1)); }
    // Earliest first; equal times by client index.
    friend bool operator<(const write_arrival& a, const write_arrival& b) { return a.key_ < b.key_; }

private:
    std::uint64_t key_;
};

// The writes in flight, earliest on top: a binary min-heap with `replace_top`, because a failed
// write's retry takes its place (std::priority_queue would pop and push). A retry is nearly always
// later than most writes in flight, so replace_top works bottom-up (Floyd): the hole at the top
// sinks to a leaf along the earlier child — one comparison a level, computed, not branched on,
// since which child is earlier is a coin toss — and the new write then climbs the few levels it
// must. Holds at most one write per client; no allocation after the constructor.
class arrival_heap {
public:
    explicit arrival_heap(std::size_t capacity) { items_.reserve(capacity); }

    bool empty() const { return items_.empty(); }
    const write_arrival& top() const { return items_.front(); }

    void push(const write_arrival& w) {
        items_.push_back(w);
        climb(items_.size() - 1, w);
    }

    void pop() {
        const write_arrival last = items_.back();
        items_.pop_back();
        if (!items_.empty()) replace_top(last);
    }

    void replace_top(const write_arrival& w) {
        const std::size_t n = items_.size();
        std::size_t hole = 0;
        // Both children exist: move the earlier one up.
        for (std::size_t child = 1; child + 1 < n; child = 2 * hole + 1) {
            child += static_cast<std::size_t>(items_[child + 1] < items_[child]);
            items_[hole] = items_[child];
            hole = child;
        }
        if (2 * hole + 1 < n) {  // a last, lone child
            items_[hole] = items_[2 * hole + 1];
            hole = 2 * hole + 1;
        }
        climb(hole, w);
    }

private:
    // Puts `w` into the hole at `hole`, moving later parents down.
    void climb(std::size_t hole, const write_arrival& w) {
        while (hole > 0) {
            const std::size_t parent = (hole - 1) / 2;
            if (!(w < items_[parent])) break;
            items_[hole] = items_[parent];
            hole = parent;
        }
        items_[hole] = w;
    }

    std::vector<write_arrival> items_;
};

std::optional<retry::jitter_kind> jitter_of(occ_strategy strategy) {
    switch (strategy) {
        case occ_strategy::none: return std::nullopt;
        case occ_strategy::exponential: return retry::jitter_kind::none;
        case occ_strategy::equal: return retry::jitter_kind::equal;
        case occ_strategy::full: return retry::jitter_kind::full;
        case occ_strategy::decorrelated: return retry::jitter_kind::decorrelated;
    }
    return std::nullopt;
}

// The blog counts a client's tries from 0, so its first retry sleeps min(cap, base * 2^1); retry/
// counts retries from 0 (the first waits base). min(cap, base * 2^(n+1)) = min(cap, (2 base) * 2^n),
// so the blog's exponential, equal and full curves are retry/'s with twice the base. Decorrelated
// jitter starts from prev = base in both. (With retry/'s own indexing the full and equal jitter work
// at 100 clients comes out about 10 % above the published figures; with this, within 1 %.)
duration curve_base(occ_strategy strategy, duration base) {
    return strategy == occ_strategy::decorrelated ? base : 2 * base;
}

// One hop's latency, |N(mean, sd)|, in whole nanoseconds.
class hop_latency {
public:
    hop_latency(duration mean, duration sd)
        : mean_{static_cast<double>(mean.count())}, sd_{static_cast<double>(sd.count())} {}
    ns next(fast_random& random) { return static_cast<ns>(std::fabs(mean_ + sd_ * normal_.next(random))); }

private:
    double mean_;
    double sd_;
    normal_sampler normal_;
};

void check_clients(std::uint32_t clients) {
    if (clients == 0 || clients > max_occ_clients)
        throw std::invalid_argument{"clients must be in 1.." + std::to_string(max_occ_clients) + ", got " +
                                    std::to_string(clients)};
}

void check_durations(duration base, duration cap, duration hop_mean, duration hop_sd) {
    if (hop_mean < duration{0} || hop_sd < duration{0} || hop_mean > max_occ_hop || hop_sd > max_occ_hop)
        throw std::invalid_argument{"hop latency mean and deviation must be in [0, 1h]"};
    if (base <= duration{0} || cap < base || cap > max_occ_cap)
        throw std::invalid_argument{"backoff base must be positive, and cap at least base and at most 24h"};
}

}  // namespace

std::variant<std::vector<occ_strategy>, std::string> parse_occ_strategies(std::string_view text) {
    if (text == "all") return std::vector<occ_strategy>{all_occ_strategies.begin(), all_occ_strategies.end()};
    std::vector<occ_strategy> out;
    std::size_t start = 0;
    for (;;) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        const std::string_view name = text.substr(start, comma - start);
        const auto s = occ_strategy_from_string(name);
        if (!s)
            return "unknown strategy '" + std::string{name} +
                   "'; known: all, none, exponential, equal, full, decorrelated";
        out.push_back(*s);
        if (comma == text.size()) return out;
        start = comma + 1;
    }
}

occ_trial_result run_occ_trial(const occ_config& config, std::uint64_t seed) {
    check_clients(config.clients);
    check_durations(config.base, config.cap, config.hop_mean, config.hop_sd);
    fast_random random{seed};
    hop_latency hop{config.hop_mean, config.hop_sd};
    const std::optional<retry::jitter_kind> jitter = jitter_of(config.strategy);
    const auto policy = retry::backoff_policy{}
                            .with_base(curve_base(config.strategy, config.base))
                            .with_cap(config.cap)
                            .with_jitter(jitter.value_or(retry::jitter_kind::none));
    std::vector<retry::backoff> backoffs(config.clients, retry::backoff{policy});

    // The heap holds at most one write per client, so this reserve (and read_at) are the only allocations.
    arrival_heap queue{config.clients};  // with read_at, the trial's only allocations besides backoffs

    // A try that starts (sends its read) at `start`: its write's arrival at the server.
    std::vector<ns> read_at(config.clients);
    auto next_try = [&](std::uint32_t client, ns start) {
        const ns read = start + hop.next(random);
        read_at[client] = read;
        const ns arrival = read + hop.next(random) + hop.next(random);
        if (arrival > write_arrival::max_time) throw occ_clock_overflow{};
        return write_arrival{arrival, client};
    };
    for (std::uint32_t c = 0; c < config.clients; ++c) queue.push(next_try(c, 0));

    occ_trial_result result;
    ns last_success = std::numeric_limits<ns>::min();
    ns completion = 0;
    while (!queue.empty()) {
        const write_arrival w = queue.top();
        ++result.work;
        const ns reply_at = w.at() + hop.next(random);
        if (last_success <= read_at[w.client()]) {  // nobody wrote since this try's read: the version matches
            last_success = w.at();
            completion = std::max(completion, reply_at);
            queue.pop();
            continue;
        }
        const ns wait = jitter ? backoffs[w.client()].next(random).count() : 0;
        queue.replace_top(next_try(w.client(), reply_at + wait));  // the retry takes the failed write's place
    }
    result.completion = duration{completion};
    return result;
}

std::uint64_t occ_trial_seed(std::uint64_t sweep_seed, std::uint32_t clients, occ_strategy strategy,
                             std::uint32_t trial) {
    return mix64(mix64(sweep_seed, clients), mix64(static_cast<std::uint64_t>(strategy) + 1, trial));
}

summary summarise(const std::vector<double>& values) {
    summary s;
    if (values.empty()) return s;
    double sum = 0;
    s.min = values.front();
    s.max = values.front();
    for (double v : values) {
        sum += v;
        s.min = std::min(s.min, v);
        s.max = std::max(s.max, v);
    }
    const auto n = static_cast<double>(values.size());
    s.mean = sum / n;
    if (values.size() > 1) {
        double squares = 0;
        for (double v : values) squares += (v - s.mean) * (v - s.mean);
        s.stddev = std::sqrt(squares / (n - 1));
    }
    return s;
}

double estimated_occ_events(const occ_sweep_config& config) {
    double per_trial_set = 0;
    for (std::uint32_t c : config.clients) per_trial_set += static_cast<double>(c) * static_cast<double>(c) / 4.0;
    return per_trial_set * static_cast<double>(config.strategies.size()) * static_cast<double>(config.trials);
}

void validate(const occ_sweep_config& config) {
    if (config.clients.empty()) throw std::invalid_argument{"the client list is empty"};
    if (config.strategies.empty()) throw std::invalid_argument{"the strategy list is empty"};
    if (config.trials == 0 || config.trials > max_occ_trials)
        throw std::invalid_argument{"trials must be in 1.." + std::to_string(max_occ_trials) + ", got " +
                                    std::to_string(config.trials)};
    if (config.threads == 0 || config.threads > max_occ_threads)
        throw std::invalid_argument{"threads must be in 1.." + std::to_string(max_occ_threads)};
    for (std::uint32_t c : config.clients) check_clients(c);
    const double jobs = static_cast<double>(config.clients.size()) * static_cast<double>(config.strategies.size()) *
                        static_cast<double>(config.trials);
    if (jobs > static_cast<double>(max_occ_jobs))
        throw std::invalid_argument{"the sweep has " + std::to_string(static_cast<std::uint64_t>(jobs)) +
                                    " trials in all; at most " + std::to_string(max_occ_jobs) + " are allowed"};
    if (estimated_occ_events(config) > max_occ_estimated_events)
        throw std::invalid_argument{"the sweep would process about " +
                                    std::to_string(static_cast<std::uint64_t>(estimated_occ_events(config))) +
                                    " events (clients^2 / 4 per trial); at most 2000000000 are allowed: "
                                    "fewer clients, strategies or trials"};
    check_durations(config.base, config.cap, config.hop_mean, config.hop_sd);
}

occ_sweep_result run_occ_sweep(const occ_sweep_config& config, const progress_callback& progress) {
    validate(config);

    const std::size_t points = config.clients.size() * config.strategies.size();
    const std::uint64_t jobs = static_cast<std::uint64_t>(points) * config.trials;
    std::vector<occ_trial_result> results(jobs);
    std::atomic<std::uint64_t> next_job{0};
    std::atomic<std::uint64_t> done{0};

    // Jobs are taken one at a time from the end of the list: client counts are usually given in
    // increasing order, so the largest (slowest) trials go first and the threads finish together on
    // small ones. Results land at their job's index, so the order changes no number.
    // The first trial to overflow its clock stops every thread (no job is taken after it); it is
    // rethrown once they have all finished.
    std::exception_ptr overflow;
    std::once_flag overflow_once;
    auto work = [&](bool report) {
        for (;;) {
            const std::uint64_t taken = next_job.fetch_add(1, std::memory_order_relaxed);
            if (taken >= jobs) return;
            const std::uint64_t job = jobs - 1 - taken;
            const std::size_t point = job / config.trials;
            const auto trial = static_cast<std::uint32_t>(job % config.trials);
            occ_config one;
            one.clients = config.clients[point / config.strategies.size()];
            one.strategy = config.strategies[point % config.strategies.size()];
            one.base = config.base;
            one.cap = config.cap;
            one.hop_mean = config.hop_mean;
            one.hop_sd = config.hop_sd;
            try {
                results[job] = run_occ_trial(one, occ_trial_seed(config.seed, one.clients, one.strategy, trial));
            } catch (const occ_clock_overflow&) {
                std::call_once(overflow_once, [&] { overflow = std::current_exception(); });
                next_job.store(jobs, std::memory_order_relaxed);
                return;
            }
            const std::uint64_t finished = done.fetch_add(1, std::memory_order_relaxed) + 1;
            if (report && progress && (finished % 64 == 0 || finished == jobs)) progress(finished, jobs);
        }
    };
    {
        std::vector<std::jthread> helpers;
        for (unsigned t = 1; t < config.threads; ++t) helpers.emplace_back(work, false);
        work(true);
    }
    if (overflow) std::rethrow_exception(overflow);
    if (progress) progress(jobs, jobs);

    occ_sweep_result out;
    out.points.reserve(points);
    std::vector<double> work_values(config.trials);
    std::vector<double> completion_values(config.trials);
    for (std::size_t p = 0; p < points; ++p) {
        for (std::uint32_t t = 0; t < config.trials; ++t) {
            const occ_trial_result& r = results[p * config.trials + t];
            work_values[t] = static_cast<double>(r.work);
            completion_values[t] = std::chrono::duration<double>(r.completion).count();
            out.events += r.work;
        }
        out.points.push_back({config.clients[p / config.strategies.size()],
                              config.strategies[p % config.strategies.size()], summarise(work_values),
                              summarise(completion_values)});
    }
    return out;
}

}  // namespace faultline::storm
