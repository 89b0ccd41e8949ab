// The "markdown" report: a summary for CI pages that render Markdown (a GitHub Actions job summary,
// `--report markdown:$GITHUB_STEP_SUMMARY`; a GitLab merge-request note). A table with one row per
// scenario (with how often each fault rule fired), then per scenario that failed, was interrupted,
// has a rule that never fired or server events: those, its failed checks with their evidence in a
// code block and the command that replays it. A pure function of the run records.
#include <algorithm>
#include <string>

#include "faultline/reports/console.hpp"
#include "faultline/reports/writer.hpp"
#include "text.hpp"

namespace faultline::reports {

namespace {

// Inline text: Markdown's punctuation escaped so a scenario called "a|b" or "*x*" stays literal.
std::string inline_text(std::string_view text) {
    std::string out;
    for (const char c : detail::printable(text)) {
        if (c == '\n') {
            out += ' ';
            continue;
        }
        if (std::string_view{"\\`*_[]<>|#"}.find(c) != std::string_view::npos) out += '\\';
        out += c;
    }
    return out;
}

// A fenced block longer than any backtick run inside, so evidence cannot end it early.
std::string code_block(std::string_view text) {
    std::size_t longest = 0;
    std::size_t run = 0;
    for (const char c : text) {
        run = c == '`' ? run + 1 : 0;
        longest = std::max(longest, run);
    }
    const std::string fence(std::max<std::size_t>(3, longest + 1), '`');
    std::string body = detail::printable(text);
    if (!body.empty() && body.back() != '\n') body += '\n';
    return fence + "\n" + body + fence + "\n";
}

std::string status_of(const record::run_record& run) {
    if (!run.harness_error.empty()) return "⚠️ error";
    if (run.interrupted) return "⏹️ interrupted";
    switch (record::outcome_of(run)) {
        case record::verdict_outcome::pass: return "✅ pass";
        case record::verdict_outcome::insufficient_evidence: return "❔ insufficient evidence";
        case record::verdict_outcome::fail: break;
    }
    return "❌ fail";
}

// "lose-response 12, slow 0" (rule names as inline text); "—" without rules.
std::string fired_cell(const record::run_record& run) {
    std::string out;
    for (const record::rule_firing& f : run.rule_firings) {
        out += (out.empty() ? "" : ", ") + inline_text(f.rule) + " " + std::to_string(f.fired);
    }
    return out.empty() ? "—" : out;
}

std::string markdown_report(std::span<const record::run_record> runs) {
    const auto passed = std::count_if(runs.begin(), runs.end(), [](const record::run_record& run) {
        return run.harness_error.empty() && record::all_checks_passed(run);
    });
    std::string out = "## faultline: " + std::to_string(passed) + " of " + std::to_string(runs.size()) +
                      " scenarios passed\n\n"
                      "| | scenario | seed | time | operations | attempts | effects | checks passed | faults fired |\n"
                      "|---|---|---:|---:|---:|---:|---:|---:|---|\n";
    for (const record::run_record& run : runs) {
        const detail::run_counts c = detail::count(run);
        out += "| " + status_of(run) + " | " + inline_text(run.scenario) + " | " + std::to_string(run.seed) + " | " +
               detail::seconds(run.duration) + "s | " + std::to_string(c.operations) + " | " +
               std::to_string(c.attempts) + " | " + std::to_string(c.effects) + " | " +
               std::to_string(c.checks - c.checks_failed - c.checks_insufficient) + " of " + std::to_string(c.checks) + " | " +
               fired_cell(run) + " |\n";
    }
    for (const record::run_record& run : runs) {
        const bool clean = run.harness_error.empty() && !run.interrupted && record::all_checks_passed(run) &&
                           record::never_fired(run).empty() && run.server_events.empty();
        if (clean) continue;
        out += "\n### " + status_of(run) + ": " + inline_text(run.scenario) + "\n\n";
        if (!run.harness_error.empty()) out += "Harness error: " + inline_text(run.harness_error) + "\n\n";
        if (run.interrupted) out += inline_text(detail::interruption_text(run)) + "\n\n";
        for (const record::rule_firing* f : record::never_fired(run)) {
            out += "Warning: " + inline_text(detail::never_fired_text(*f, run.strict)) + "\n\n";
        }
        if (const std::string events = detail::server_event_counts(run); !events.empty()) {
            out += "Server events: " + inline_text(events) + "\n\n";
        }
        if (!run.rule_firings.empty()) {
            out += "Fault rules:\n\n";
            for (const record::rule_firing& f : run.rule_firings) out += "- " + inline_text(detail::firing_text(f)) + "\n";
            out += "\n";
        }
        for (const record::verdict& v : run.verdicts) {
            if (v.passed) continue;
            out += "- **" + inline_text(v.check) + "**" + (v.insufficient_evidence ? " (insufficient evidence)" : "") +
                   ": " + inline_text(v.summary) + "\n";
            if (const std::string evidence = detail::evidence_text(v, ""); !evidence.empty()) {
                out += "\n" + code_block(evidence);
            }
        }
        const std::string replay = detail::printable(replay_command(run));
        const std::string tick = replay.find('`') == std::string::npos ? "`" : "`` ";
        out += "\nReplay: " + tick + replay + std::string{tick.rbegin(), tick.rend()} + "\n";
    }
    return out;
}

const report_registration registered{"markdown", "a summary table and the failures, for CI pages (job summaries)",
                                     &markdown_report, ""};

}  // namespace

}  // namespace faultline::reports
