// The false-alarm and miss rates of the timing checks — `backoff`, `retry_after`, `deadline` — on
// simulated clients with and without the flaw each check exists for, over 200 seeds, under the
// timing noise a real run adds: the server measures a gap from its previous response's end to the
// next request, so the client's timer overshoot, its scheduling and the network all lengthen it
// (noise is U(0, noise_ms) per attempt, never negative). Seeded draws (core/random), so the counts
// are exact and the test deterministic; docs/checks.md quotes them. A false alarm is a client
// without the flaw failing the check; a miss is a flawed client passing it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "check_test_support.hpp"
#include "faultline/core/random.hpp"

namespace faultline::checks {
namespace {

constexpr int seeds = 200;
constexpr int operations = 20;

// How many of `seeds` simulated runs fail `check_toml`; `run_of(seed)` builds one run.
int failures(std::string_view check_toml, const std::function<record::run_record(std::uint64_t)>& run_of) {
    const expectation check = test::parse_ok(check_toml);
    int failed = 0;
    for (int seed = 1; seed <= seeds; ++seed) {
        const record::verdict v = evaluate(check, run_of(static_cast<std::uint64_t>(seed)));
        EXPECT_FALSE(v.insufficient_evidence) << v.summary;
        failed += v.outcome() == record::verdict_outcome::fail ? 1 : 0;
    }
    return failed;
}

// --- backoff ---------------------------------------------------------------------------------------

enum class client_flaw { none, grows_by_three, no_growth, immediate };

// Operations retrying 3 times after 503s with `jitter` over base 100 ms, cap 1 s (×2), unless
// `flaw`: growing ×3 instead of ×2, not growing (the base delay every time), or not waiting at all.
record::run_record backoff_run(std::string_view jitter, client_flaw flaw, double noise_ms, std::uint64_t seed) {
    seeded_random random(seed);
    test::journal_builder j;
    for (int i = 0; i < operations; ++i) {
        j.op("op" + std::to_string(i)).at(uniform(random, 0, 50));
        double previous = 100;
        for (int k = 1; k <= 3; ++k) {
            const double growth = flaw == client_flaw::grows_by_three ? 3 : flaw == client_flaw::no_growth ? 1 : 2;
            const double t = std::min(1000.0, 100 * std::pow(growth, k - 1));
            double delay = t;
            if (jitter == "full") delay = uniform(random, 0, t);
            if (jitter == "equal") delay = t / 2 + uniform(random, 0, t / 2);
            if (jitter == "decorrelated") previous = delay = std::min(1000.0, uniform(random, 100, 3 * previous));
            if (jitter == "proportional") delay = t * uniform(random, 0.8, 1.2);
            if (flaw == client_flaw::immediate) delay = 0;
            j.attempt(503).wait(delay + uniform(random, 0, noise_ms));
        }
        j.attempt(200);
    }
    return j.run();
}

const char* name_of(client_flaw flaw) {
    switch (flaw) {
        case client_flaw::none: return "as declared";
        case client_flaw::grows_by_three: return "grows x3";
        case client_flaw::no_growth: return "no growth";
        case client_flaw::immediate: return "no wait";
    }
    return "";
}

int backoff_failures(std::string_view jitter, client_flaw flaw, double noise_ms, std::string_view tolerance = "10ms") {
    const std::string check = "check = \"backoff\"\nbase = \"100ms\"\ncap = \"1s\"\njitter = \"" + std::string(jitter) +
                              "\"\ntolerance = \"" + std::string(tolerance) + "\"\n";
    const int failed = failures(check, [&](std::uint64_t seed) { return backoff_run(jitter, flaw, noise_ms, seed); });
    std::printf("backoff %s, client %s, noise 0-%.0fms, tolerance %s: failed %d/%d\n", std::string(jitter).c_str(),
                name_of(flaw), noise_ms, std::string(tolerance).c_str(), failed, seeds);
    return failed;
}

constexpr std::string_view backoff_jitters[] = {"none", "full", "equal", "decorrelated", "proportional"};

// Up to the default 10 ms tolerance of noise no kind fails; 30 ms of noise pushes gaps drawn near
// the top of the envelope past it in most runs, so a loaded machine needs a tolerance to match.
TEST(timing_rates, backoff_passes_every_jitter_kind_within_its_tolerance_of_noise) {
    for (const std::string_view jitter : backoff_jitters) {
        EXPECT_EQ(backoff_failures(jitter, client_flaw::none, 2), 0) << jitter;
        EXPECT_EQ(backoff_failures(jitter, client_flaw::none, 10), 0) << jitter;
        EXPECT_EQ(backoff_failures(jitter, client_flaw::none, 30, "30ms"), 0) << jitter;
    }
    EXPECT_EQ(backoff_failures("none", client_flaw::none, 30), 200);
    EXPECT_EQ(backoff_failures("full", client_flaw::none, 30), 179);
    EXPECT_EQ(backoff_failures("equal", client_flaw::none, 30), 198);
    EXPECT_EQ(backoff_failures("decorrelated", client_flaw::none, 30), 183);
    EXPECT_EQ(backoff_failures("proportional", client_flaw::none, 30), 199);
}

// A curve growing ×3 leaves every envelope with an upper end; not growing, or not waiting, falls
// below every envelope with a lower end. Full jitter's envelope starts at 0, so neither of those
// can fail it (jittered and amplification see them); decorrelated jitter's has no growth factor.
TEST(timing_rates, backoff_catches_a_curve_that_grows_too_fast_or_not_at_all) {
    for (const std::string_view jitter : {"none", "full", "equal", "proportional"}) {
        EXPECT_EQ(backoff_failures(jitter, client_flaw::grows_by_three, 2), seeds) << jitter;
    }
    for (const std::string_view jitter : {"none", "equal", "proportional"}) {
        EXPECT_EQ(backoff_failures(jitter, client_flaw::no_growth, 2), seeds) << jitter;
    }
    for (const std::string_view jitter : {"none", "equal", "decorrelated", "proportional"}) {
        EXPECT_EQ(backoff_failures(jitter, client_flaw::immediate, 2), seeds) << jitter;
    }
    EXPECT_EQ(backoff_failures("full", client_flaw::no_growth, 2), 0);
    EXPECT_EQ(backoff_failures("full", client_flaw::immediate, 2), 0);
}

// --- retry_after -----------------------------------------------------------------------------------

enum class after_flaw { none, ignores, short_by_50ms, short_by_5ms };

// Each operation's first two attempts get 503 with Retry-After 500 ms; the client's own backoff is
// full jitter over 100 ms. Without the flaw it waits max(Retry-After, its backoff).
record::run_record retry_after_run(after_flaw flaw, double noise_ms, std::uint64_t seed) {
    seeded_random random(seed);
    test::journal_builder j;
    for (int i = 0; i < operations; ++i) {
        j.op("op" + std::to_string(i)).at(uniform(random, 0, 50));
        for (int k = 1; k <= 2; ++k) {
            const double own = uniform(random, 0, 100.0 * (1 << (k - 1)));
            double wait = std::max(500.0, own);
            if (flaw == after_flaw::ignores) wait = own;
            if (flaw == after_flaw::short_by_50ms) wait = 450;
            if (flaw == after_flaw::short_by_5ms) wait = 495;
            j.attempt(503).retry_after(500).wait(wait + uniform(random, 0, noise_ms));
        }
        j.attempt(200);
    }
    return j.run();
}

int retry_after_failures(after_flaw flaw, double noise_ms) {
    const int failed =
        failures("check = \"retry_after\"\n", [&](std::uint64_t seed) { return retry_after_run(flaw, noise_ms, seed); });
    std::printf("retry_after flaw %d, noise 0-%.0fms: failed %d/%d\n", static_cast<int>(flaw), noise_ms, failed, seeds);
    return failed;
}

// Noise only lengthens a wait, so no amount of it is a false alarm. Ignoring Retry-After, or
// waiting 50 ms short, is caught every time; 5 ms short is inside the 10 ms tolerance.
TEST(timing_rates, retry_after_catches_short_waits_beyond_its_tolerance) {
    for (const double noise : {2.0, 30.0}) {
        EXPECT_EQ(retry_after_failures(after_flaw::none, noise), 0);
        EXPECT_EQ(retry_after_failures(after_flaw::ignores, noise), seeds);
        EXPECT_EQ(retry_after_failures(after_flaw::short_by_50ms, noise), seeds);
        EXPECT_EQ(retry_after_failures(after_flaw::short_by_5ms, noise), 0);
    }
}

// --- deadline --------------------------------------------------------------------------------------

enum class deadline_flaw { none, ignores };

// Each operation has a 1 s deadline (sent as Faultline-Deadline-Ms on its first attempt) and meets
// 503s until it gives up; it retries with equal jitter over 100 ms (cap 1 s), up to 10 attempts.
// Without the flaw it sends no attempt once its own clock is past the deadline — but its attempt
// reaches the server up to `noise_ms` later than it was sent.
record::run_record deadline_run(deadline_flaw flaw, double noise_ms, std::uint64_t seed) {
    seeded_random random(seed);
    test::journal_builder j;
    for (int i = 0; i < operations; ++i) {
        const double start = uniform(random, 0, 50);
        j.op("op" + std::to_string(i)).at(start);
        for (int k = 1; k <= 10; ++k) {
            j.attempt(503);
            if (k == 1) j.deadline(1000);
            const double t = std::min(1000.0, 100.0 * (1 << std::min(k - 1, 10)));
            const double backoff = t / 2 + uniform(random, 0, t / 2);
            const double ended = static_cast<double>(j.last().finished_ns) / 1e6;
            const double next_sent = ended + backoff;
            if (flaw == deadline_flaw::none && next_sent >= start + 1000) break;
            const double delivered = next_sent + uniform(random, 0, noise_ms);
            j.wait(delivered - ended);
        }
    }
    return j.run();
}

int deadline_failures(deadline_flaw flaw, double noise_ms, std::string_view tolerance = "10ms") {
    const std::string check = "check = \"deadline\"\ntolerance = \"" + std::string(tolerance) + "\"\n";
    const int failed = failures(check, [&](std::uint64_t seed) { return deadline_run(flaw, noise_ms, seed); });
    std::printf("deadline flaw %d, noise 0-%.0fms, tolerance %s: failed %d/%d\n", static_cast<int>(flaw), noise_ms,
                std::string(tolerance).c_str(), failed, seeds);
    return failed;
}

// An attempt the client sends just before its deadline reaches the server up to the noise later:
// within the 10 ms tolerance that is never a false alarm, at 30 ms of noise in 40 of 200 runs (a
// 30 ms tolerance: none). A client that ignores its deadline is caught at every noise level.
TEST(timing_rates, deadline_catches_attempts_past_it_and_tolerates_its_tolerance_of_noise) {
    for (const double noise : {2.0, 10.0, 30.0}) EXPECT_EQ(deadline_failures(deadline_flaw::ignores, noise), seeds);
    EXPECT_EQ(deadline_failures(deadline_flaw::none, 2), 0);
    EXPECT_EQ(deadline_failures(deadline_flaw::none, 10), 0);
    EXPECT_EQ(deadline_failures(deadline_flaw::none, 30), 40);
    EXPECT_EQ(deadline_failures(deadline_flaw::none, 30, "30ms"), 0);
}

// --- spacing under the server's own lateness --------------------------------------------------------

// `ops` operations retrying 3 times after 503s, full jitter over 200 ms ×2 (the careful loop), or not
// waiting at all; noise U(0, 5 ms). With probability `late_share` the server runs late for U(0, 80 ms)
// around an attempt's end and journals that spell (server_late); the end is stamped that late, but no
// later than the next request: the gap it measures is that much short of the client's.
record::run_record spaced_run(bool waits, int ops, double late_share, std::uint64_t seed) {
    seeded_random random(seed);
    test::journal_builder j;
    std::vector<std::pair<std::int64_t, std::int64_t>> spells;  // (true end, how late) in ns
    for (int i = 0; i < ops; ++i) {
        j.op("op" + std::to_string(i)).at(uniform(random, 0, 50));
        for (int k = 1; k <= 3; ++k) {
            const double delay = (waits ? uniform(random, 0, 200 * std::pow(2, k - 1)) : 0) + uniform(random, 0, 5);
            const double spell = uniform_unit(random) < late_share ? uniform(random, 0, 80) : 0;
            const double late = std::min(delay, spell);  // a stamp is never later than the next request
            j.attempt(503, 1 + late);
            if (spell > 0) spells.emplace_back(j.last().finished_ns - test::ms(late), test::ms(spell));
            j.wait(delay - late);
        }
        j.attempt(200);
    }
    record::run_record run = j.run();
    for (const auto& [at, late] : spells) test::add_server_late(run, at, late);
    return run;
}

struct outcome_counts {
    int pass = 0;
    int fail = 0;
    int insufficient = 0;
};

outcome_counts spacing_outcomes(bool waits, int ops, double late_share) {
    const expectation check = test::parse_ok(R"(check = "spacing")");
    outcome_counts counts;
    for (int seed = 1; seed <= seeds; ++seed) {
        const record::verdict v = evaluate(check, spaced_run(waits, ops, late_share, static_cast<std::uint64_t>(seed)));
        (v.outcome() == record::verdict_outcome::pass ? counts.pass
         : v.outcome() == record::verdict_outcome::fail ? counts.fail
                                                        : counts.insufficient)++;
    }
    std::printf("spacing, %s client, %d operations, %.0f%% of ends stamped late: %d pass, %d fail, %d insufficient\n",
                waits ? "full-jitter" : "no-wait", ops, late_share * 100, counts.pass, counts.fail, counts.insufficient);
    return counts;
}

// The server's lateness never makes a client that waits fail, nor one that does not wait pass: it can
// only leave a verdict insufficient evidence. Alone (1 operation) and in a herd (24). The one failure
// is the client's own draw, not the lateness: seed 101 drew delays of 9.8, 13.4 and 13.7 ms (full
// jitter puts all three under 20 ms about once in 8,000 operations), which the check flags however
// its stamps came out.
TEST(timing_rates, spacing_under_the_servers_lateness_never_fails_a_waiting_client_nor_passes_one_that_does_not) {
    for (const int ops : {1, 24}) {
        for (const double late_share : {0.0, 0.3, 1.0}) {
            const int own_draw = ops == 1 && late_share == 1.0 ? 1 : 0;
            EXPECT_EQ(spacing_outcomes(true, ops, late_share).fail, own_draw) << ops << " " << late_share;
            EXPECT_EQ(spacing_outcomes(false, ops, late_share).pass, 0) << ops << " " << late_share;
        }
    }
}

}  // namespace
}  // namespace faultline::checks
