// attempt_timeout: a client gives up an attempt the server leaves unanswered after its own per-attempt
// timeout. Judged on the attempts the server hung (a `hang` fault: it read the request and never
// answered, and saw when the client left): each lasted, from the request to the client's leaving, at
// most the timeout plus `tolerance`. One that lasted until the hang's own limit is a client that never
// timed the attempt out. The timeout is `max`, else the one the client declared (a command client's
// [client] attempt_timeout, `faultline score --attempt-timeout`, the builtin policy's
// per_attempt_timeout). An attempt that ends sooner is no finding: the deadline may have cut it short.
// One held too long by no more than the server itself ran late when it saw the client leave
// (server_late: that stamp may be as late) is not judged.
#include "support.hpp"

namespace faultline::checks {

namespace {

class attempt_timeout final : public check {
public:
    attempt_timeout(std::optional<std::chrono::nanoseconds> max, std::chrono::nanoseconds tolerance)
        : max_{max}, tolerance_{tolerance} {}

    record::verdict evaluate(const record::run_record& run, const record::operation_groups& operations) const override {
        record::verdict v;
        const std::optional<std::chrono::nanoseconds> limit = max_ ? max_ : run.declared.attempt_timeout;
        if (!limit) {
            v.insufficient_evidence = true;
            v.summary = "no attempt timeout to judge against: neither `max` here nor one declared by the client";
            return v;
        }
        const std::int64_t bound = limit->count() + tolerance_.count();
        const server_lateness lateness{run};
        lateness_excuses excused{lateness};
        std::size_t judged = 0;
        std::int64_t longest = 0;
        for (const auto& op : operations) {
            for (const record::journal_record* r : op.attempts) {
                if (r->outcome != record::wire_outcome::hung) continue;
                const std::int64_t lasted = r->finished_ns - r->request_ns;
                if (lasted > bound && excused.excuse(r->finished_ns, r->finished_ns, lasted - bound)) continue;
                ++judged;
                longest = std::max(longest, lasted);
                if (lasted <= bound) continue;
                add_evidence(v, record::evidence_item{std::string(op.operation), {r->seq},
                                              "held " + format_ms(lasted) + " > the attempt timeout " +
                                                  format_ms(*limit) + " + " + format_ms(tolerance_) + ":\n" +
                                                  describe_attempt(*r)});
            }
        }
        const std::string against = std::string(max_ ? "max " : "the declared attempt timeout ") + format_ms(*limit) +
                                    " (tolerance " + format_ms(tolerance_) + ")";
        const std::string not_judged = excused.clause("held too long", "when the client left");
        if (judged == 0) {
            v.insufficient_evidence = true;
            v.summary = "no attempt was left unanswered (a hang fault) to judge against " + against + not_judged;
            return v;
        }
        v.passed = v.evidence_total == 0;
        v.summary = std::to_string(v.evidence_total) + " of " + std::to_string(judged) +
                    " unanswered attempts were held past " + against + "; longest " + format_ms(longest) + not_judged;
        return v;
    }

private:
    std::optional<std::chrono::nanoseconds> max_;
    std::chrono::nanoseconds tolerance_;
};

std::unique_ptr<check> make_attempt_timeout(config::table_reader& p) {
    using std::chrono::nanoseconds;
    const auto max = p.duration("max", nanoseconds{1});
    const auto tolerance = p.duration("tolerance").value_or(std::chrono::milliseconds{100});
    return std::make_unique<attempt_timeout>(max, tolerance);
}

}  // namespace

const core::registration<check_info> registered{
    "attempt_timeout", "an attempt the server leaves unanswered is given up after the per-attempt timeout",
    &make_attempt_timeout};

}  // namespace faultline::checks
