// jittered: the client randomises its backoff, judged from the spread of its gaps (previous attempt's
// t_end → next t_request) at one retry index across operations. Without jitter every operation's k-th
// gap is the same delay plus timing noise, so most of those gaps fall within one noise-wide window;
// any jitter worth having spreads them far wider. An index with at least `min_samples` gaps is NOT
// jittered when more than half of them lie within one window of width max(noise_floor,
// min_relative_spread × median): the noise floor bounds loopback and scheduling noise, the relative
// part noise that grows with the delay. The densest window is searched wherever it lies, not only
// around the median, so a scheduler stall that shifts a minority of the retries by a step (two herds
// sharing two cores) does not pass for jitter, as it would with the interquartile range. When no index
// has enough gaps, the indexes with two or more are pooled, each gap divided by its index's median (at
// least the noise floor), with the window max(min_relative_spread, noise_floor / the smallest such
// median). With fewer gaps than that the verdict is insufficient evidence. Gaps after a response with
// Retry-After are left out: the server chose them, and equal ones are right.
#include <algorithm>
#include <map>

#include "support.hpp"

namespace faultline::harness::checks {

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

class jittered final : public check {
public:
    jittered(std::size_t min_samples, std::chrono::nanoseconds noise_floor, double min_relative_spread)
        : min_samples_(min_samples), noise_floor_(static_cast<double>(noise_floor.count())),
          relative_(min_relative_spread) {}

    verdict evaluate(const run_record&, const operation_groups& operations) const override {
        verdict v;
        std::map<std::size_t, std::vector<gap>> by_index;
        std::size_t after_retry_after = 0;
        std::size_t overlapping = 0;  // sent before the previous attempt ended: a timeout, not a backoff
        for (const auto& op : operations) {
            for (std::size_t k = 1; k < op.attempts.size(); ++k) {
                const journal_record& prev = *op.attempts[k - 1];
                const journal_record& next = *op.attempts[k];
                if (prev.retry_after_ms) {
                    ++after_retry_after;
                    continue;
                }
                if (next.request_ns < prev.finished_ns) {
                    ++overlapping;
                    continue;
                }
                by_index[k].push_back(gap{static_cast<double>(next.request_ns - prev.finished_ns), next.seq});
            }
        }
        std::string judged;
        std::string unjudged;
        for (const auto& [k, gaps] : by_index) {
            if (gaps.size() < min_samples_) {
                unjudged += (unjudged.empty() ? "" : ", ") + std::to_string(k) + " (" +
                            std::to_string(gaps.size()) + ")";
                continue;
            }
            judged += (judged.empty() ? "" : "; ") + judge_index(v, k, gaps);
        }
        if (judged.empty()) judged = judge_pooled(v, by_index);
        std::string summary = judged;
        if (!unjudged.empty() && !v.insufficient_evidence) {
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
        v.passed = !v.insufficient_evidence && v.evidence_total == 0;
        v.summary = summary;
        return v;
    }

private:
    std::string judge_index(verdict& v, std::size_t k, const std::vector<gap>& gaps) const {
        std::vector<double> values;
        values.reserve(gaps.size());
        for (const gap& g : gaps) values.push_back(g.ns);
        const spread s = spread_of(std::move(values), noise_floor_, relative_);
        const std::string line = "retry " + std::to_string(k) + ": " + std::to_string(s.n) +
                                 " gaps, min/median/max " + ms(s.min) + "/" + ms(s.median) + "/" + ms(s.max) +
                                 ", the densest " + ms(s.width) + " holds " + std::to_string(s.densest);
        if (!s.jittered()) {
            add_evidence(v, evidence_item{"", some_seqs(gaps),
                                          line + " (" + ms(s.densest_from) + "–" + ms(s.densest_from + s.width) +
                                              "), more than half; the width is max(noise floor " + ms(noise_floor_) +
                                              ", " + format_number(relative_) +
                                              " × median): one delay plus timing noise, not jittered" +
                                              narrow_note(s, ms(s.width / 2)) +
                                              " (seqs: the first retries at that index)"});
        }
        return line;
    }

    std::string judge_pooled(verdict& v, const std::map<std::size_t, std::vector<gap>>& by_index) const {
        std::vector<double> normalised;
        std::vector<gap> pooled;
        double smallest_scale = 0;
        std::string indexes;
        for (const auto& [k, gaps] : by_index) {
            if (gaps.size() < 2) continue;  // a lone gap says nothing about spread at its index
            std::vector<double> values;
            for (const gap& g : gaps) values.push_back(g.ns);
            std::sort(values.begin(), values.end());
            // Dividing by at least the noise floor keeps instant retries (median ≈ 0) from blowing up.
            const double scale = std::max(quantile(values, 0.5), noise_floor_);
            smallest_scale = pooled.empty() ? scale : std::min(smallest_scale, scale);
            for (const gap& g : gaps) normalised.push_back(g.ns / scale);
            pooled.insert(pooled.end(), gaps.begin(), gaps.end());
            indexes += (indexes.empty() ? "" : ", ") + std::to_string(k);
        }
        if (pooled.size() < min_samples_) {
            v.insufficient_evidence = true;
            return "no retry index had " + std::to_string(min_samples_) + " gaps and indexes with two or more pool " +
                   std::to_string(pooled.size()) + " (" + std::to_string(min_samples_) +
                   " needed): too few retries to tell jitter from timing noise";
        }
        // The noise floor in units of the smallest scale is the largest share of a delay noise can take.
        const spread s = spread_of(std::move(normalised), std::max(relative_, noise_floor_ / smallest_scale), 0);
        const std::string line = "retries " + indexes + " pooled (" + std::to_string(s.n) +
                                 " gaps, each over its index's median): the densest " + format_number(s.width) +
                                 " of a median holds " + std::to_string(s.densest);
        if (!s.jittered()) {
            add_evidence(v, evidence_item{"", some_seqs(pooled),
                                          line + ", more than half; the width is max(" + format_number(relative_) +
                                              ", noise floor " + ms(noise_floor_) + " / " + ms(smallest_scale) +
                                              "): one delay per index plus timing noise, not jittered" +
                                              narrow_note(s, format_number(s.width / 2) + " of a median")});
        }
        return line;
    }

    // Said when the gaps fill the window evenly: then they may be jitter only about twice as wide as the
    // window, which this check cannot tell from noise (docs/checks.md: its false-alarm rates).
    static std::string narrow_note(const spread& s, const std::string& half_width) {
        if (!s.about_as_wide_as_the_window()) return "";
        return "; but no " + half_width + " holds more than " + std::to_string(s.densest_half) +
               ", so they may as well be jitter about twice the window wide, too narrow to tell from noise: "
               "lower noise_floor if the timing is cleaner, or judge a longer backoff";
    }

    std::size_t min_samples_;
    double noise_floor_;  // ns
    double relative_;
};

std::unique_ptr<check> make_jittered(config::table_reader& p) {
    const auto min_samples = static_cast<std::size_t>(p.integer("min_samples", 4, 1'000'000'000).value_or(8));
    const auto noise_floor = p.duration("noise_floor").value_or(std::chrono::milliseconds{5});
    const double relative = p.number("min_relative_spread", 0, 1).value_or(0.001);
    return std::make_unique<jittered>(min_samples, noise_floor, relative);
}

}  // namespace

const core::registration<check_info> registered{
    "jittered", "gaps at one retry index spread wider than timing noise: the backoff is randomised", &make_jittered};

}  // namespace faultline::harness::checks
