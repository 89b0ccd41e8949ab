// backoff: every gap between consecutive attempts of an operation (previous t_end → next t_request)
// lies inside the declared policy's envelope for its retry index k (1 for the gap before attempt 2),
// the policy being the check's own base/cap/… or, without them, the curve the client declared
// (run_record::declared; without either the verdict is insufficient evidence),
// within `tolerance`. With t = min(cap, base × multiplier^(k−1)) (growth "exponential"; "linear":
// base × k; "constant": base; no cap: no bound):
//   none [t, t] · full [0, t] · equal [t/2, t] · decorrelated [base, min(cap, 3 × previous gap)] (the
//   previous gap starts at base) · additive [t, t + a] (a = jitter_max: urllib3, got, retry-go) ·
//   proportional [t(1−f), t(1+f)], or one side of it with jitter_sides = "above" (a "+0–20 %" client)
//   or "below". The upper ends are not clipped at the cap: gRPC C-core jitters the capped delay by
//   ±20 % and so reaches 1.2 × cap, got adds its jitter after the cap; a client that draws inside the
//   cap stays inside these envelopes too.
// These envelopes cannot see MISSING jitter (an unjittered gap lies inside every one); the
// `jittered` check judges that from the spread of the gaps.
// Gaps after a response with Retry-After are left to the retry_after check. And no spike at the cap:
// among gaps whose envelope reaches the cap, the share within `tolerance` of the cap must not exceed
// max_share_at_cap (judged once there are min_samples_at_cap of them; not for jitter "none", whose
// gaps sit at the cap by design) — clamping after jitter piles delays up there. Without a gap checked
// the verdict is insufficient evidence. A gap outside its envelope by no more than the server itself
// ran late around one of its two stamps (server_late: that stamp may be as late) is not judged.
#include <algorithm>
#include <cmath>
#include <limits>

#include "faultline/checks/backoff_curve.hpp"
#include "support.hpp"

namespace faultline::checks {

namespace {

struct policy {
    backoff_curve curve;
    double tolerance = 0;  // ns
    double max_share_at_cap = 0.1;
    std::size_t min_samples_at_cap = 20;
};

class backoff final : public check {
public:
    // `has_curve`: base and cap (and the curve keys) came from the check's table; otherwise the
    // client's declared curve is used.
    backoff(policy p, bool has_curve) : p_(std::move(p)), has_curve_(has_curve) {}

    record::verdict evaluate(const record::run_record& run, const record::operation_groups& operations) const override {
        const server_lateness lateness{run};
        if (has_curve_) return judge(p_, operations, lateness);
        if (!run.declared.backoff) {
            record::verdict v;
            v.insufficient_evidence = true;
            v.summary = "no backoff curve to judge against: neither base and cap here nor one declared by the client";
            return v;
        }
        policy p = p_;
        p.curve = backoff_curve::declared(*run.declared.backoff);
        record::verdict v = judge(p, operations, lateness);
        v.summary += " (the client's declared curve)";
        return v;
    }

private:
    record::verdict judge(const policy& p, const record::operation_groups& operations, const server_lateness& lateness) const {
        const backoff_curve& curve = p.curve;
        record::verdict v;
        std::size_t checked = 0;
        lateness_excuses excused{lateness};
        std::size_t outside = 0;
        std::size_t could_reach_cap = 0;
        std::vector<std::uint64_t> at_cap_seqs;
        for (const auto& op : operations) {
            double previous_gap = curve.base;
            for (std::size_t k = 1; k < op.attempts.size(); ++k) {
                const record::journal_record& prev = *op.attempts[k - 1];
                const record::journal_record& next = *op.attempts[k];
                const double gap = static_cast<double>(next.request_ns - prev.finished_ns);
                const auto [lo, hi] = backoff_envelope(curve, k, previous_gap);
                previous_gap = gap;
                if (prev.retry_after_ms) continue;
                // Too short: the previous attempt's stamps may be late; too long: the retry's.
                const bool short_gap = gap < lo - p.tolerance;
                const bool long_gap = gap > hi + p.tolerance;
                if (short_gap && excused.excuse(prev.request_ns, prev.finished_ns, lo - p.tolerance - gap)) continue;
                if (long_gap && excused.excuse(next.request_ns, next.request_ns, gap - hi - p.tolerance)) continue;
                ++checked;
                if (short_gap || long_gap) {
                    ++outside;
                    add_evidence(v, record::evidence_item{std::string(op.operation), {prev.seq, next.seq},
                                                  "retry " + std::to_string(k) + ": gap " + ms(gap) + " outside [" +
                                                      ms(lo) + ", " + ms(hi) + "] ± " + ms(p.tolerance) + "\n" +
                                                      describe_attempt(prev) + "\n" + describe_attempt(next)});
                }
                if (curve.jitter != "none" && hi >= curve.cap) {
                    ++could_reach_cap;
                    if (std::abs(gap - curve.cap) <= p.tolerance) at_cap_seqs.push_back(next.seq);
                }
            }
        }
        const std::string growth = curve.growth == "exponential" ? "×" + format_number(curve.multiplier) : curve.growth;
        std::string summary = std::to_string(checked) + " gaps checked against " + curve.jitter + " jitter (base " +
                              ms(curve.base) + ", " + (std::isinf(curve.cap) ? std::string("no cap") : "cap " + ms(curve.cap)) +
                              ", " + growth + "): " + std::to_string(outside) + " outside the envelope";
        summary += excused.clause("outside", "around them");
        const double share = could_reach_cap == 0 ? 0
                                                  : static_cast<double>(at_cap_seqs.size()) /
                                                        static_cast<double>(could_reach_cap);
        if (curve.jitter == "none") {
            summary += "; spike at the cap not judged for jitter none";
        } else if (could_reach_cap < p.min_samples_at_cap) {
            summary += "; spike at the cap not judged (" + std::to_string(could_reach_cap) + " gaps could reach it, " +
                       std::to_string(p.min_samples_at_cap) + " needed)";
        } else {
            summary += "; " + std::to_string(at_cap_seqs.size()) + " of " + std::to_string(could_reach_cap) +
                       " gaps that could reach the cap sit at it (share " + format_number(share) + ", max " +
                       format_number(p.max_share_at_cap) + ")";
            if (share > p.max_share_at_cap) {
                if (at_cap_seqs.size() > record::evidence_limit) at_cap_seqs.resize(record::evidence_limit);
                add_evidence(v, record::evidence_item{"", at_cap_seqs,
                                              "spike at the cap: share " + format_number(share) + " of gaps within " +
                                                  ms(p.tolerance) + " of " + ms(curve.cap) + " > " +
                                                  format_number(p.max_share_at_cap) +
                                                  " (seqs: retries that landed at the cap)"});
            }
        }
        if (checked == 0) {
            v.insufficient_evidence = true;
            v.summary = "no gap before a retry to judge (gaps after Retry-After are the retry_after check's): " + summary;
            return v;
        }
        v.passed = v.evidence_total == 0;
        v.summary = summary;
        return v;
    }

    static std::string ms(double ns) { return format_ms(static_cast<std::int64_t>(std::llround(ns))); }

    policy p_;
    bool has_curve_;
};

std::unique_ptr<check> make_backoff(config::table_reader& p) {
    using std::chrono::nanoseconds;
    const auto base = p.duration("base", nanoseconds{0}, nanoseconds::max());
    const auto cap = p.duration("cap", nanoseconds{0}, nanoseconds::max());
    if (cap && !base) p.fail("cap", "needs base");
    policy pol;
    pol.curve.base = static_cast<double>(base.value_or(nanoseconds{0}).count());
    // Without a cap the curve grows without bound (Polly's default MaxDelay, got's backoffLimit).
    pol.curve.cap = cap ? static_cast<double>(cap->count()) : std::numeric_limits<double>::infinity();
    pol.curve.growth = p.choice("growth", {"exponential", "linear", "constant"}).value_or("exponential");
    pol.curve.multiplier = p.number("multiplier", 1, 1000).value_or(2);
    pol.curve.jitter =
        p.choice("jitter", {"none", "full", "equal", "decorrelated", "proportional", "additive"}).value_or("full");
    pol.curve.fraction = p.number("jitter_fraction", 0, 1).value_or(0.2);
    pol.curve.sides = p.choice("jitter_sides", {"both", "above", "below"}).value_or("both");
    const auto jitter_max = p.duration("jitter_max");
    pol.curve.jitter_max = static_cast<double>(jitter_max.value_or(nanoseconds{0}).count());
    if (pol.curve.jitter == "additive" && !jitter_max) p.fail("jitter_max", "required for jitter \"additive\"");
    pol.tolerance = static_cast<double>(p.duration("tolerance").value_or(std::chrono::milliseconds{10}).count());
    pol.max_share_at_cap = p.number("max_share_at_cap", 0, 1).value_or(0.1);
    pol.min_samples_at_cap =
        static_cast<std::size_t>(p.integer("min_samples_at_cap", 1, 1'000'000'000).value_or(20));
    if (base && cap && *cap < *base) p.fail("cap", "must be at least base");
    if (!base && !cap) {
        for (const std::string_view key :
             {"growth", "multiplier", "jitter", "jitter_fraction", "jitter_sides", "jitter_max"}) {
            if (p.has(key)) p.fail(key, "only with base (without it the client's declared curve is used)");
        }
    }
    return std::make_unique<backoff>(std::move(pol), base.has_value());
}

}  // namespace

const core::registration<check_info> registered{
    "backoff", "every gap between attempts lies inside the declared backoff envelope; no spike at the cap",
    &make_backoff};

}  // namespace faultline::checks
