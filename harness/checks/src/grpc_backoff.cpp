// grpc_backoff: under a gRPC retryPolicy, the wait before retry n (the previous attempt's end → the
// retry's request) is at most min(initialBackoff × backoffMultiplier^(n−1), maxBackoff) + `tolerance`
// (gRFC A6 draws it uniformly from [0, that bound]). Retries after a refused stream (transparent, no
// backoff) are not judged and do not count; a retry after a positive grpc-retry-pushback-ms is judged
// by grpc_pushback instead, and the next one counts from n = 1 again (A6 resets the backoff there).
// Then a jitter test: a uniform draw from [0, bound] reaches 0.9 × bound − tolerance with probability
// at most 1/2 for a bound of at least 5 × tolerance (noise up to `tolerance` included), so when every
// one of at least `min_samples` such waits sits there the client is not drawing at random (a false
// alarm at most 2^−min_samples). Fewer such waits: insufficient evidence, as for any check.
#include <cmath>
#include <limits>

#include "faultline/checks/backoff_curve.hpp"
#include "grpc_support.hpp"

namespace faultline::checks {

namespace {

class grpc_backoff final : public grpc_check {
public:
    grpc_backoff(grpc_config_source source, std::chrono::nanoseconds tolerance, std::size_t min_samples)
        : grpc_check{std::move(source), grpc_policy::retry},
          tolerance_{static_cast<double>(tolerance.count())},
          min_samples_{min_samples} {}

    record::verdict judge(const record::grpc_service_config& config, const record::run_record&, const record::operation_groups& operations) const override {
        record::verdict v;
        std::size_t judged = 0;
        std::size_t samples = 0;   // waits whose bound is long enough for the jitter test
        std::size_t at_bound = 0;  // of those, the ones at 0.9 × bound − tolerance or longer
        std::vector<std::uint64_t> sample_seqs;
        const std::size_t skipped = for_each_judged(config, operations, [&](const record::operation_attempts& op,
                                                                            const record::grpc_method_config& m) {
            const backoff_curve curve = curve_of(*m.retry);
            std::size_t n = 0;  // retries with a backoff since the first attempt or the last pushback
            for (std::size_t k = 1; k < op.attempts.size(); ++k) {
                const record::journal_record& before = *op.attempts[k - 1];
                const record::journal_record& retry = *op.attempts[k];
                if (refused(before)) continue;  // a transparent retry: no backoff
                if (before.grpc_pushback_ms) {
                    // Judged by grpc_pushback (positive) or grpc_retryable_codes (negative).
                    n = 0;
                    continue;
                }
                ++n;
                ++judged;
                const double bound = backoff_envelope(curve, n, std::numeric_limits<double>::infinity()).second;
                const auto wait = static_cast<double>(retry.request_ns - before.finished_ns);
                if (wait > bound + tolerance_) {
                    add_evidence(v, record::evidence_item{std::string(op.operation), {before.seq, retry.seq},
                                                  "retry " + std::to_string(n) + " #" + std::to_string(retry.seq) +
                                                      " at " + format_ms(retry.request_ns) + " waited " +
                                                      format_ms(static_cast<std::int64_t>(wait)) + " after " +
                                                      describe_attempt(before) + " > bound " +
                                                      format_ms(static_cast<std::int64_t>(bound)) + " + tolerance " +
                                                      format_ms(static_cast<std::int64_t>(tolerance_))});
                    continue;
                }
                if (bound >= 5 * tolerance_) {
                    ++samples;
                    if (wait >= 0.9 * bound - tolerance_) {
                        ++at_bound;
                        if (sample_seqs.size() < record::evidence_limit) sample_seqs.push_back(retry.seq);
                    }
                }
            }
        });
        const std::string noise = "tolerance " + format_ms(static_cast<std::int64_t>(tolerance_)) + ", the machine's noise";
        const std::string tail = not_judged_note(skipped);
        if (judged == 0) {
            v.insufficient_evidence = true;
            v.summary = "no retry with a backoff under a retryPolicy: nothing to judge" + tail;
            return v;
        }
        const std::string bounds = std::to_string(v.evidence_total) + " of " + std::to_string(judged) +
                                   " waits longer than min(initialBackoff × multiplier^(n−1), maxBackoff) + " + noise;
        if (v.evidence_total != 0) {
            v.summary = bounds + tail;
            return v;
        }
        if (min_samples_ == 0) {
            v.passed = true;
            v.summary = bounds + "; jitter not judged (min_samples = 0)" + tail;
            return v;
        }
        const std::string jitter = std::to_string(at_bound) + " of " + std::to_string(samples) +
                                   " waits with a bound ≥ 5 × tolerance at ≥ 0.9 × bound − tolerance";
        if (samples < min_samples_) {
            v.insufficient_evidence = true;
            v.summary = bounds + "; jitter: not enough evidence, " + jitter + ", " + std::to_string(min_samples_) +
                        " needed" + tail;
            return v;
        }
        if (at_bound == samples) {
            add_evidence(v, record::evidence_item{"", sample_seqs,
                                          "every one of " + std::to_string(samples) +
                                              " waits sat at its bound (≥ 0.9 × bound − tolerance): A6 draws each "
                                              "uniformly from [0, bound], so the client does not draw its waits so: no jitter, or jitter "
                                              "around the bound, as ±20 % (seqs: the first " +
                                              std::to_string(sample_seqs.size()) + " retries)"});
        }
        v.passed = v.evidence_total == 0;
        v.summary = bounds + "; jitter: " + jitter + (v.passed ? "" : ": not drawn from [0, bound]") + tail;
        return v;
    }

private:
    static backoff_curve curve_of(const record::grpc_retry_policy& p) {
        backoff_curve c;
        c.base = static_cast<double>(p.initial_backoff.count());
        c.cap = static_cast<double>(p.max_backoff.count());
        c.multiplier = p.backoff_multiplier;
        c.jitter = "full";
        return c;
    }

    double tolerance_;  // ns
    std::size_t min_samples_;
};

std::unique_ptr<check> make_grpc_backoff(config::table_reader& p) {
    auto source = grpc_config_source::read(p);
    const auto tolerance = read_tolerance(p);
    const auto min_samples = p.integer("min_samples", 0, 1'000'000).value_or(8);
    return std::make_unique<grpc_backoff>(std::move(source), tolerance, static_cast<std::size_t>(min_samples));
}

}  // namespace

const core::registration<check_info> registered{
    "grpc_backoff", "gRPC: each retry waits at most min(initialBackoff × multiplier^(n−1), maxBackoff), and the waits are jittered",
    &make_grpc_backoff};

}  // namespace faultline::checks
