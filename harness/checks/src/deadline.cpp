// deadline: per operation, (1) no attempt starts after the overall deadline, (2) the client has
// finished by deadline + tolerance (client records only: the server cannot see when a client gave
// up), and (3) the propagated remaining-deadline header (Faultline-Deadline-Ms or
// x-envoy-expected-rq-timeout-ms) is at least 1 ms, never exceeds the time actually left, and never
// grows from one attempt to the next (it may stay equal while a per-attempt timeout caps it). The
// deadline comes from the client record when present, else from the first attempt's header:
// first t_request + deadline_ms — which assumes the header carries the overall remaining time.
#include "support.hpp"

namespace faultline::harness::checks {

namespace {

class deadline final : public check {
public:
    deadline(std::chrono::nanoseconds tolerance, bool require_header)
        : tolerance_(tolerance.count()), require_header_(require_header) {}

    verdict evaluate(const run_record& run) const override {
        verdict v;
        const auto operations = group_operations(run.journal);
        const auto clients = index_clients(run);
        std::size_t with_deadline = 0;
        std::size_t late_starts = 0;
        std::size_t late_finishes = 0;
        std::size_t bad_headers = 0;
        for (const auto& op : operations) {
            const auto found = clients.find(op.operation);
            const client_record* client = found == clients.end() ? nullptr : found->second;
            const std::optional<std::int64_t> end = operation_deadline(op, client);
            std::vector<std::uint64_t> seqs;
            std::string detail;
            auto flag = [&](const journal_record* r, const std::string& what) {
                if (r != nullptr && (seqs.empty() || seqs.back() != r->seq)) seqs.push_back(r->seq);
                detail += (detail.empty() ? "" : "\n") + what;
            };
            if (end) ++with_deadline;
            const std::int64_t* previous_header = nullptr;
            for (const journal_record* r : op.attempts) {
                if (end && r->request_ns > *end + tolerance_) {
                    ++late_starts;
                    flag(r, "attempt started " + format_ms(r->request_ns - *end) + " after the deadline " +
                                format_ms(*end) + ": " + describe_attempt(*r));
                }
                if (!r->deadline_ms) {
                    if (require_header_) {
                        ++bad_headers;
                        flag(r, "no deadline header: " + describe_attempt(*r));
                    }
                    continue;
                }
                const std::int64_t header = *r->deadline_ms;
                if (header < 1) {
                    ++bad_headers;
                    flag(r, "deadline header " + std::to_string(header) + " ms (must be ≥ 1): " + describe_attempt(*r));
                } else if (end && header * 1'000'000 > *end - r->request_ns + tolerance_) {
                    ++bad_headers;
                    flag(r, "deadline header " + std::to_string(header) + " ms exceeds the " +
                                format_ms(*end - r->request_ns) + " left: " + describe_attempt(*r));
                } else if (previous_header != nullptr && header > *previous_header) {
                    ++bad_headers;
                    flag(r, "deadline header grew from " + std::to_string(*previous_header) + " ms to " +
                                std::to_string(header) + " ms: " + describe_attempt(*r));
                }
                previous_header = &*r->deadline_ms;
            }
            if (end && client != nullptr && client->finished_ns > *end + tolerance_) {
                ++late_finishes;
                flag(nullptr, "client finished at " + format_ms(client->finished_ns) + ", " +
                                  format_ms(client->finished_ns - *end) + " after the deadline " + format_ms(*end) +
                                  " (" + client->decision + ")");
            }
            if (!detail.empty()) add_evidence(v, evidence_item{std::string(op.operation), seqs, detail});
        }
        v.passed = v.evidence_total == 0;
        v.summary = std::to_string(with_deadline) + " of " + std::to_string(operations.size()) +
                    " operations had a deadline; " + std::to_string(v.evidence_total) + " broke it: " +
                    std::to_string(late_starts) + " attempts started late, " + std::to_string(late_finishes) +
                    " clients finished late, " + std::to_string(bad_headers) + " bad deadline headers (tolerance " +
                    format_ms(tolerance_) + ")";
        return v;
    }

private:
    std::int64_t tolerance_;
    bool require_header_;
};

std::unique_ptr<check> make_deadline(config::table_reader& p) {
    const auto tolerance = p.duration("tolerance").value_or(std::chrono::milliseconds{10});
    const bool require_header = p.boolean("require_header").value_or(false);
    return std::make_unique<deadline>(tolerance, require_header);
}

}  // namespace

const core::registration<check_info> registered{
    "deadline", "no attempt starts after the operation's deadline; the client finishes by deadline + tolerance",
    &make_deadline};

}  // namespace faultline::harness::checks
