// What a check says about a run: passed or not, a one-line summary, and the evidence — the exact
// operations and attempts (journal sequence numbers) that break it, so a reader sees the bug without
// rerunning. Verdicts are plain values: checks produce them, the run record keeps them, and the
// report writers print them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace faultline::record {

// Evidence is capped per verdict so a run with a million bad attempts still gives a readable report;
// `verdict::evidence_total` keeps the full count.
inline constexpr std::size_t evidence_limit = 20;

struct evidence_item {
    std::string operation;            // operation identity; "" for run-wide evidence (a time window)
    std::vector<std::uint64_t> seqs;  // journal sequence numbers of the attempts involved
    std::string detail;               // times (ms since run start), statuses/outcomes, faults
};

// How a verdict came out. `insufficient_evidence`: the run held fewer of the events the check judges
// from than its stated minimum sample (retries at one index, gaps, operations…), so the check neither
// passed nor failed. It is never turned into a pass or a failure: `expect_failure` leaves it alone,
// reports show it as its own outcome, and `faultline` exits 4 for it (when nothing failed).
enum class verdict_outcome { pass, fail, insufficient_evidence };

std::string_view to_string(verdict_outcome outcome);  // "pass", "fail", "insufficient_evidence"

struct verdict {
    std::string check;              // the check's registered name
    bool passed = false;            // after the `expect_failure` inversion; false when insufficient_evidence
    bool expected_to_fail = false;  // the scenario declared `expect_failure = true`
    std::string summary;            // one line
    std::vector<evidence_item> evidence;  // at most `evidence_limit` items
    std::size_t evidence_total = 0;       // how many items were found before the cap
    bool insufficient_evidence = false;   // the check could not judge; see verdict_outcome
    // Figures of the check's own configuration that reports draw with, by their `[[expect]]` key
    // (retry_budget's token bucket: max_tokens, token_ratio), so no report parses the summary.
    std::vector<std::pair<std::string, double>> parameters{};
    bool failures_only = false;  // `failures_only = true`: only a failure counts in outcome_of

    std::optional<double> parameter(std::string_view key) const {
        for (const auto& [name, value] : parameters) {
            if (name == key) return value;
        }
        return std::nullopt;
    }

    verdict_outcome outcome() const {
        if (insufficient_evidence) return verdict_outcome::insufficient_evidence;
        return passed ? verdict_outcome::pass : verdict_outcome::fail;
    }
};

}  // namespace faultline::record
