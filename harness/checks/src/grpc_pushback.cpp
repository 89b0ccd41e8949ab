// grpc_pushback: a gRPC server's grpc-retry-pushback-ms (gRFC A6) is obeyed. After an attempt that
// sent a pushback P ≥ 0, the operation's next attempt (the first to start after that attempt ended)
// starts no sooner than its end + P − `tolerance`; after a negative pushback ("do not retry") no
// attempt of the operation starts at all. Every gRPC operation is judged, whatever its method's
// policy: a client without one that retries after "do not retry" breaks both.
#include "grpc_support.hpp"

namespace faultline::checks {

namespace {

class grpc_pushback final : public grpc_check {
public:
    grpc_pushback(grpc_config_source source, std::chrono::nanoseconds tolerance)
        : grpc_check{std::move(source), grpc_policy::any}, tolerance_{tolerance.count()} {}

    record::verdict judge(const record::grpc_service_config& config, const record::run_record&, const record::operation_groups& operations) const override {
        record::verdict v;
        std::size_t pushbacks = 0;
        std::size_t judged = 0;
        const std::size_t skipped = for_each_judged(config, operations, [&](const record::operation_attempts& op,
                                                                            const record::grpc_method_config&) {
            for (std::size_t i = 0; i < op.attempts.size(); ++i) {
                const record::journal_record& pushed = *op.attempts[i];
                if (!pushed.grpc_pushback_ms) continue;
                ++pushbacks;
                const std::int64_t pushback = *pushed.grpc_pushback_ms;
                std::vector<const record::journal_record*> after;
                for (std::size_t k = i + 1; k < op.attempts.size(); ++k) {
                    if (op.attempts[k]->request_ns >= pushed.finished_ns) after.push_back(op.attempts[k]);
                }
                if (pushback < 0) {
                    ++judged;
                    if (after.empty()) continue;
                    std::string detail = std::to_string(after.size()) + " attempts after " + describe_attempt(pushed) +
                                         ", which said do not retry:";
                    std::vector<std::uint64_t> seqs{pushed.seq};
                    for (const record::journal_record* r : after) {
                        detail += "\n" + describe_attempt(*r);
                        seqs.push_back(r->seq);
                    }
                    add_evidence(v, record::evidence_item{std::string(op.operation), seqs, detail});
                    continue;
                }
                if (after.empty()) continue;  // not retried: nothing to time
                ++judged;
                const record::journal_record& next = *after.front();
                const std::int64_t wait = next.request_ns - pushed.finished_ns;
                const std::int64_t asked = pushback * 1'000'000;
                if (wait >= asked - tolerance_) continue;
                add_evidence(v, record::evidence_item{std::string(op.operation), {pushed.seq, next.seq},
                                              "attempt #" + std::to_string(next.seq) + " at " +
                                                  format_ms(next.request_ns) + " waited " + format_ms(wait) +
                                                  " after " + describe_attempt(pushed) + " < " + format_ms(asked) +
                                                  " − tolerance " + format_ms(tolerance_)});
            }
        });
        const std::string tail = not_judged_note(skipped);
        if (judged == 0) {
            v.insufficient_evidence = true;
            v.summary = "no pushback to judge: " + std::to_string(pushbacks) +
                        " attempts carried grpc-retry-pushback-ms, none negative or followed by another attempt" + tail;
            return v;
        }
        v.passed = v.evidence_total == 0;
        v.summary = std::to_string(v.evidence_total) + " of " + std::to_string(judged) +
                    " pushbacks not obeyed (tolerance " + format_ms(tolerance_) + ", the machine's noise" + tail + ")";
        return v;
    }

private:
    std::int64_t tolerance_;  // ns
};

std::unique_ptr<check> make_grpc_pushback(config::table_reader& p) {
    auto source = grpc_config_source::read(p);
    return std::make_unique<grpc_pushback>(std::move(source), read_tolerance(p));
}

}  // namespace

const core::registration<check_info> registered{
    "grpc_pushback", "gRPC: the next attempt waits the server's grpc-retry-pushback-ms, and none follows a negative one",
    &make_grpc_pushback};

}  // namespace faultline::checks
