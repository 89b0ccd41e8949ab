// grpc_hedging: operations of methods with a gRPC hedgingPolicy hedge as gRFC A6 says.
//  - Spacing: hedge k starts no sooner than hedgingDelay − `tolerance` after hedge k−1 (so at
//    first + (k−1) × hedgingDelay when none is early), unless an earlier attempt ended, after hedge
//    k−1 started, with a status in nonFatalStatusCodes, a refused stream or a pushback (those send the
//    next hedge at once, or when the pushback says: judged by grpc_pushback).
//  - In flight: never more than maxAttempts (at most 5) attempts of the operation at once.
//  - After the first OK: every other attempt still in flight ends (cancelled: outcome client_gone, or
//    any end) within `tolerance` + `grace` of it, and no attempt starts after it.
#include <algorithm>

#include "faultline/checks/token_bucket.hpp"
#include "grpc_support.hpp"

namespace faultline::checks {

namespace {

class grpc_hedging final : public grpc_check {
public:
    grpc_hedging(grpc_config_source source, std::chrono::nanoseconds tolerance, std::chrono::nanoseconds grace)
        : grpc_check{std::move(source), grpc_policy::hedging}, tolerance_{tolerance.count()}, grace_{grace.count()} {}

    record::verdict judge(const record::grpc_service_config& config, const record::run_record&, const record::operation_groups& operations) const override {
        record::verdict v;
        std::size_t hedging_operations = 0;
        std::size_t hedged = 0;
        const std::size_t skipped = for_each_judged(config, operations, [&](const record::operation_attempts& op,
                                                                            const record::grpc_method_config& m) {
            ++hedging_operations;
            if (op.attempts.size() < 2) return;
            ++hedged;
            check_spacing(v, op, m);
            check_in_flight(v, op, m);
            check_after_success(v, op, m);
        });
        const std::string tail = not_judged_note(skipped);
        if (hedged == 0) {
            v.insufficient_evidence = true;
            v.summary = (hedging_operations == 0 ? std::string("no operation of a method with a hedgingPolicy")
                                                 : "no hedge in " + std::to_string(hedging_operations) +
                                                       " operations with a hedgingPolicy") +
                        ": nothing to judge" + tail;
            return v;
        }
        v.passed = v.evidence_total == 0;
        v.summary = std::to_string(v.evidence_total) + " hedging violations in " + std::to_string(hedged) +
                    " hedged operations (tolerance " + format_ms(tolerance_) + ", the machine's noise; grace " +
                    format_ms(grace_) + " for cancelling" + tail + ")";
        return v;
    }

private:
    void check_spacing(record::verdict& v, const record::operation_attempts& op, const record::grpc_method_config& m) const {
        const std::int64_t delay = m.hedging->hedging_delay.count();
        for (std::size_t k = 1; k < op.attempts.size(); ++k) {
            const record::journal_record& previous = *op.attempts[k - 1];
            const record::journal_record& hedge = *op.attempts[k];
            if (hedge.request_ns - previous.request_ns >= delay - tolerance_) continue;
            // An attempt that ended in between with a non-fatal status (or refused, or with a
            // pushback) sends the next hedge early.
            const auto sends_early = [&](const record::journal_record* r) {
                if (r->finished_ns < previous.request_ns || r->finished_ns > hedge.request_ns) return false;
                const grpc_end e = classify(*r, m);
                return e == grpc_end::retryable || e == grpc_end::refused ||
                       (r->grpc_pushback_ms && *r->grpc_pushback_ms >= 0);
            };
            const auto earlier = op.attempts.begin() + static_cast<std::ptrdiff_t>(k);
            const bool shortcut = std::any_of(op.attempts.begin(), earlier, sends_early);
            if (shortcut) continue;
            add_evidence(v, record::evidence_item{std::string(op.operation), {previous.seq, hedge.seq},
                                          "hedge #" + std::to_string(hedge.seq) + " at " + format_ms(hedge.request_ns) +
                                              " started " + format_ms(hedge.request_ns - previous.request_ns) +
                                              " after #" + std::to_string(previous.seq) + " < hedgingDelay " +
                                              format_ms(delay) + " − tolerance " + format_ms(tolerance_) +
                                              ", and no attempt had ended with one of its " + method_codes_text(m)});
        }
    }

    void check_in_flight(record::verdict& v, const record::operation_attempts& op, const record::grpc_method_config& m) const {
        // Attempts are in request order: at each start, the earlier ones that have not ended are in flight.
        const std::uint32_t limit = max_attempts_of(m);
        for (std::size_t k = 0; k < op.attempts.size(); ++k) {
            const record::journal_record& start = *op.attempts[k];
            std::vector<const record::journal_record*> flying;
            for (std::size_t j = 0; j <= k; ++j) {
                if (j == k || op.attempts[j]->finished_ns > start.request_ns) flying.push_back(op.attempts[j]);
            }
            if (flying.size() <= limit) continue;
            std::string detail = std::to_string(flying.size()) + " attempts in flight at " + format_ms(start.request_ns) +
                                 " > maxAttempts " + std::to_string(limit) + ":";
            std::vector<std::uint64_t> seqs;
            for (const record::journal_record* r : flying) {
                detail += "\n" + describe_attempt(*r);
                seqs.push_back(r->seq);
            }
            add_evidence(v, record::evidence_item{std::string(op.operation), seqs, detail});
            return;  // one item: the first time it went over
        }
    }

    void check_after_success(record::verdict& v, const record::operation_attempts& op, const record::grpc_method_config& m) const {
        const record::journal_record* success = nullptr;
        for (const record::journal_record* r : op.attempts) {
            if (classify(*r, m) == grpc_end::ok && (success == nullptr || ended_before(*r, *success))) success = r;
        }
        if (success == nullptr) return;
        const std::int64_t allowed_end = success->finished_ns + tolerance_ + grace_;
        for (const record::journal_record* r : op.attempts) {
            if (r == success) continue;
            if (r->request_ns > success->finished_ns) {
                add_evidence(v, record::evidence_item{std::string(op.operation), {success->seq, r->seq},
                                              "attempt " + describe_attempt(*r) + " started after the success " +
                                                  describe_attempt(*success)});
            } else if (r->finished_ns > allowed_end) {
                add_evidence(v, record::evidence_item{std::string(op.operation), {success->seq, r->seq},
                                              "attempt " + describe_attempt(*r) + " was still in flight " +
                                                  format_ms(r->finished_ns - success->finished_ns) +
                                                  " after the success " + describe_attempt(*success) + " > tolerance " +
                                                  format_ms(tolerance_) + " + grace " + format_ms(grace_)});
            }
        }
    }

    std::int64_t tolerance_;  // ns
    std::int64_t grace_;      // ns
};

std::unique_ptr<check> make_grpc_hedging(config::table_reader& p) {
    auto source = grpc_config_source::read(p);
    const auto tolerance = read_tolerance(p);
    const auto grace = p.duration("grace").value_or(std::chrono::milliseconds{20});
    return std::make_unique<grpc_hedging>(std::move(source), tolerance, grace);
}

}  // namespace

const core::registration<check_info> registered{
    "grpc_hedging",
    "gRPC: hedges are spaced by hedgingDelay, at most maxAttempts in flight, and the first OK cancels the rest",
    &make_grpc_hedging};

}  // namespace faultline::checks
