#include "faultline/score/scorecard.hpp"

#include <algorithm>
#include <optional>

#include <boost/json.hpp>

#include "faultline/reports/console.hpp"

namespace faultline::score {

namespace {

constexpr std::string_view fired_prefix = "fired:";

bool retried(const record::run_record& run) {
    for (const record::operation_attempts& op : record::group_operations(run.journal)) {
        if (op.attempts.size() > 1) return true;
    }
    return false;
}

bool sent_keys(const record::run_record& run) {
    return std::any_of(run.journal.begin(), run.journal.end(),
                       [](const record::journal_record& r) { return !r.idempotency_key.empty(); });
}

// Why the property cannot be judged in this probe ("" when it can).
std::string not_applicable_because(const property_info& p, const record::run_record& run, bool client_retries,
                                   const declared_settings& declared, bool builtin) {
    switch (p.applies) {
        case applicability::always: return "";
        case applicability::retried_unsent:
            if (!client_retries) return "the client never retried in any probe";
            return run.journal.empty() ? "the client gave up before anything reached the server (allowed)" : "";
        case applicability::probe_retried: return retried(run) ? "" : "the client did not retry here";
        case applicability::keys_sent:
            if (!sent_keys(run)) return "the client sent no Idempotency-Key";
            return retried(run) ? "" : "the client did not retry here";
        case applicability::deadline_declared:
        case applicability::max_attempts_declared:
        case applicability::attempt_timeout_declared:
        case applicability::grpc_throttling_declared: return undeclared_because(p, declared, builtin);
    }
    return "";
}

// Why a probe's passes prove nothing, with the evidence for it: the control API changed the server
// during the run (so the journal may not show what the client did), or a fault rule the probe needs
// fired fewer times than its `min_fired` (so the situation the checks judge never happened).
struct unproven {
    std::string reason;
    std::vector<record::evidence_item> evidence;
    std::size_t evidence_total = 0;
};

// "fault rule `x` never fired (min_fired = 1)" for a failed fired:<rule> verdict.
std::string firing_shortfall(const record::run_record& run, const record::verdict& fired) {
    const std::string_view rule = std::string_view(fired.check).substr(fired_prefix.size());
    const auto f = std::find_if(run.rule_firings.begin(), run.rule_firings.end(),
                                [&](const record::rule_firing& r) { return r.rule == rule; });
    if (f == run.rule_firings.end()) return fired.summary;
    // firing_verdicts requires `min_fired`, or one firing under strict.
    const std::uint64_t required = f->min_fired.value_or(1);
    const std::string source = f->min_fired ? "min_fired = " + std::to_string(required) : std::string{"strict"};
    const std::string reached = run.journal.empty() ? "; the client never reached the server in this probe"
                                                    : "; the client reached the server (" +
                                                          std::to_string(run.journal.size()) +
                                                          (run.journal.size() == 1 ? " attempt)" : " attempts)");
    if (f->fired == 0) return "fault rule `" + f->rule + "` never fired (" + source + ")" + reached;
    return "fault rule `" + f->rule + "` fired " + std::to_string(f->fired) + " of the " + std::to_string(required) +
           " times required (" + source + ")" + reached;
}

std::optional<unproven> unproven_by(const record::run_record& run) {
    std::optional<unproven> out;
    for (const record::verdict& v : run.verdicts) {
        if (v.outcome() != record::verdict_outcome::fail) continue;
        std::string reason;
        if (v.check == "evidence_intact") {
            reason = "the control API changed the server during the run";
        } else if (v.check.starts_with(fired_prefix)) {
            reason = firing_shortfall(run, v);
        } else {
            continue;
        }
        if (!out) out.emplace();
        out->reason += (out->reason.empty() ? "" : "; ") + reason;
        out->evidence.insert(out->evidence.end(), v.evidence.begin(), v.evidence.end());
        out->evidence_total += v.evidence_total;
    }
    return out;
}

// What a pass of `check` in a probe whose evidence proves nothing becomes: insufficient evidence,
// saying why, with the causes' evidence.
record::verdict not_judged(const record::verdict& check, const unproven& why) {
    record::verdict out;
    out.check = check.check;
    out.insufficient_evidence = true;
    out.summary = "not judged: " + why.reason;
    out.evidence = why.evidence;
    out.evidence_total = why.evidence_total;
    return out;
}

void settle(property_row& row) {
    const bool failed = std::any_of(row.findings.begin(), row.findings.end(), [](const finding& f) {
        return f.verdict.outcome() == record::verdict_outcome::fail;
    });
    if (failed) {
        row.outcome = property_outcome::fail;
    } else if (row.passed > 0 && row.timing_undecided > 0) {
        row.outcome = property_outcome::insufficient_evidence;
        const auto undecided = std::find_if(row.findings.begin(), row.findings.end(), [](const finding& f) {
            return f.verdict.insufficient_evidence;
        });
        row.reason = "a timing probe could not tell the client from the noise its control measured (" +
                     undecided->probe + ", " + undecided->verdict.check + "), so its other passes do not stand";
    } else if (row.passed > 0) {
        row.outcome = property_outcome::pass;
    } else if (!row.findings.empty()) {
        row.outcome = property_outcome::insufficient_evidence;
        row.reason = row.findings.front().verdict.summary;
    } else {
        row.outcome = property_outcome::not_applicable;
        if (row.reason.empty()) row.reason = "no probe run judges it";
    }
    std::stable_partition(row.findings.begin(), row.findings.end(), [](const finding& f) {
        return f.verdict.outcome() == record::verdict_outcome::fail;
    });
}

}  // namespace

std::string undeclared_because(const property_info& p, const declared_settings& declared, bool builtin) {
    switch (p.applies) {
        case applicability::deadline_declared:
            return builtin || declared.deadline ? "" : "no deadline declared (--deadline)";
        case applicability::max_attempts_declared:
            return builtin || declared.max_attempts ? "" : "no attempt limit declared (--max-attempts)";
        case applicability::attempt_timeout_declared:
            return builtin || declared.attempt_timeout ? "" : "no per-attempt timeout declared (--attempt-timeout)";
        case applicability::grpc_throttling_declared:
            return declared.grpc && declared.grpc->throttling ? "" : "no retryThrottling in the service config";
        case applicability::always:
        case applicability::retried_unsent:
        case applicability::probe_retried:
        case applicability::keys_sent: return "";
    }
    return "";
}

std::string nothing_to_judge(const probe& p, const declared_settings& declared, bool builtin) {
    std::string because;
    for (const auto& [check, id] : p.properties) {
        const property_info* property = find_property(id);
        const std::string why = property == nullptr ? "" : undeclared_because(*property, declared, builtin);
        if (why.empty()) return "";
        if (because.find(why) == std::string::npos) because += (because.empty() ? "" : "; ") + why;
    }
    return because;
}

std::string_view to_string(property_outcome outcome) {
    switch (outcome) {
        case property_outcome::pass: return "pass";
        case property_outcome::fail: return "fail";
        case property_outcome::insufficient_evidence: return "insufficient evidence";
        case property_outcome::not_applicable: return "n/a";
    }
    return "unknown";
}

scorecard make_scorecard(std::span<const probe> probes, std::span<const record::run_record> runs,
                         const declared_settings& declared, bool builtin) {
    scorecard card;
    const bool client_retries = std::any_of(runs.begin(), runs.end(), retried);
    for (const property_info& p : properties()) {
        if (!on_scorecard(p, declared.grpc != nullptr)) continue;
        property_row row;
        row.property = &p;
        card.rows.push_back(std::move(row));
    }
    for (std::size_t i = 0; i < probes.size() && i < runs.size(); ++i) {
        const probe& pr = probes[i];
        const record::run_record& run = runs[i];
        card.attempts += run.journal.size();
        if (!run.harness_error.empty()) {
            card.harness_errors.push_back(run.scenario + ": " + run.harness_error);
            continue;
        }
        const std::optional<unproven> unproven_because = unproven_by(run);
        for (const record::verdict& v : run.verdicts) {
            const property_info* run_property = property_of_run_verdict(v.check);
            const std::string_view id = run_property != nullptr ? run_property->id : pr.property_of(v.check);
            auto row = std::find_if(card.rows.begin(), card.rows.end(),
                                    [&](const property_row& r) { return r.property->id == id; });
            if (row == card.rows.end()) continue;
            if (v.failures_only && v.outcome() != record::verdict_outcome::fail) continue;
            if (const std::string why = not_applicable_because(*row->property, run, client_retries, declared, builtin);
                !why.empty()) {
                if (row->reason.empty()) row->reason = why;
                continue;
            }
            // A failure stands whatever else happened; a pass needs evidence that shows the situation.
            // A check that found nothing to judge is not judged for the same cause: a fault that never
            // fired is why there was nothing (no commit where the reply to a POST was to be lost).
            if (unproven_because && run_property == nullptr && v.outcome() != record::verdict_outcome::fail) {
                ++row->not_judged;
                row->findings.push_back(finding{run.scenario, pr.situation, not_judged(v, *unproven_because)});
                continue;
            }
            if (v.outcome() == record::verdict_outcome::pass) {
                ++row->judged;
                ++row->passed;
                row->passes.push_back(finding{run.scenario, pr.situation, v});
                continue;
            }
            ++(v.outcome() == record::verdict_outcome::fail ? row->judged : row->not_judged);
            // A timing probe (one with a control) that could not tell the client from noise after its
            // rounds leaves its row unproven: another verdict's pass (desynchronized sees arrivals
            // spread by a slow runtime's own queueing) must not stand in for it.
            if (pr.control > 0 && v.insufficient_evidence && run_property == nullptr) ++row->timing_undecided;
            row->findings.push_back(finding{run.scenario, pr.situation, v});
        }
    }
    for (property_row& row : card.rows) settle(row);
    return card;
}

runner::exit_code exit_code_of(const scorecard& card) {
    if (!card.harness_errors.empty()) return runner::exit_code::harness_error;
    runner::exit_code out = runner::exit_code::passed;
    for (const property_row& row : card.rows) {
        if (row.outcome == property_outcome::fail) return runner::exit_code::check_failed;
        if (row.outcome == property_outcome::insufficient_evidence) out = runner::exit_code::insufficient_evidence;
    }
    return out;
}

std::string render_scorecard(const scorecard& card, const declared_settings& declared, const render_options& options) {
    const auto paint = [&](property_outcome o, std::string_view text) {
        if (!options.color) return std::string(text);
        const std::string_view colour = o == property_outcome::pass   ? "\x1b[32m"
                                        : o == property_outcome::fail ? "\x1b[31m"
                                        : o == property_outcome::insufficient_evidence ? "\x1b[33m"
                                                                                       : "\x1b[2m";
        return std::string(colour) + std::string(text) + "\x1b[0m";
    };
    const auto word = [](property_outcome o) -> std::string_view {
        switch (o) {
            case property_outcome::pass: return "PASS";
            case property_outcome::fail: return "FAIL";
            case property_outcome::insufficient_evidence: return "INSUFFICIENT";
            case property_outcome::not_applicable: return "N/A";
        }
        return "?";
    };
    std::string out = "faultline score: " + options.client + "\n";
    if (options.builtin) {
        out += "declared: each probe's [client] policy\n\n";
    } else if (declared.grpc) {
        out += "declared: gRPC service config " +
               (declared.service_config_path.empty() ? std::string("— (no retry policy)") : declared.service_config_path) +
               " · {timeout} " + seconds_text(declared.timeout) + "s\n\n";
    } else {
        out += "declared: deadline " + (declared.deadline ? seconds_text(*declared.deadline) + "s" : std::string("—")) +
           " · max attempts " + (declared.max_attempts ? std::to_string(*declared.max_attempts) : std::string("—")) +
           " · backoff " +
               (declared.curve ? declared.curve->describe() : std::string("—")) +
           " · jitter " + (declared.jitters ? "expected" : "none (judged all the same)") + " · {timeout} " +
           seconds_text(declared.timeout) + "s\n\n";
    }
    std::size_t width = 0;
    for (const property_row& row : card.rows) width = std::max(width, row.property->title.size());
    for (const property_row& row : card.rows) {
        std::string w(word(row.outcome));
        w.resize(12, ' ');
        std::string title(row.property->title);
        title.resize(width, ' ');
        std::string figure;
        if (row.outcome == property_outcome::pass || row.outcome == property_outcome::fail) {
            figure = std::to_string(row.passed) + " of " + std::to_string(row.judged) +
                     (row.judged == 1 ? " situation passed" : " situations passed");
            if (row.not_judged > 0) figure += ", " + std::to_string(row.not_judged) + " not judged";
        } else {
            figure = row.reason;
        }
        out += "  " + paint(row.outcome, w) + " " + title + "  " + figure + "\n";
    }
    bool heading = false;
    for (const property_row& row : card.rows) {
        for (const finding& f : row.findings) {
            if (!heading) {
                out += "\nevidence\n";
                heading = true;
            }
            const bool failed = f.verdict.outcome() == record::verdict_outcome::fail;
            out += "  " + paint(failed ? property_outcome::fail : property_outcome::insufficient_evidence,
                                failed ? "✘" : "?") +
                   " " + std::string(row.property->title) + " — " + f.situation + " (" + f.probe + ", " +
                   f.verdict.check + "): " + f.verdict.summary + "\n";
            out += reports::console_evidence(f.verdict, "      ");
        }
    }
    if (options.verbose) {
        out += "\npasses\n";
        for (const property_row& row : card.rows) {
            for (const finding& f : row.passes) {
                out += "  " + paint(property_outcome::pass, "✔") + " " + std::string(row.property->title) + " — " +
                       f.situation + " (" + f.probe + ", " + f.verdict.check + "): " + f.verdict.summary + "\n";
                out += reports::console_evidence(f.verdict, "      ");
            }
        }
    }
    for (const std::string& e : card.harness_errors) out += "\nharness error: " + e + "\n";
    return out;
}

std::string scorecard_json(const scorecard& card, std::string_view client) {
    boost::json::array rows;
    for (const property_row& row : card.rows) {
        boost::json::array findings;
        std::vector<const finding*> all;
        for (const finding& f : row.findings) all.push_back(&f);
        for (const finding& f : row.passes) all.push_back(&f);
        for (const finding* fp : all) {
            const finding& f = *fp;
            boost::json::array evidence;
            for (const record::evidence_item& e : f.verdict.evidence) {
                boost::json::array seqs(e.seqs.begin(), e.seqs.end());
                evidence.push_back({{"operation", e.operation}, {"seqs", std::move(seqs)}, {"detail", e.detail}});
            }
            findings.push_back({{"probe", f.probe},
                                {"situation", f.situation},
                                {"check", f.verdict.check},
                                {"outcome", to_string(f.verdict.outcome())},
                                {"summary", f.verdict.summary},
                                {"evidence", std::move(evidence)}});
        }
        rows.push_back({{"id", row.property->id},
                        {"title", row.property->title},
                        {"outcome", to_string(row.outcome)},
                        {"judged", row.judged},
                        {"passed", row.passed},
                        {"not_judged", row.not_judged},
                        {"reason", row.reason},
                        {"findings", std::move(findings)}});
    }
    boost::json::array errors(card.harness_errors.begin(), card.harness_errors.end());
    const boost::json::object doc{{"client", client},
                                  {"outcome", runner::to_string(exit_code_of(card))},
                                  {"properties", std::move(rows)},
                                  {"harness_errors", std::move(errors)}};
    return boost::json::serialize(doc) + "\n";
}

}  // namespace faultline::score
