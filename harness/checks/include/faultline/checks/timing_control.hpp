// The timing noise of one run, measured from a control: processes of known timing (a fixed delay
// before every retry, no jitter) started the same way and in the same herd as the client under test
// (`faultline score`'s timing probes run them beside the client). What reaches the server from a
// fixed delay is that delay plus the machine's noise, so the spread of the control's gaps is the noise
// of that very run: on an idle machine a few milliseconds, with two CPU hogs on two cores tens to
// hundreds. The timing checks (`jittered`, `spacing`) judge the client's gaps against it: a spread
// wider than the control's is the client's own; one within it cannot be told from noise. Without a
// control they judge against their configured `noise_floor`, and say so.
// A light control does not carry a heavy runtime's own CPU queueing: 24 Node.js processes that all
// retry at once with no delay reach the server spread over hundreds of milliseconds. So the control
// also holds the client's own pace, its gaps when it ran alone: when the herd's median gap at a retry
// index is several times every gap the client showed alone at that index, the herd's spread there is
// its queueing, not a delay the client chose, and the timing checks cannot judge it. And when the
// client alone waited the same at every retry index it showed (within the noise floor), its delay is
// fixed: a herd's wider spread is queueing too, however it looks.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "faultline/record/journal_record.hpp"

namespace faultline::checks {

struct timing_control {
    std::chrono::nanoseconds delay{0};  // the fixed delay the control waits before each retry
    // Every gap it showed at the server (previous attempt's t_end → the retry's t_request), in ns.
    std::vector<std::int64_t> gaps_ns;
    std::vector<std::uint64_t> seqs;  // the control's retries, for evidence (journal sequence numbers)
    std::size_t processes = 0;        // control processes that ran
    std::string runtime;              // what ran them: "" the builtin (C++), else "Node.js", "Python"
    // The client's retry gaps when it ran alone (one operation, no herd queueing it), in ns, by retry
    // index (1 for the first retry); empty when no such probe ran.
    std::map<std::size_t, std::vector<std::int64_t>> alone_gaps_ns;

    // The noise the control measured: the width of the central 90 % of its gaps (5th to 95th
    // percentile), so one straggler does not decide it. Zero with fewer than `min_gaps` gaps.
    std::int64_t noise_ns() const;
    bool measured() const { return gaps_ns.size() >= min_gaps; }
    // "the control (24 processes, fixed 500.0ms delay): 72 gaps, central 90 % over 3.1ms (500.9ms–504.0ms)".
    std::string describe() const;

    // Why a herd whose median gap at retry index `k` was `herd_median_ns` shows queueing rather than
    // the client's delay: every gap the client showed alone at that index, `min_alone_gaps` or more,
    // was under 1/queueing_ratio of it. Index by index, since a backoff grows; every gap, since a
    // jittered delay may be short by chance (full jitter: each under 1/8 of its range once in 8).
    // "" when not.
    std::string queueing_explains(std::size_t k, std::int64_t herd_median_ns) const;

    // Why the client's delay is fixed, from its pace alone: at `min_fixed_indexes` or more retry
    // indexes with `min_alone_gaps` gaps each, every such index's gaps lie within `window_ns` of each
    // other. Every index, since a client may jitter only some retries (a capped one may not jitter at
    // its cap, and got's +U(0, 100 ms) puts four gaps of one index within 15 ms once in 80, of three
    // indexes once in 500,000). "" when not.
    std::string pace_is_fixed(std::int64_t window_ns) const;

    static constexpr std::size_t min_gaps = 8;
    // Four lone probes (persistent-5xx, -get, -head, -delete) give four gaps an index; full jitter puts
    // all four under a quarter of its herd's median once in 4,096.
    static constexpr std::size_t min_alone_gaps = 3;
    // A client with a real delay d waits d alone and at least d in a herd (ratio about 1); the naive
    // Node.js loop's second retries took 6-20 ms alone and a median of 194 ms in its herd under two hogs.
    static constexpr std::int64_t queueing_ratio = 4;
    static constexpr std::size_t min_fixed_indexes = 2;
};

// The control of a run from the control processes' own attempts: their operations' gaps (a retry
// sent before its previous attempt ended is left out: a timeout, not a delay).
timing_control measure_control(const std::vector<record::journal_record>& control_journal, std::chrono::nanoseconds delay,
                               std::size_t processes);

// A client's gaps in a run where it ran alone, added to `alone_gaps_ns` by retry index: as the
// control's, and gaps after a Retry-After are left out (the server chose them).
void add_gaps_alone(const std::vector<record::journal_record>& journal, std::map<std::size_t, std::vector<std::int64_t>>& out);

}  // namespace faultline::checks
