// The false-alarm and miss rates of `retry_budget`, measured on simulated fleets that share one retry
// budget: first attempts arrive at random over 1.5 s, 40 % of them fail, and each failure is retried
// 0–10 ms after it ended if the client's budget allows (the demand is twice what the check allows, so
// a budgeted client spends its budget to the last retry). The client decides by its own clock, as
// the retry library does; the server journals every request up to `latency` later, drawn per
// request. Seeded draws (core/random), so the counts are exact; docs/checks.md quotes them. A false
// alarm is the budgeted client failing the check; a miss is a client over the budget passing it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>

#include "check_test_support.hpp"
#include "faultline/core/random.hpp"
#include "faultline/retry/budget.hpp"

namespace faultline::checks {
namespace {

constexpr int seeds = 200;
constexpr int operations = 2000;
constexpr double run_ms = 1500;
constexpr double failure_share = 0.4;

// The check's budget, and the fleet's: ratio 0.2, 10 retries a second, over 1 s.
constexpr std::string_view check_budget = "check = \"retry_budget\"\nratio = 0.2\nmin_per_sec = 10\nwindow = \"1s\"\n";

// How the fleet decides on retries: the retry library's ratio budget at `percent_can_retry` (0.2 is
// the check's own), or no budget at all (every failure retried).
struct fleet {
    const char* name;
    double percent_can_retry;  // < 0: no budget
};

constexpr fleet budgeted{"budget 0.2 (the check's)", 0.2};
constexpr fleet over_by_half{"budget 0.3", 0.3};
constexpr fleet over_by_a_twentieth{"budget 0.21", 0.21};
constexpr fleet no_budget{"no budget", -1};

std::int64_t ns(double ms) { return static_cast<std::int64_t>(ms * 1e6); }

record::run_record simulate(const fleet& f, double latency_ms, std::uint64_t seed) {
    seeded_random random(seed);
    std::unique_ptr<retry::ratio_budget> budget;
    if (f.percent_can_retry >= 0) {
        budget = std::make_unique<retry::ratio_budget>(retry::ratio_budget_options{}
                                                           .with_ttl(std::chrono::seconds{1})
                                                           .with_percent_can_retry(f.percent_can_retry)
                                                           .with_min_retries_per_sec(10));
    }
    struct event {
        double at_ms;  // client time
        int op;
        bool retry;    // a retry wanted, else the first attempt sent
    };
    std::vector<event> events;
    std::vector<bool> failed(operations);
    std::vector<double> first_at(operations);
    for (int i = 0; i < operations; ++i) {
        first_at[static_cast<std::size_t>(i)] = uniform(random, 0, run_ms);
        failed[static_cast<std::size_t>(i)] = uniform(random, 0, 1) < failure_share;
        events.push_back({first_at[static_cast<std::size_t>(i)], i, false});
        if (failed[static_cast<std::size_t>(i)]) {
            events.push_back({first_at[static_cast<std::size_t>(i)] + 1 + uniform(random, 0, 10), i, true});
        }
    }
    std::sort(events.begin(), events.end(), [](const event& a, const event& b) { return a.at_ms < b.at_ms; });
    std::vector<double> retry_at(operations, -1);
    const time_point zero{};
    for (const event& e : events) {
        const auto now = zero + std::chrono::nanoseconds{ns(e.at_ms)};
        if (!e.retry) {
            if (budget) budget->on_request(now);
        } else if (!budget || budget->try_withdraw_retry(now)) {
            retry_at[static_cast<std::size_t>(e.op)] = e.at_ms;
        }
    }
    // The journal, in seq order: the server reads each request up to `latency_ms` after it was sent.
    test::journal_builder j;
    for (int i = 0; i < operations; ++i) {
        const auto k = static_cast<std::size_t>(i);
        j.op("op" + std::to_string(i)).at(first_at[k] + uniform(random, 0, latency_ms));
        j.attempt(failed[k] ? 503 : 200, 1);
        if (retry_at[k] >= 0) j.at(retry_at[k] + uniform(random, 0, latency_ms)).attempt(200, 1);
    }
    record::run_record run = j.run();
    std::sort(run.journal.begin(), run.journal.end(),
              [](const record::journal_record& a, const record::journal_record& b) { return a.request_ns < b.request_ns; });
    for (std::size_t s = 0; s < run.journal.size(); ++s) run.journal[s].seq = s + 1;
    return run;
}

int runs_failed(const fleet& f, double latency_ms, std::string_view check) {
    const expectation e = test::parse_ok(check);
    int failed = 0;
    for (int seed = 1; seed <= seeds; ++seed) {
        failed += evaluate(e, simulate(f, latency_ms, static_cast<std::uint64_t>(seed))).outcome() == record::verdict_outcome::fail;
    }
    std::printf("%s, latency up to %.0f ms, [%s]: failed %d/%d\n", f.name, latency_ms,
                check.find("tolerance") == std::string_view::npos ? "tolerance 10ms" : "tolerance 0s", failed, seeds);
    return failed;
}

const std::string strict = std::string{check_budget} + "tolerance = \"0s\"\n";

TEST(budget_rates, a_client_that_spends_its_budget_to_the_last_retry_passes_despite_latency) {
    EXPECT_EQ(runs_failed(budgeted, 1, check_budget), 0);
    EXPECT_EQ(runs_failed(budgeted, 10, check_budget), 0);
}

// Without the tolerance the server's clock alone fails the same client: the rate the tolerance fixed.
TEST(budget_rates, judged_by_the_servers_clock_alone_the_same_client_fails) {
    EXPECT_GE(runs_failed(budgeted, 10, strict), seeds / 2);
}

// The tolerance earns at most ratio × the first attempts of 20 ms; a fleet 5 % over the budget
// spends far more than that within a window.
TEST(budget_rates, a_client_five_percent_over_the_budget_fails) {
    EXPECT_EQ(runs_failed(over_by_a_twentieth, 10, check_budget), seeds);
    EXPECT_EQ(runs_failed(over_by_a_twentieth, 1, check_budget), seeds);
}

TEST(budget_rates, clients_far_over_the_budget_fail) {
    EXPECT_EQ(runs_failed(no_budget, 10, check_budget), seeds);
    EXPECT_EQ(runs_failed(over_by_half, 10, check_budget), seeds);
}

}  // namespace
}  // namespace faultline::checks
