// grpc_retryable_codes: a next attempt of a gRPC operation follows only attempts that allow one
// (gRFC A6): a status in the method's retryableStatusCodes (hedging: nonFatalStatusCodes; a method
// with neither policy: none), or a stream never processed (a transparent retry). Never after an
// OK, after the commit point (response headers sent, then the call failed: outcome "truncated"), after
// another status, or after a negative grpc-retry-pushback-ms. Each next attempt is judged by every
// earlier attempt of its operation that had ended when it started (a hedge still in flight decides
// nothing); one whose earlier attempts ended without a status is not judged (the client's status is
// unknown). An operation whose last attempt ended in a way that allows no retry (a status not
// retryable, the commit, a stop pushback) and was not retried counts as judged too: that is the
// evidence of a client that obeyed. Evidence: the first offending attempt of each operation.
#include "grpc_support.hpp"

namespace faultline::checks {

namespace {

std::string why_not(grpc_end e, const record::journal_record& r, const record::grpc_method_config& m) {
    switch (e) {
        case grpc_end::ok: return "ended OK: the call had succeeded";
        case grpc_end::committed:
            return "passed the commit point: response headers were sent, then the call failed (" + grpc_status_text(r) + ")";
        case grpc_end::stop: return "sent pushback " + std::to_string(*r.grpc_pushback_ms) + "ms: do not retry";
        case grpc_end::fatal:
            return "ended with " + grpc_status_text(r) + ", not in the method's " + method_codes_text(m);
        case grpc_end::refused:
        case grpc_end::retryable:
        case grpc_end::unknown: break;
    }
    return "";
}

class grpc_retryable_codes final : public grpc_check {
public:
    explicit grpc_retryable_codes(grpc_config_source source) : grpc_check{std::move(source), grpc_policy::any} {}

    record::verdict judge(const record::grpc_service_config& config, const record::run_record&, const record::operation_groups& operations) const override {
        record::verdict v;
        std::size_t judged = 0;
        std::size_t obeyed = 0;  // operations that stopped where no retry was allowed
        std::size_t unknown = 0;
        const std::size_t skipped = for_each_judged(config, operations, [&](const record::operation_attempts& op,
                                                                            const record::grpc_method_config& m) {
            const grpc_end last = classify(*op.attempts.back(), m);
            if (last == grpc_end::fatal || last == grpc_end::committed || last == grpc_end::stop) ++obeyed;
            for (std::size_t k = 1; k < op.attempts.size(); ++k) {
                const record::journal_record* next = op.attempts[k];
                const record::journal_record* offending = nullptr;
                grpc_end offence = grpc_end::unknown;
                bool unsure = false;
                for (std::size_t j = 0; j < k && offending == nullptr; ++j) {
                    const record::journal_record* earlier = op.attempts[j];
                    if (earlier->finished_ns > next->request_ns) continue;  // still in flight: decided nothing
                    const grpc_end e = classify(*earlier, m);
                    if (e == grpc_end::unknown) unsure = true;
                    if (e == grpc_end::unknown || e == grpc_end::refused || e == grpc_end::retryable) continue;
                    offending = earlier;
                    offence = e;
                }
                if (offending == nullptr) {
                    ++(unsure ? unknown : judged);
                    continue;
                }
                ++judged;
                add_evidence(v, record::evidence_item{std::string(op.operation), {offending->seq, next->seq},
                                              "attempt #" + std::to_string(next->seq) + " at " +
                                                  format_ms(next->request_ns) + " followed " +
                                                  describe_attempt(*offending) + ", which " +
                                                  why_not(offence, *offending, m)});
                return;  // one item an operation: its first offence
            }
        });
        const std::string tail = (unknown == 0 ? "" : "; " + std::to_string(unknown) +
                                                          " not judged (the attempts before ended without a status)") +
                                 not_judged_note(skipped);
        if (judged == 0 && obeyed == 0) {
            v.insufficient_evidence = true;
            v.summary = "no attempt of a gRPC operation followed another, and none stopped where a retry was not allowed: "
                        "nothing to judge" + tail;
            return v;
        }
        v.passed = v.evidence_total == 0;
        v.summary = std::to_string(v.evidence_total) + " operations made an attempt after one that allowed none (" +
                    std::to_string(judged) + " next attempts judged, " + std::to_string(obeyed) +
                    " operations stopped where no retry was allowed" + tail + ")";
        return v;
    }
};

std::unique_ptr<check> make_grpc_retryable_codes(config::table_reader& p) {
    return std::make_unique<grpc_retryable_codes>(grpc_config_source::read(p));
}

}  // namespace

const core::registration<check_info> registered{
    "grpc_retryable_codes",
    "gRPC: a next attempt follows only a retryable (non-fatal) status or a refused stream, never an OK, a commit or "
    "a stop pushback",
    &make_grpc_retryable_codes};

}  // namespace faultline::checks
