// jittered: the client randomises its backoff, judged from the spread of its gaps (previous attempt's
// t_end → next t_request) at one retry index across operations. Without jitter every operation's k-th
// gap is the same delay plus timing noise, so most of those gaps fall within one noise-wide window;
// any jitter worth having spreads them far wider. The window is max(noise_floor, min_relative_spread ×
// median) or, when a control was measured in the same run (timing_control.hpp), max(noise_floor, the
// control's noise): the control measures the noise a relative floor only guesses at.
// An index with at least `min_samples` gaps is jittered when no such window holds more than half of
// them. When one does, the index is NOT jittered only if the window is the floor's (a quiet run: the
// control, if any, saw no more noise) and the majority sits well inside it; otherwise the check cannot
// tell a constant delay from jitter narrower than the noise, and says insufficient evidence — never a
// pass. An index whose median gap is under `min_gap` is not jittered either way: noise only lengthens
// a wait, so such retries did not wait; nor is a client whose every operation that retried twice or
// more did so with every gap under `min_gap` (back_to_back below), however few operations it ran. The densest window is searched wherever it lies, not only
// around the median, so a scheduler stall that shifts a minority of the retries by a step (two herds
// sharing two cores) does not pass for jitter, as it would with the interquartile range. When no index
// has enough gaps, the indexes with two or more are pooled, each gap divided by its index's median (at
// least the noise floor), with the window max(min_relative_spread, noise / the smallest such median).
// With fewer gaps than that the verdict is insufficient evidence. Gaps after a response with
// Retry-After are left out: the server chose them, and equal ones are right. An index whose spread
// would pass is insufficient evidence when every gap the client showed alone at that index was a
// fraction of the index's median (timing_control::queueing_explains): a herd of processes that retry
// at once with no delay is spread by their queueing for the CPU; and an index judged jittered, or one
// that cannot tell, is outweighed when the client alone waited the same at every retry index
// (timing_control::pace_is_fixed): its delay is fixed, whatever its herd's queueing spread.
#include <algorithm>
#include <map>

#include "faultline/checks/timing_control.hpp"
#include "support.hpp"

namespace faultline::checks {

namespace {

struct gap {
    double ns;
    std::uint64_t retry_seq;  // the attempt the gap led to
};

// How one sample of gaps is spread: its range, median, and the most of it one noise-wide window holds.
struct spread {
    std::size_t n = 0;
    double min = 0;
    double median = 0;
    double max = 0;
    double width = 0;         // the noise window: max(floor, relative × median)
    std::size_t densest = 0;  // the most values any window [from, from + width] holds
    double densest_from = 0;
    std::size_t densest_half = 0;  // the most values any window half that wide holds
    // A strict majority within timing noise of one value is one delay plus noise.
    bool jittered() const { return 2 * densest <= n; }
    // ... unless no half-width window holds that majority: the gaps then fill the window evenly, as
    // jitter about twice the window wide does, and the check cannot tell them from noise.
    bool about_as_wide_as_the_window() const { return 2 * densest_half <= n; }
};

spread spread_of(std::vector<double> values, double width_floor, double relative) {
    std::sort(values.begin(), values.end());
    spread s;
    s.n = values.size();
    s.min = values.front();
    s.max = values.back();
    s.median = quantile(values, 0.5);
    s.width = std::max(width_floor, relative * s.median);
    // The densest window starts at a value: slide its end along the sorted values.
    std::size_t end = 0;
    std::size_t half_end = 0;
    for (std::size_t begin = 0; begin < values.size(); ++begin) {
        while (end < values.size() && values[end] <= values[begin] + s.width) ++end;
        while (half_end < values.size() && values[half_end] <= values[begin] + s.width / 2) ++half_end;
        if (end - begin > s.densest) {
            s.densest = end - begin;
            s.densest_from = values[begin];
        }
        s.densest_half = std::max(s.densest_half, half_end - begin);
    }
    return s;
}

std::string ms(double ns) { return format_ms(static_cast<std::int64_t>(std::llround(ns))); }

// The first few retries a failed sample points at; the evidence shows seqs, the journal the rest.
constexpr std::size_t seqs_shown = 8;

std::vector<std::uint64_t> some_seqs(const std::vector<gap>& gaps) {
    std::vector<std::uint64_t> out;
    for (std::size_t i = 0; i < gaps.size() && i < seqs_shown; ++i) out.push_back(gaps[i].retry_seq);
    return out;
}

// How one index (or the pool) came out.
enum class judged_as { jittered, not_jittered, cannot_tell };

// Operations that retried at least twice, and whether every one of them did so back to back (each
// gap under min_gap). Noise only lengthens a wait, so such a client has no delay to jitter, however
// few operations it ran: a client that runs alone (no herd queueing it) shows it plainly. Full jitter
// of 200 ms·2^(n-1) puts all three gaps of one operation under 20 ms once in 8,000.
struct back_to_back {
    std::size_t operations = 0;  // that retried twice or more
    std::size_t idle = 0;        // of those, the ones with every gap under min_gap
    std::vector<gap> gaps;       // the idle operations' gaps
    double largest = 0;

    void add(const std::vector<gap>& op_gaps, double min_gap) {
        if (op_gaps.size() < 2) return;
        ++operations;
        if (std::any_of(op_gaps.begin(), op_gaps.end(), [&](const gap& g) { return g.ns >= min_gap; })) return;
        ++idle;
        for (const gap& g : op_gaps) largest = std::max(largest, g.ns);
        gaps.insert(gaps.end(), op_gaps.begin(), op_gaps.end());
    }
    bool never_waited() const { return operations > 0 && idle == operations && gaps.size() >= min_gaps; }

    static constexpr std::size_t min_gaps = 3;
};

class jittered final : public check {
public:
    jittered(std::size_t min_samples, std::chrono::nanoseconds noise_floor, double min_relative_spread,
             std::chrono::nanoseconds min_gap)
        : min_samples_(min_samples), noise_floor_(static_cast<double>(noise_floor.count())),
          relative_(min_relative_spread), min_gap_(static_cast<double>(min_gap.count())) {}

    record::verdict evaluate(const record::run_record& run, const record::operation_groups& operations) const override {
        return judge(run, operations, nullptr);
    }
    record::verdict evaluate_with_control(const record::run_record& run, const record::operation_groups& operations,
                                  const timing_control& control) const override {
        return judge(run, operations, &control);
    }

private:
    // The noise the gaps are judged against: the control's, when one was measured in the run.
    struct noise {
        bool measured = false;  // a control measured in the run: its noise replaces the relative floor
        double control = 0;     // ns; 0 without a measured control
        std::string source;  // said in the summary
        const timing_control* run_control = nullptr;  // for its queueing_explains, when there is one
    };

    record::verdict judge(const record::run_record&, const record::operation_groups& operations, const timing_control* control) const {
        record::verdict v;
        noise n;
        n.run_control = control;
        if (control != nullptr && control->measured()) {
            n.measured = true;
            n.control = static_cast<double>(control->noise_ns());
            n.source = "judged against " + control->describe();
        } else if (control != nullptr) {
            n.source = "judged against noise_floor " + ms(noise_floor_) + ": " + control->describe();
        } else {
            n.source = "judged against noise_floor " + ms(noise_floor_) + " (no control measured in this run)";
        }
        std::map<std::size_t, std::vector<gap>> by_index;
        std::size_t after_retry_after = 0;
        std::size_t overlapping = 0;  // sent before the previous attempt ended: a timeout, not a backoff
        back_to_back idle;
        for (const auto& op : operations) {
            std::vector<gap> op_gaps;
            for (std::size_t k = 1; k < op.attempts.size(); ++k) {
                const record::journal_record& prev = *op.attempts[k - 1];
                const record::journal_record& next = *op.attempts[k];
                if (prev.retry_after_ms) {
                    ++after_retry_after;
                    continue;
                }
                if (next.request_ns < prev.finished_ns) {
                    ++overlapping;
                    continue;
                }
                const gap g{static_cast<double>(next.request_ns - prev.finished_ns), next.seq};
                by_index[k].push_back(g);
                op_gaps.push_back(g);
            }
            idle.add(op_gaps, min_gap_);
        }
        std::string judged;
        std::string unjudged;
        std::vector<judged_as> outcomes;
        std::string cannot_tell;
        if (idle.never_waited()) judged = judge_back_to_back(v, idle, outcomes);
        for (const auto& [k, gaps] : by_index) {
            if (gaps.size() < min_samples_) {
                unjudged += (unjudged.empty() ? "" : ", ") + std::to_string(k) + " (" +
                            std::to_string(gaps.size()) + ")";
                continue;
            }
            judged += (judged.empty() ? "" : "; ") + judge_index(v, k, gaps, n, outcomes, cannot_tell);
        }
        if (outcomes.empty()) judged = judge_pooled(v, by_index, n, outcomes, cannot_tell);
        const auto any = [&](judged_as a) { return std::find(outcomes.begin(), outcomes.end(), a) != outcomes.end(); };
        if (control != nullptr && !outcomes.empty() && !any(judged_as::not_jittered)) {
            if (const std::string fixed = control->pace_is_fixed(std::llround(noise_floor_)); !fixed.empty()) {
                outcomes.push_back(judged_as::not_jittered);
                judged += "; " + fixed;
                add_evidence(v, record::evidence_item{"", {}, fixed + " (the probes where it ran alone)"});
            }
        }
        std::string summary = judged;
        if (!unjudged.empty() && !outcomes.empty()) {
            summary += "; retry indexes with fewer than " + std::to_string(min_samples_) + " gaps, not judged alone: " +
                       unjudged;
        }
        if (overlapping > 0) {
            summary += "; " + std::to_string(overlapping) +
                       " retries sent before their previous attempt ended (the client's timeout fired) left out";
        }
        if (after_retry_after > 0) {
            summary += "; " + std::to_string(after_retry_after) + " gaps after Retry-After left out";
        }
        summary += "; " + n.source;
        if (outcomes.empty()) {
            v.insufficient_evidence = true;
        } else if (!any(judged_as::not_jittered) && any(judged_as::cannot_tell)) {
            // Never a pass when some index could not be told from noise: a client may jitter its
            // first retry and not the next (AWS Go v2 at its cap).
            v.insufficient_evidence = true;
            summary = "cannot tell from timing noise: " + cannot_tell + "; " + summary;
        }
        v.passed = !v.insufficient_evidence && !any(judged_as::not_jittered);
        v.summary = summary;
        return v;
    }

    std::string judge_back_to_back(record::verdict& v, const back_to_back& idle, std::vector<judged_as>& outcomes) const {
        outcomes.push_back(judged_as::not_jittered);
        const std::string line = std::to_string(idle.operations) + (idle.operations == 1 ? " operation" : " operations") +
                                 " retried back to back: all " + std::to_string(idle.gaps.size()) +
                                 " of their gaps under min_gap " + ms(min_gap_) + " (the longest " + ms(idle.largest) +
                                 ")";
        add_evidence(v, record::evidence_item{"", some_seqs(idle.gaps),
                                      line + ": the client does not wait (noise only lengthens a wait), so it has "
                                             "no delay to jitter (seqs: its first retries)"});
        return line;
    }

    // The window a sample is judged in: the noise floor (or its share of the median), or the
    // control's noise when that is wider. `floor` in the sample's units, `control` too.
    static judged_as classify(const spread& s, double floor_width, double control_width) {
        if (s.jittered()) return judged_as::jittered;
        // The control saw more noise than the floor: the run was noisier than the floor allows for,
        // and a spread within that noise may be jitter narrower than it.
        if (control_width > floor_width) return judged_as::cannot_tell;
        // The gaps fill the window evenly, as jitter about twice the window wide does.
        if (s.about_as_wide_as_the_window()) return judged_as::cannot_tell;
        return judged_as::not_jittered;
    }

    std::string judge_index(record::verdict& v, std::size_t k, const std::vector<gap>& gaps, const noise& n,
                            std::vector<judged_as>& outcomes, std::string& cannot_tell) const {
        std::vector<double> values;
        values.reserve(gaps.size());
        for (const gap& g : gaps) values.push_back(g.ns);
        std::vector<double> sorted = values;
        std::sort(sorted.begin(), sorted.end());
        const double floor_width = n.measured ? noise_floor_ : std::max(noise_floor_, relative_ * quantile(sorted, 0.5));
        const spread s = spread_of(std::move(values), std::max(floor_width, n.control), 0);
        const std::string line = "retry " + std::to_string(k) + ": " + std::to_string(s.n) +
                                 " gaps, min/median/max " + ms(s.min) + "/" + ms(s.median) + "/" + ms(s.max) +
                                 ", the densest " + ms(s.width) + " holds " + std::to_string(s.densest);
        const std::string width_is = "the width is max(noise floor " + ms(noise_floor_) + ", " +
                                     (n.measured ? "the control's noise " + ms(n.control)
                                                    : format_number(relative_) + " × median") +
                                     ")";
        if (s.median < min_gap_) {
            outcomes.push_back(judged_as::not_jittered);
            add_evidence(v, record::evidence_item{"", some_seqs(gaps),
                                          line + ": the median gap is under min_gap " + ms(min_gap_) +
                                              ": the retries do not wait (noise only lengthens a wait), not "
                                              "jittered (seqs: the first retries at that index)"});
            return line;
        }
        judged_as outcome = classify(s, floor_width, n.control);
        const std::string queueing =
            outcome == judged_as::jittered && n.run_control != nullptr ? n.run_control->queueing_explains(k, std::llround(s.median)) : "";
        if (!queueing.empty()) outcome = judged_as::cannot_tell;
        outcomes.push_back(outcome);
        if (outcome == judged_as::not_jittered) {
            add_evidence(v, record::evidence_item{"", some_seqs(gaps),
                                          line + " (" + ms(s.densest_from) + "–" + ms(s.densest_from + s.width) +
                                              "), more than half; " + width_is +
                                              ": one delay plus timing noise, not jittered (seqs: the first "
                                              "retries at that index)"});
        } else if (outcome == judged_as::cannot_tell) {
            cannot_tell += (cannot_tell.empty() ? "" : "; ") +
                           (queueing.empty() ? cannot_tell_because(s, floor_width, n.control, ms(s.width / 2)) : queueing) +
                           " at retry " + std::to_string(k);
        }
        return line;
    }

    std::string judge_pooled(record::verdict& v, const std::map<std::size_t, std::vector<gap>>& by_index, const noise& n,
                             std::vector<judged_as>& outcomes, std::string& cannot_tell) const {
        std::vector<double> normalised;
        std::vector<gap> pooled;
        double smallest_scale = 0;
        double largest_median = 0;
        std::string indexes;
        for (const auto& [k, gaps] : by_index) {
            if (gaps.size() < 2) continue;  // a lone gap says nothing about spread at its index
            std::vector<double> values;
            for (const gap& g : gaps) values.push_back(g.ns);
            std::sort(values.begin(), values.end());
            largest_median = std::max(largest_median, quantile(values, 0.5));
            // Dividing by at least the noise floor keeps instant retries (median ≈ 0) from blowing up.
            const double scale = std::max(quantile(values, 0.5), noise_floor_);
            smallest_scale = pooled.empty() ? scale : std::min(smallest_scale, scale);
            for (const gap& g : gaps) normalised.push_back(g.ns / scale);
            pooled.insert(pooled.end(), gaps.begin(), gaps.end());
            indexes += (indexes.empty() ? "" : ", ") + std::to_string(k);
        }
        if (pooled.size() < min_samples_) {
            return "no retry index had " + std::to_string(min_samples_) + " gaps and indexes with two or more pool " +
                   std::to_string(pooled.size()) + " (" + std::to_string(min_samples_) +
                   " needed): too few retries to tell jitter from timing noise";
        }
        // The noise in units of the smallest scale is the largest share of a delay noise can take.
        const double floor_width =
            n.measured ? noise_floor_ / smallest_scale : std::max(relative_, noise_floor_ / smallest_scale);
        const double control_width = n.control / smallest_scale;
        const spread s = spread_of(std::move(normalised), std::max(floor_width, control_width), 0);
        const std::string line = "retries " + indexes + " pooled (" + std::to_string(s.n) +
                                 " gaps, each over its index's median): the densest " + format_number(s.width) +
                                 " of a median holds " + std::to_string(s.densest);
        if (largest_median < min_gap_) {
            outcomes.push_back(judged_as::not_jittered);
            add_evidence(v, record::evidence_item{"", some_seqs(pooled),
                                          line + ": every index's median gap is under min_gap " + ms(min_gap_) +
                                              ": the retries do not wait (noise only lengthens a wait), not jittered"});
            return line;
        }
        const judged_as outcome = classify(s, floor_width, control_width);
        outcomes.push_back(outcome);
        if (outcome == judged_as::not_jittered) {
            add_evidence(v, record::evidence_item{"", some_seqs(pooled),
                                          line + ", more than half; the width is max(" +
                                              (n.measured ? std::string{} : format_number(relative_) + ", ") +
                                              "noise floor " + ms(noise_floor_) + " / " + ms(smallest_scale) +
                                              (n.control > 0 ? ", the control's noise " + ms(n.control) + " / " +
                                                                   ms(smallest_scale)
                                                             : std::string{}) +
                                              "): one delay per index plus timing noise, not jittered"});
        } else if (outcome == judged_as::cannot_tell) {
            cannot_tell += cannot_tell_because(s, floor_width, control_width, format_number(s.width / 2) + " of a median") +
                           " (pooled)";
        }
        return line;
    }

    static std::string cannot_tell_because(const spread& s, double floor_width, double control_width,
                                           const std::string& half_width) {
        if (control_width > floor_width) {
            return "more than half the gaps lie within the noise the control measured, wider than the floor: a "
                   "constant delay and jitter narrower than that noise look the same";
        }
        return "more than half the gaps lie within the noise window, but no " + half_width + " holds more than " +
               std::to_string(s.densest_half) +
               ": they fill it evenly, as jitter about twice the window wide would (lower noise_floor if the "
               "timing is cleaner, or judge a longer backoff)";
    }

    std::size_t min_samples_;
    double noise_floor_;  // ns
    double relative_;
    double min_gap_;  // ns
};

std::unique_ptr<check> make_jittered(config::table_reader& p) {
    const auto min_samples = static_cast<std::size_t>(p.integer("min_samples", 4, 1'000'000'000).value_or(8));
    const auto noise_floor = p.duration("noise_floor").value_or(std::chrono::milliseconds{5});
    const double relative = p.number("min_relative_spread", 0, 1).value_or(0.001);
    const auto min_gap = p.duration("min_gap").value_or(std::chrono::nanoseconds{0});
    return std::make_unique<jittered>(min_samples, noise_floor, relative, min_gap);
}

}  // namespace

const core::registration<check_info> registered{
    "jittered", "gaps at one retry index spread wider than timing noise: the backoff is randomised", &make_jittered};

}  // namespace faultline::checks
