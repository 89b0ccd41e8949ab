// rejects_truncated_replies: a client never takes a reply the server cut short for the whole reply.
// The cuts are fault attempts journaled `truncated`: `truncate` (fewer body bytes than Content-Length
// promised), `tls_truncate` (a body framed by the connection's end, closed without TLS close_notify,
// which only the missing close_notify reveals), a reset mid-response. A retry after a cut is the
// client rejecting it (whether that retry was safe is no_double_effects' question); so only an
// operation whose last attempt was a cut is judged, by what the client made of it: the builtin
// client's record, or the exit status of the one command process that was running when the attempt
// arrived (0: it reported success). Where processes overlapped, the cut cannot be laid at one door and
// is not judged; with nothing judged the verdict is insufficient evidence.
#include <tuple>

#include "support.hpp"

namespace faultline::checks {

namespace {

// The command process the attempt arrived during, when exactly one was running then.
const record::process_record* sole_process_during(const record::command_result& command, std::int64_t at_ns) {
    const record::process_record* found = nullptr;
    for (const record::process_record& p : command.processes) {
        if (p.started_ns > at_ns || p.finished_ns < at_ns) continue;
        if (found != nullptr) return nullptr;
        found = &p;
    }
    return found;
}

class rejects_truncated_replies final : public check {
public:
    record::verdict evaluate(const record::run_record& run, const record::operation_groups& operations) const override {
        record::verdict v;
        const client_index clients{run};
        std::size_t cuts = 0;
        std::size_t retried = 0;
        std::size_t judged = 0;
        std::size_t accepted = 0;
        for (const auto& op : operations) {
            const record::journal_record* last = nullptr;
            std::size_t op_cuts = 0;
            for (const record::journal_record* r : op.attempts) {
                if (is_cut(*r)) ++op_cuts;
                if (last == nullptr || std::tie(r->request_ns, r->seq) > std::tie(last->request_ns, last->seq)) last = r;
            }
            cuts += op_cuts;
            const bool ended_by_a_cut = is_cut(*last);
            retried += ended_by_a_cut ? op_cuts - 1 : op_cuts;
            if (!ended_by_a_cut) continue;
            std::string taken_as_success;
            if (const record::client_record* client = clients.find(op.operation)) {
                ++judged;
                if (client->success) taken_as_success = "the builtin client recorded success";
            } else if (run.command) {
                const record::process_record* p = sole_process_during(*run.command, last->request_ns);
                if (p == nullptr) continue;
                ++judged;
                if (p->exit_status == 0 && !p->killed) {
                    taken_as_success = "its process (pid " + std::to_string(p->pid) + ") exited with status 0";
                }
            }
            if (taken_as_success.empty()) continue;
            ++accepted;
            add_evidence(v, record::evidence_item{std::string(op.operation), {last->seq},
                                          "a reply cut short (fault `" + std::string(last->fault) + "`, rule `" +
                                              std::string(last->rule) + "`) ended the operation, and " +
                                              taken_as_success + ":\n" + describe_attempt(*last)});
        }
        const std::string counts = std::to_string(cuts) + " replies cut short; " + std::to_string(retried) +
                                   " retried, " + std::to_string(judged) + " ended an operation the client's result judges";
        if (judged == 0 && retried == 0) {
            v.insufficient_evidence = true;
            v.summary = counts + (cuts == 0 ? " (no truncate, tls_truncate or mid-response reset fired)"
                                            : " (the client's result for the operations they ended is unknown: "
                                              "command processes overlapped)");
            return v;
        }
        v.passed = accepted == 0;
        v.summary = counts + ": " + std::to_string(accepted) + " taken as a whole reply";
        return v;
    }

private:
    static bool is_cut(const record::journal_record& r) { return r.outcome == record::wire_outcome::truncated && !r.fault.empty(); }
};

std::unique_ptr<check> make_rejects_truncated_replies(config::table_reader&) {
    return std::make_unique<rejects_truncated_replies>();
}

}  // namespace

const core::registration<check_info> registered{
    "rejects_truncated_replies",
    "a reply cut short (truncate, tls_truncate without close_notify, a reset mid-response) is never taken as whole",
    &make_rejects_truncated_replies};

}  // namespace faultline::checks
