// grpc_max_attempts: no gRPC operation makes more attempts than its method's policy allows: the
// retryPolicy's or hedgingPolicy's maxAttempts (at most 5, as A6 clients clamp it), one for a method
// with neither (gRPC's default). A stream never processed (fault "refused_stream", a goaway before
// the commit) is retried transparently and does not count (A6).
#include <algorithm>

#include "grpc_support.hpp"

namespace faultline::checks {

namespace {

class grpc_max_attempts final : public grpc_check {
public:
    explicit grpc_max_attempts(grpc_config_source source) : grpc_check{std::move(source), grpc_policy::any} {}

    record::verdict judge(const record::grpc_service_config& config, const record::run_record&, const record::operation_groups& operations) const override {
        record::verdict v;
        std::size_t judged = 0;
        std::size_t worst = 0;
        const std::size_t skipped = for_each_judged(config, operations, [&](const record::operation_attempts& op,
                                                                            const record::grpc_method_config& m) {
            ++judged;
            const std::size_t refused_streams = static_cast<std::size_t>(
                std::count_if(op.attempts.begin(), op.attempts.end(), [](const record::journal_record* r) { return refused(*r); }));
            const std::size_t counted = op.attempts.size() - refused_streams;
            worst = std::max(worst, counted);
            const std::uint32_t limit = max_attempts_of(m);
            if (counted <= limit) return;
            std::string detail = std::to_string(counted) + " attempts";
            if (refused_streams != 0) detail += " (and " + std::to_string(refused_streams) + " refused streams, not counted)";
            detail += m.retry     ? " > maxAttempts " + std::to_string(limit) + " of its retryPolicy:"
                      : m.hedging ? " > maxAttempts " + std::to_string(limit) + " of its hedgingPolicy:"
                                  : " > 1: its method has no retryPolicy, and gRPC retries nothing without one:";
            for (const record::journal_record* r : op.attempts) detail += "\n" + describe_attempt(*r);
            add_evidence(v, record::evidence_item{std::string(op.operation), seqs_of(op.attempts), detail});
        });
        const std::string tail = not_judged_note(skipped);
        if (judged == 0) {
            v.insufficient_evidence = true;
            v.summary = "no gRPC operation: nothing to judge" + tail;
            return v;
        }
        v.passed = v.evidence_total == 0;
        v.summary = std::to_string(v.evidence_total) + " of " + std::to_string(judged) +
                    " operations made more attempts than their method's policy allows (most: " + std::to_string(worst) +
                    ", refused streams not counted" + tail + ")";
        return v;
    }
};

std::unique_ptr<check> make_grpc_max_attempts(config::table_reader& p) {
    return std::make_unique<grpc_max_attempts>(grpc_config_source::read(p));
}

}  // namespace

const core::registration<check_info> registered{
    "grpc_max_attempts", "gRPC: no operation makes more attempts than its policy's maxAttempts (at most 5)",
    &make_grpc_max_attempts};

}  // namespace faultline::checks
