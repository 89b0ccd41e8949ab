// What a check says about a run: passed or not, a one-line summary, and the evidence — the exact
// operations and attempts (journal sequence numbers) that break it, so a reader sees the bug without
// rerunning. Verdicts are plain values: checks produce them, the run record keeps them, and the
// report writers print them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace faultline::harness {

// Evidence is capped per verdict so a run with a million bad attempts still gives a readable report;
// `verdict::evidence_total` keeps the full count.
inline constexpr std::size_t evidence_limit = 20;

struct evidence_item {
    std::string operation;            // operation identity; "" for run-wide evidence (a time window)
    std::vector<std::uint64_t> seqs;  // journal sequence numbers of the attempts involved
    std::string detail;               // times (ms since run start), statuses/outcomes, faults
};

struct verdict {
    std::string check;              // the check's registered name
    bool passed = false;            // after the `expect_failure` inversion
    bool expected_to_fail = false;  // the scenario declared `expect_failure = true`
    std::string summary;            // one line
    std::vector<evidence_item> evidence;  // at most `evidence_limit` items
    std::size_t evidence_total = 0;       // how many items were found before the cap
};

}  // namespace faultline::harness
