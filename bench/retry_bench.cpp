// Micro-benchmarks of the retry library: the cost of `execute` on the success path against calling
// the operation directly (with heap allocations per call counted), one backoff computation per
// jitter kind, and budget decisions under contention. Figures are recorded in docs/benchmarks.md.
#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <memory>

#include "faultline/retry/backoff.hpp"
#include "faultline/retry/budget.hpp"
#include "faultline/retry/execute.hpp"

namespace faultline::bench {
extern std::atomic<long> allocations;
}  // namespace faultline::bench

namespace {

using namespace std::chrono_literals;
using namespace faultline::retry;
using faultline::bench::allocations;

// The operation: opaque to the optimiser so neither side is folded away.
[[gnu::noinline]] attempt_outcome succeed(const attempt_context& ctx) {
    benchmark::DoNotOptimize(ctx.attempt);
    return attempt_outcome::http(200);
}

void report_allocations(benchmark::State& state, long before) {
    state.counters["allocs_per_call"] = benchmark::Counter(
        static_cast<double>(allocations.load() - before), benchmark::Counter::kAvgIterations);
}

void BM_direct_call(benchmark::State& state) {
    const attempt_context ctx{};
    const long before = allocations.load();
    for (auto _ : state) {
        auto out = succeed(ctx);
        benchmark::DoNotOptimize(out);
    }
    report_allocations(state, before);
}
BENCHMARK(BM_direct_call);

// Default policy, default env (steady clock, thread_local mt19937_64), idempotent request.
void BM_execute_success(benchmark::State& state) {
    const retry_policy policy;
    const long before = allocations.load();
    for (auto _ : state) {
        auto r = execute(policy, succeed);
        benchmark::DoNotOptimize(r);
    }
    report_allocations(state, before);
}
BENCHMARK(BM_execute_success);

// With an overall deadline and a per-attempt timeout: three clock reads per call.
void BM_execute_success_deadline(benchmark::State& state) {
    const auto policy = retry_policy{}.with_overall_timeout(5s).with_per_attempt_timeout(1s);
    const long before = allocations.load();
    for (auto _ : state) {
        auto r = execute(policy, succeed);
        benchmark::DoNotOptimize(r);
    }
    report_allocations(state, before);
}
BENCHMARK(BM_execute_success_deadline);

// A POST: an idempotency key (UUIDv4, two draws) is generated and formatted per operation.
void BM_execute_success_keyed(benchmark::State& state) {
    const retry_policy policy;
    const long before = allocations.load();
    for (auto _ : state) {
        auto r = execute(policy, succeed, execution_env{nullptr, nullptr, request_safety::unsafe, std::nullopt, std::nullopt});
        benchmark::DoNotOptimize(r);
    }
    report_allocations(state, before);
}
BENCHMARK(BM_execute_success_keyed);

// With a shared token-bucket budget (one atomic update per success).
void BM_execute_success_budget(benchmark::State& state) {
    const auto policy = retry_policy{}.with_budget(std::make_shared<token_bucket_budget>(10, 0.1));
    const long before = allocations.load();
    for (auto _ : state) {
        auto r = execute(policy, succeed);
        benchmark::DoNotOptimize(r);
    }
    report_allocations(state, before);
}
BENCHMARK(BM_execute_success_budget);

void BM_backoff_next(benchmark::State& state) {
    const auto kind = static_cast<jitter_kind>(state.range(0));
    state.SetLabel(std::string{to_string(kind)});
    faultline::seeded_random random{1};
    backoff b{backoff_policy{}.with_base(100ms).with_cap(10s).with_jitter(kind)};
    for (auto _ : state) {
        benchmark::DoNotOptimize(b.next(random));
        if (b.retry_index() == 16) b.reset();  // cover growing and capped indices alike
    }
}
BENCHMARK(BM_backoff_next)->DenseRange(0, 4);

// Budget decisions shared by all benchmark threads.
token_bucket_budget shared_bucket{10, 0.1};
ratio_budget shared_ratio;

void BM_token_bucket_decision(benchmark::State& state) {
    const faultline::time_point now{1h};
    for (auto _ : state) {
        shared_bucket.on_failure();
        benchmark::DoNotOptimize(shared_bucket.try_withdraw_retry(now));
        shared_bucket.on_success();
    }
}
BENCHMARK(BM_token_bucket_decision)->Threads(1)->Threads(2);

void BM_ratio_decision(benchmark::State& state) {
    faultline::time_point now{1h};
    for (auto _ : state) {
        shared_ratio.on_request(now);
        benchmark::DoNotOptimize(shared_ratio.try_withdraw_retry(now));
        now += 1us;  // time moves, so old events expire as they would in service
    }
}
BENCHMARK(BM_ratio_decision)->Threads(1)->Threads(2);

}  // namespace

BENCHMARK_MAIN();
