// The scorecard: property × verdict over every probe a client went through. A property passes when
// every probe that could judge it passed and at least one did; fails when any failed; is
// "insufficient evidence" when the probes that applied could not judge; and is "not applicable"
// when none applied (the client never retried, a setting was not declared). Each row keeps the
// failed verdicts, so the scorecard prints the same evidence as `faultline run`. The first row is
// judged in every probe from the run's own `evidence_intact` verdict: a probe in which the control
// API reset the server or changed its rules fails it, and that probe's passes count for no other
// row (they are "not judged"); so do the passes of a probe whose `fired:<rule>` verdict failed (a
// fault rule with `min_fired` fired too little: the situation never happened).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "faultline/record/run_record.hpp"
#include "faultline/runner/runner.hpp"
#include "faultline/score/client_template.hpp"
#include "faultline/score/probe.hpp"
#include "faultline/score/property.hpp"

namespace faultline::score {

enum class property_outcome { pass, fail, insufficient_evidence, not_applicable };

std::string_view to_string(property_outcome outcome);

// Why the property cannot be judged of this client whatever it does: it needs a declaration
// (--deadline, --max-attempts, ...) that was not made. "" when it can be (always for the builtin
// client, whose policy declares everything).
std::string undeclared_because(const property_info& p, const declared_settings& declared, bool builtin);

// Why running the probe could judge nothing: every property it maps needs a declaration that was not
// made (slow-responses judges only a declared deadline). "" when it judges something.
std::string nothing_to_judge(const probe& p, const declared_settings& declared, bool builtin);  // "pass", "fail", "insufficient evidence", "n/a"

// One verdict of one probe, kept for the evidence section.
struct finding {
    std::string probe;      // scenario name
    std::string situation;
    record::verdict verdict;
};

struct property_row {
    const property_info* property = nullptr;
    property_outcome outcome = property_outcome::not_applicable;
    std::size_t judged = 0;  // probes whose verdict counted (pass or fail)
    std::size_t passed = 0;
    // Probes that applied but could not judge, each an insufficient finding: a check had too little
    // evidence, or the run proves nothing (the control API changed the server during it, a fault
    // rule with `min_fired` fired too little), so its pass did not count.
    std::size_t not_judged = 0;
    // Of those, verdicts of timing probes (with a control) that could not tell the client from noise:
    // while any is left, the row does not pass.
    std::size_t timing_undecided = 0;
    std::string reason;      // for not_applicable and insufficient_evidence: why
    std::vector<finding> findings;  // failed verdicts first, then insufficient ones
    std::vector<finding> passes;    // the verdicts that passed, with their evidence (--verbose, JSON)
};

struct scorecard {
    std::vector<property_row> rows;           // properties() order
    std::vector<std::string> harness_errors;  // "probe: error", for probes that could not run
    std::size_t attempts = 0;                 // every attempt the server saw, over all probes
};

// `runs[i]` is the run of `probes[i]`. `builtin`: the probes ran their own [client] (the builtin
// client, whose settings the files declare), so declared-only properties apply.
scorecard make_scorecard(std::span<const probe> probes, std::span<const record::run_record> runs,
                         const declared_settings& declared, bool builtin);

// The exit code: harness_error when a probe could not run, check_failed when a property failed,
// insufficient_evidence when one could not be judged, else passed.
runner::exit_code exit_code_of(const scorecard& card);

struct render_options {
    std::string client;    // the template as the user wrote it, or "builtin"
    bool builtin = false;  // the probes ran their own [client]: its policy is what is declared
    bool color = false;
    bool verbose = false;  // also the passing verdicts, with their summaries and evidence
};
std::string render_scorecard(const scorecard& card, const declared_settings& declared, const render_options& options);

// The scorecard as JSON, for tools: {"client", "outcome", "properties": [{"id", "title", "outcome",
// "judged", "passed", "not_judged", "reason", "findings": [{"probe", "situation", "check", "outcome", "summary",
// "evidence": [{"operation", "seqs", "detail"}]}]}], "harness_errors": [...]}. Findings are every verdict
// that counted or could not judge: failed, insufficient, then passed, each with its evidence.
std::string scorecard_json(const scorecard& card, std::string_view client);

}  // namespace faultline::score
