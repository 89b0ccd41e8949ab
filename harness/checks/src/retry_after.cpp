// retry_after: after a response carrying Retry-After, (1) the next attempt of the operation comes
// no sooner than Retry-After − tolerance after that response, and (2) when Retry-After reaches
// past the operation's deadline (client record, else the first attempt's deadline header), the
// operation ends there: no further attempt. A retry that came too soon by no more than the server
// itself ran late around the response (server_late: its stamps may be that late) is not judged.
// "Too soon" is counted from the response's first byte (t_response), since the reply cannot have
// reached the client before it: not from its end, stamped when the server's write handler runs, which
// on a loaded machine came 11 ms after the first byte went out (curl honoured a Retry-After of 1 s,
// yet looked 10.1 ms early from that stamp); not from the request, since a hold the server put before
// the reply (a barrier) is no wait of the client's. A journal without t_response (written before
// faultline recorded it) is counted from the request the response answered. A response the
// client never read (client_gone: it had closed before the reply was written, its own attempt
// timeout having run out first) asked nothing of it, so the retry after it is not judged.
#include "support.hpp"

namespace faultline::checks {

namespace {

class retry_after final : public check {
public:
    explicit retry_after(std::chrono::nanoseconds tolerance) : tolerance_(tolerance.count()) {}

    record::verdict evaluate(const record::run_record& run, const record::operation_groups& operations) const override {
        record::verdict v;
        const client_index clients{run};
        const server_lateness lateness{run};
        lateness_excuses excused{lateness};
        std::size_t asked = 0;
        std::size_t unread = 0;
        std::size_t judged = 0;
        std::size_t too_soon = 0;
        std::size_t past_deadline = 0;
        for (const auto& op : operations) {
            const std::optional<std::int64_t> end = operation_deadline(op, clients.find(op.operation));
            for (std::size_t i = 0; i < op.attempts.size(); ++i) {
                const record::journal_record& prev = *op.attempts[i];
                if (!prev.retry_after_ms) continue;
                if (prev.outcome == record::wire_outcome::client_gone) {
                    ++unread;
                    continue;
                }
                ++asked;
                if (i + 1 == op.attempts.size()) continue;
                const record::journal_record& next = *op.attempts[i + 1];
                const std::int64_t wanted = *prev.retry_after_ms * 1'000'000;
                const std::int64_t waited = next.request_ns - prev.finished_ns;
                const std::int64_t replied = prev.response_ns >= 0 ? prev.response_ns : prev.request_ns;
                const std::int64_t at_most = next.request_ns - replied;  // the client's wait, at most
                const std::string pair = "\n" + describe_attempt(prev) + "\n" + describe_attempt(next);
                if (at_most < wanted - tolerance_ &&
                    excused.excuse(prev.request_ns, prev.finished_ns, wanted - tolerance_ - at_most)) {
                    continue;
                }
                ++judged;
                if (end && prev.finished_ns + wanted > *end) {
                    ++past_deadline;
                    add_evidence(v, record::evidence_item{std::string(op.operation), {prev.seq, next.seq},
                                                  "Retry-After " + std::to_string(*prev.retry_after_ms) +
                                                      " ms reaches past the deadline (" +
                                                      format_ms(*end - prev.finished_ns) +
                                                      " left), yet the operation went on:" + pair});
                } else if (at_most < wanted - tolerance_) {
                    ++too_soon;
                    add_evidence(v, record::evidence_item{std::string(op.operation), {prev.seq, next.seq},
                                                  "waited " + format_ms(waited) + " of the " +
                                                      std::to_string(*prev.retry_after_ms) +
                                                      " ms Retry-After asked:" + pair});
                }
            }
        }
        // No Retry-After sent (the rule that sends it never fired): nothing was asked of the client;
        // every retry after one in a spell of the server's own lateness: nothing could be judged.
        v.insufficient_evidence = asked == 0 || (judged == 0 && excused.count() > 0);
        v.passed = !v.insufficient_evidence && v.evidence_total == 0;
        v.summary = std::to_string(asked) + " responses carried Retry-After; " + std::to_string(too_soon) +
                    " retries came too soon, " + std::to_string(past_deadline) +
                    " went on past the deadline (tolerance " + format_ms(tolerance_) + ")";
        v.summary += excused.clause("they came too soon", "around the response", ", which its stamps may be");
        if (unread > 0) {
            v.summary += "; " + std::to_string(unread) +
                         " not judged: the client had gone before the reply was written (client_gone), so it never "
                         "read the Retry-After";
        }
        return v;
    }

private:
    std::int64_t tolerance_;
};

std::unique_ptr<check> make_retry_after(config::table_reader& p) {
    return std::make_unique<retry_after>(p.duration("tolerance").value_or(std::chrono::milliseconds{10}));
}

}  // namespace

const core::registration<check_info> registered{
    "retry_after", "the next attempt waits for Retry-After; one longer than the deadline ends the operation",
    &make_retry_after};

}  // namespace faultline::checks
