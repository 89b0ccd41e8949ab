// spacing: retries are spaced and grow, with no curve declared. Two parts:
//   1. Spaced: a client that does not wait sends its retries back to back. Noise only lengthens a
//      wait, so a gap under `min_gap` (previous attempt's t_end → the retry's t_request) says the delay
//      itself was shorter. One short gap proves little — full jitter draws near-zero delays by design —
//      so the check flags what jitter cannot explain: two or more retry indexes whose median gap (over
//      at least `min_samples` operations) is under `min_gap` (one alone is a design: urllib3 sleeps 0
//      before its first retry), and — where no index has that many gaps (one process's retries) — an
//      operation whose every gap, two or more, is under it.
//   2. Grows: at the retry indexes with at least `min_samples` gaps, the last judged index's median
//      exceeds the first's by more than max(noise_floor, min_relative_growth × the first median) — a
//      few ms on a second is noise, not growth — and than the control's noise. (Not step by step: the median of 24 full-jitter
//      draws falls from one index to the next in about 2 % of runs.) The noise is max(noise_floor, the control's) when a control was
//      measured in the run (timing_control.hpp). A growth within a noise wider than the floor cannot
//      be told from a constant delay: insufficient evidence, never a pass. A client that declared a
//      constant curve (multiplier 1) is not held to growth; with `grow = false` neither is any.
//      Nor is a herd whose queueing hides the curve: no growth in the herd while the client's lone
//      gaps (timing_control::alone_gaps_ns) grew is insufficient evidence (grew_alone).
// A gap under `min_gap` by no more than the server itself ran late around the previous attempt (a
// server_late spell: its end may be stamped that late) is not judged. Gaps after a response with
// Retry-After are left out (the server chose them), and so are resends
// after a reused kept-alive connection died without a reply (the HTTP stack's transparent resend on
// a fresh connection, counted apart) and retries sent before their previous attempt ended (the
// client's own timeout fired: the server cannot see how long it waited).
#include <algorithm>
#include <map>

#include "faultline/checks/timing_control.hpp"
#include "support.hpp"

namespace faultline::checks {

namespace {

std::string ms(double ns) { return format_ms(static_cast<std::int64_t>(std::llround(ns))); }

struct spaced_gap {
    double ns;
    const record::journal_record* prev;
    const record::journal_record* next;
    bool explained = false;  // short by no more than the server's own lateness around `prev`
};

// The previous attempt went out on a reused kept-alive connection and got no reply: a stack that
// resends it at once on a fresh connection is replaying a request the dead connection swallowed.
bool resend_after_dead_keep_alive(const record::journal_record& prev) {
    return prev.connection_request && *prev.connection_request > 1 && prev.status == 0;
}

class spacing final : public check {
public:
    spacing(std::chrono::nanoseconds min_gap, std::size_t min_samples, std::chrono::nanoseconds noise_floor,
            double min_relative_growth, bool grow)
        : min_gap_(static_cast<double>(min_gap.count())), min_samples_(min_samples),
          noise_floor_(static_cast<double>(noise_floor.count())), relative_growth_(min_relative_growth), grow_(grow) {}

    record::verdict evaluate(const record::run_record& run, const record::operation_groups& operations) const override {
        return judge(run, operations, nullptr);
    }
    record::verdict evaluate_with_control(const record::run_record& run, const record::operation_groups& operations,
                                  const timing_control& control) const override {
        return judge(run, operations, &control);
    }

private:
    record::verdict judge(const record::run_record& run, const record::operation_groups& operations, const timing_control* control) const {
        record::verdict v;
        const server_lateness lateness{run};
        lateness_excuses excused{lateness};
        std::map<std::size_t, std::vector<spaced_gap>> by_index;
        std::size_t judged = 0;
        std::size_t after_retry_after = 0;
        std::size_t resends = 0;
        std::size_t overlapping = 0;
        std::size_t short_ops = 0;
        std::size_t unjudged_ops = 0;  // back to back for all the server's lateness lets us see
        // Added after the per-index findings, which say more in fewer lines (evidence is capped).
        std::vector<record::evidence_item> back_to_back_operations;
        for (const auto& op : operations) {
            std::vector<spaced_gap> gaps;
            bool some_explained = false;
            for (std::size_t k = 1; k < op.attempts.size(); ++k) {
                const record::journal_record& prev = *op.attempts[k - 1];
                const record::journal_record& next = *op.attempts[k];
                if (prev.retry_after_ms) {
                    ++after_retry_after;
                    continue;
                }
                if (resend_after_dead_keep_alive(prev)) {
                    ++resends;
                    continue;
                }
                if (next.request_ns < prev.finished_ns) {
                    ++overlapping;
                    continue;
                }
                spaced_gap g{static_cast<double>(next.request_ns - prev.finished_ns), &prev, &next};
                g.explained = g.ns < min_gap_ && excused.excuse(prev.request_ns, prev.finished_ns, min_gap_ - g.ns);
                // An explained gap's length is unknown: it counts neither as short nor as a wait. Its
                // index keeps it, so that leaving it out does not lift the median.
                by_index[k].push_back(g);
                if (g.explained) {
                    some_explained = true;
                    continue;
                }
                gaps.push_back(g);
                ++judged;
            }
            const auto short_gaps = static_cast<std::size_t>(
                std::count_if(gaps.begin(), gaps.end(), [&](const spaced_gap& g) { return g.ns < min_gap_; }));
            // Every gap it could judge was short and the others are unknown: each unknown one may have
            // been a wait, so neither back to back nor spaced.
            if (some_explained && short_gaps == gaps.size()) {
                ++unjudged_ops;
                continue;
            }
            // Every one of two or more: full jitter at a 50 ms base draws two of three gaps under 20 ms
            // in one operation of eight (the builtin client did), so "most" would be a false alarm.
            if (short_gaps < 2 || short_gaps < gaps.size()) continue;
            ++short_ops;
            std::string detail = std::to_string(short_gaps) + " of its " + std::to_string(gaps.size()) +
                                 " retries came under min_gap " + ms(min_gap_) +
                                 " after the previous attempt ended: back to back";
            std::vector<std::uint64_t> seqs{gaps.front().prev->seq};
            detail += "\n" + describe_attempt(*gaps.front().prev);
            for (const spaced_gap& g : gaps) {
                seqs.push_back(g.next->seq);
                detail += "\n" + describe_attempt(*g.next) + " (gap " + ms(g.ns) + ")";
            }
            back_to_back_operations.push_back(record::evidence_item{std::string(op.operation), std::move(seqs), detail});
        }
        const double control_noise = control != nullptr && control->measured() ? static_cast<double>(control->noise_ns()) : 0;
        std::string medians;
        std::vector<std::pair<std::size_t, double>> judged_medians;
        std::size_t explained_indexes = 0;
        std::vector<record::evidence_item> short_index_items;
        for (auto& [k, gaps] : by_index) {
            if (gaps.size() < min_samples_) continue;
            std::vector<double> values;
            for (const spaced_gap& g : gaps) values.push_back(g.ns);
            std::sort(values.begin(), values.end());
            const double median = quantile(values, 0.5);
            medians += (medians.empty() ? "" : ", ") + std::string("retry ") + std::to_string(k) + " " + ms(median);
            const auto short_unexplained = static_cast<std::size_t>(std::count_if(
                gaps.begin(), gaps.end(), [&](const spaced_gap& g) { return g.ns < min_gap_ && !g.explained; }));
            if (median < min_gap_ && 2 * short_unexplained <= gaps.size()) {
                // The short majority needs gaps the server's lateness explains: neither this median nor
                // its growth can be judged.
                ++explained_indexes;
                continue;
            }
            judged_medians.emplace_back(k, median);
            if (median >= min_gap_) continue;
            std::vector<std::uint64_t> seqs;
            for (std::size_t i = 0; i < gaps.size() && seqs.size() < 8; ++i) seqs.push_back(gaps[i].next->seq);
            short_index_items.push_back(record::evidence_item{"", std::move(seqs),
                                                      "retry " + std::to_string(k) + ": the median of " +
                                                          std::to_string(gaps.size()) + " gaps is " + ms(median) +
                                                          ", under min_gap " + ms(min_gap_) +
                                                          ": most retries at that index did not wait (seqs: the "
                                                          "first of them)"});
        }
        // One index that does not wait is a design (urllib3 sleeps 0 before its first retry, then
        // backs off); two or more are a client that does not back off.
        const std::size_t short_indexes = short_index_items.size();
        if (short_indexes >= 2) {
            for (record::evidence_item& item : short_index_items) add_evidence(v, std::move(item));
        }
        // Where the indexes' medians judge (a herd), one operation of many drawing two near-zero delays
        // is full jitter's luck (about 1 run in 200 at base 1 s), not a finding; alone, it is the evidence.
        if (judged_medians.empty()) {
            for (record::evidence_item& item : back_to_back_operations) add_evidence(v, std::move(item));
        } else {
            short_ops = 0;
            unjudged_ops = 0;
        }
        std::string summary = std::to_string(judged) + " gaps judged: " + std::to_string(short_ops) +
                              " operations retried back to back (every gap, two or more, under " + ms(min_gap_) + "), " +
                              std::to_string(short_indexes) + " retry indexes with a median under it" +
                              (short_indexes == 1 ? " (one alone is no finding)" : "");
        summary += excused.clause("they came under min_gap", "around the previous attempt");
        if (unjudged_ops > 0) {
            summary += "; " + std::to_string(unjudged_ops) +
                       " operations not judged: every gap the server's lateness does not explain was under min_gap";
        }
        if (explained_indexes > 0) {
            summary += "; " + std::to_string(explained_indexes) +
                       " retry indexes with a median under min_gap not judged: most of their short gaps are ones "
                       "the server's lateness explains";
        }
        if (!medians.empty()) summary += "; medians: " + medians;
        bool cannot_tell = false;
        summary += "; " + judge_growth(v, run, judged_medians, control_noise, control, cannot_tell);
        if (resends > 0) {
            summary += "; " + std::to_string(resends) +
                       " resends after a reused kept-alive connection died without a reply left out";
        }
        if (overlapping > 0) {
            summary += "; " + std::to_string(overlapping) + " retries sent before their previous attempt ended left out";
        }
        if (after_retry_after > 0) summary += "; " + std::to_string(after_retry_after) + " gaps after Retry-After left out";
        if (control != nullptr) summary += "; " + control->describe();
        v.summary = summary;
        if (judged == 0 && v.evidence_total == 0) {
            v.insufficient_evidence = true;
            v.summary = "no gap before a retry to judge: " + summary;
            return v;
        }
        cannot_tell = cannot_tell || explained_indexes > 0 || unjudged_ops > 0;
        v.insufficient_evidence = v.evidence_total == 0 && cannot_tell;
        v.passed = v.evidence_total == 0 && !cannot_tell;
        return v;
    }

    // The growth part, on the medians of the indexes with enough gaps; returns its summary.
    std::string judge_growth(record::verdict& v, const record::run_record& run, const std::vector<std::pair<std::size_t, double>>& medians,
                             double control_noise, const timing_control* control, bool& cannot_tell) const {
        if (!grow_) return "growth not judged (grow = false)";
        if (run.declared.backoff && run.declared.backoff->multiplier <= 1.0) {
            return "growth not judged: the client declared a constant backoff";
        }
        if (medians.size() < 2) {
            return "growth not judged (fewer than two retry indexes with " + std::to_string(min_samples_) + " gaps)";
        }
        // The growth worth the name: more than the floor and than a share of the first median, so
        // noise of a few ms on a second-long delay is not growth; and more than the control's noise.
        const double floor = std::max(noise_floor_, relative_growth_ * medians.front().second);
        const double noise = std::max(floor, control_noise);
        const std::string noise_is = "at least " + ms(noise) +
                                     (control_noise > floor ? " (the control's noise)"
                                                            : " (max(noise floor, " + format_number(relative_growth_) +
                                                                  " × the first median))");
        const double growth = medians.back().second - medians.front().second;
        const std::string line = "median gap from retry " + std::to_string(medians.front().first) + " to " +
                                 std::to_string(medians.back().first) + " grows by " + ms(growth) + " (" + noise_is + ")";
        if (growth > noise) return line;
        if (control_noise > floor) {
            cannot_tell = true;
            return line + ": within the noise the control measured, growth cannot be told from a constant delay";
        }
        if (const std::string alone = grew_alone(control, medians.front().first, medians.back().first); !alone.empty()) {
            cannot_tell = true;
            return line + ": " + alone;
        }
        add_evidence(v, record::evidence_item{"", {},
                                      "the backoff does not grow: " + line +
                                          "; declare --backoff with a constant curve if that is the design"});
        return line;
    }

    // Where the client ran alone (no herd queueing it) its gaps grew from index `first` to `last` by
    // more than growth worth the name: the herd's queueing for the CPU (a Node.js herd under load
    // lifted a full-jitter client's medians from about 100/200/400 ms to 302/293/326) hides its curve,
    // so the herd cannot show it does not grow. "" when the lone gaps do not say so.
    std::string grew_alone(const timing_control* control, std::size_t first, std::size_t last) const {
        if (control == nullptr) return "";
        const auto from = control->alone_gaps_ns.find(first);
        const auto to = control->alone_gaps_ns.find(last);
        if (from == control->alone_gaps_ns.end() || to == control->alone_gaps_ns.end() ||
            from->second.size() < timing_control::min_alone_gaps || to->second.size() < timing_control::min_alone_gaps) {
            return "";
        }
        const auto median_of = [](const std::vector<std::int64_t>& gaps) {
            std::vector<double> values(gaps.begin(), gaps.end());
            std::sort(values.begin(), values.end());
            return quantile(values, 0.5);
        };
        const double alone_first = median_of(from->second);
        const double alone_last = median_of(to->second);
        if (alone_last - alone_first <= std::max(noise_floor_, relative_growth_ * alone_first)) return "";
        return "alone, the client's median gap grew from " + ms(alone_first) + " at retry " + std::to_string(first) +
               " to " + ms(alone_last) + " at retry " + std::to_string(last) +
               ": the herd's queueing hides its curve, growth cannot be told";
    }

    double min_gap_;  // ns
    std::size_t min_samples_;
    double noise_floor_;  // ns
    double relative_growth_;
    bool grow_;
};

std::unique_ptr<check> make_spacing(config::table_reader& p) {
    using namespace std::chrono_literals;
    const auto min_gap = p.duration("min_gap").value_or(20ms);
    const auto min_samples = static_cast<std::size_t>(p.integer("min_samples", 4, 1'000'000'000).value_or(8));
    const auto noise_floor = p.duration("noise_floor").value_or(5ms);
    const double min_relative_growth = p.number("min_relative_growth", 0, 10).value_or(0.1);
    const bool grow = p.boolean("grow").value_or(true);
    return std::make_unique<spacing>(min_gap, min_samples, noise_floor, min_relative_growth, grow);
}

}  // namespace

const core::registration<check_info> registered{
    "spacing", "retries wait (no back-to-back retries) and the backoff grows, judged against the run's timing noise",
    &make_spacing};

}  // namespace faultline::checks
