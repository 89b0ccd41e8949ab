// deadline: per operation, (1) no attempt starts after the overall deadline, (2) the client has
// finished by deadline + tolerance (client records only: the server cannot see when a client gave
// up), and (3) the propagated remaining-deadline header (Faultline-Deadline-Ms or
// x-envoy-expected-rq-timeout-ms) is at least 1 ms, never exceeds the time actually left, and never
// grows from one attempt to the next (it may stay equal while a per-attempt timeout caps it). The
// deadline comes from the client record when present, else from the first attempt's header:
// first t_request + deadline_ms — which assumes the header carries the overall remaining time.
// (4) A command client that declared its own deadline: every process exits by its first request
// reaching the server + that deadline + process_tolerance (start-up excluded: a runtime that takes
// seconds to start on a loaded machine has not started its own deadline clock yet); when its
// processes overlap and its first request cannot be told, by its start + the same. Its life from
// process start is stated beside it, not judged. This catches what the wire cannot show — a client
// whose deadline fired but whose later tries failed locally, so it returned long after it should have.
// Without an operation deadline or a declared one the verdict is insufficient evidence. An attempt
// stamped late, or a header found longer than the time left, by no more than the server itself ran
// late around the stamp (server_late) is not judged: the stamp may be that late.
#include <algorithm>

#include "support.hpp"

namespace faultline::checks {

namespace {

// The attempts the server read while the process ran, in arrival order.
std::vector<const record::journal_record*> attempts_during(const std::vector<record::journal_record>& journal, const record::process_record& p) {
    std::vector<const record::journal_record*> out;
    for (const record::journal_record& r : journal) {
        if (r.request_ns >= p.started_ns && r.request_ns <= p.finished_ns) out.push_back(&r);
    }
    std::sort(out.begin(), out.end(), [](const record::journal_record* a, const record::journal_record* b) {
        return a->request_ns != b->request_ns ? a->request_ns < b->request_ns : a->seq < b->seq;
    });
    return out;
}

bool overlaps_another(const record::process_record& p, const std::vector<record::process_record>& all) {
    return std::any_of(all.begin(), all.end(), [&](const record::process_record& other) {
        return &other != &p && other.started_ns <= p.finished_ns && p.started_ns <= other.finished_ns;
    });
}

// When a process's deadline clock is taken to start: its first request reaching the server, when the
// run's processes ran one after another (so the attempts during its life are its own); else its start.
struct process_clock {
    std::int64_t from_ns;
    bool first_request;  // from its first request (else from its start: start-up included)
};

process_clock clock_of(const record::process_record& p, const record::run_record& run) {
    if (!overlaps_another(p, run.command->processes)) {
        const std::vector<const record::journal_record*> attempts = attempts_during(run.journal, p);
        if (!attempts.empty()) return {attempts.front()->request_ns, true};
    }
    return {p.started_ns, false};
}

// A process that outlived its declared deadline, with the attempts that arrived while it ran
// (when other processes ran at the same time, some of those attempts may be theirs).
record::evidence_item late_process(const record::process_record& p, const process_clock& clock, std::int64_t deadline_ns,
                           const record::run_record& run) {
    const std::int64_t due = clock.from_ns + deadline_ns;
    std::string detail = "process " + std::to_string(p.op) + " (pid " + std::to_string(p.pid) + ") started at " +
                         format_ms(p.started_ns) + ", exited at " + format_ms(p.finished_ns) + " with status " +
                         std::to_string(p.exit_status) + (p.killed ? " (killed at the time limit)" : "") + ": " +
                         format_ms(p.finished_ns - due) + " past its declared deadline " + format_ms(deadline_ns) +
                         (clock.first_request ? " counted from its first request at " + format_ms(clock.from_ns) +
                                                    " (start-up " + format_ms(clock.from_ns - p.started_ns) +
                                                    " excluded; " + format_ms(p.finished_ns - p.started_ns) +
                                                    " from its start)"
                                              : std::string(" counted from its start (other processes ran at the "
                                                            "same time: its first request cannot be told)"));
    const std::vector<const record::journal_record*> attempts = attempts_during(run.journal, p);
    if (attempts.empty()) {
        detail += "\nno attempt reached the server during its life";
    } else {
        detail += "\nattempts that reached the server during its life";
        if (overlaps_another(p, run.command->processes)) detail += " (other processes were running too)";
        detail += ":";
        for (const record::journal_record* r : attempts) {
            detail += "\n" + std::string(r->request_ns > due ? "after its deadline: " : "") + describe_attempt(*r);
        }
    }
    return record::evidence_item{"", seqs_of(attempts), detail};
}

class deadline final : public check {
public:
    deadline(std::chrono::nanoseconds tolerance, bool require_header, std::chrono::nanoseconds process_tolerance)
        : tolerance_(tolerance.count()), require_header_(require_header),
          process_tolerance_(process_tolerance.count()) {}

    record::verdict evaluate(const record::run_record& run, const record::operation_groups& operations) const override {
        record::verdict v;
        const client_index clients{run};
        const server_lateness lateness{run};
        lateness_excuses excused{lateness};
        // Over by `over` ns, with a stamp taken at `at`: within what the server's lateness explains.
        auto explained = [&](std::int64_t at, std::int64_t over) { return excused.excuse(at, at, over); };
        std::size_t with_deadline = 0;
        std::size_t late_starts = 0;
        std::size_t late_finishes = 0;
        std::size_t bad_headers = 0;
        for (const auto& op : operations) {
            const record::client_record* client = clients.find(op.operation);
            const std::optional<std::int64_t> end = operation_deadline(op, client);
            std::vector<std::uint64_t> seqs;
            std::string detail;
            auto flag = [&](const record::journal_record* r, const std::string& what) {
                if (r != nullptr && (seqs.empty() || seqs.back() != r->seq)) seqs.push_back(r->seq);
                detail += (detail.empty() ? "" : "\n") + what;
            };
            if (end) ++with_deadline;
            const std::int64_t* previous_header = nullptr;
            for (const record::journal_record* r : op.attempts) {
                if (end && r->request_ns > *end + tolerance_ && !explained(r->request_ns, r->request_ns - *end - tolerance_)) {
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
                } else if (end && header * 1'000'000 > *end - r->request_ns + tolerance_ &&
                           !explained(r->request_ns, header * 1'000'000 - (*end - r->request_ns) - tolerance_)) {
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
            if (!detail.empty()) add_evidence(v, record::evidence_item{std::string(op.operation), seqs, detail});
        }
        const std::size_t operations_broken = v.evidence_total;
        std::string processes_summary;
        if (run.declared.deadline && run.command) {
            const std::int64_t declared = run.declared.deadline->count();
            std::size_t late_processes = 0;
            std::size_t from_first_request = 0;
            std::int64_t longest_life = 0;     // from process start to exit: start-up included
            std::int64_t longest_start_up = 0;  // from process start to its first request
            for (const record::process_record& p : run.command->processes) {
                const process_clock clock = clock_of(p, run);
                longest_life = std::max(longest_life, p.finished_ns - p.started_ns);
                if (clock.first_request) {
                    ++from_first_request;
                    longest_start_up = std::max(longest_start_up, clock.from_ns - p.started_ns);
                }
                if (p.finished_ns <= clock.from_ns + declared + process_tolerance_) continue;
                ++late_processes;
                add_evidence(v, late_process(p, clock, declared, run));
            }
            processes_summary = "; " + std::to_string(late_processes) + " of " +
                                std::to_string(run.command->processes.size()) +
                                " processes exited after the declared deadline " + format_ms(declared) + " (tolerance " +
                                format_ms(process_tolerance_) + ") counted from their first request reaching the server (" +
                                std::to_string(from_first_request) + " of them; the others from their start)" +
                                "; from process start (stated, not judged): the longest life " + format_ms(longest_life) +
                                ", the longest start-up before a first request " + format_ms(longest_start_up);
        }
        v.passed = v.evidence_total == 0;
        v.summary = std::to_string(with_deadline) + " of " + std::to_string(operations.size()) +
                    " operations had a deadline; " + std::to_string(operations_broken) + " broke it: " +
                    std::to_string(late_starts) + " attempts started late, " + std::to_string(late_finishes) +
                    " clients finished late, " + std::to_string(bad_headers) + " bad deadline headers (tolerance " +
                    format_ms(tolerance_) + ")" + processes_summary;
        v.summary += excused.clause("late", "around the stamp");
        // Every part measures against a deadline: without one there is nothing to break.
        const bool processes_judged = run.declared.deadline && run.command;
        if (with_deadline == 0 && !processes_judged && v.evidence_total == 0) {
            v.insufficient_evidence = true;
            v.passed = false;
            v.summary = "no operation had a deadline and no command declared one: nothing to judge (" + v.summary + ")";
        }
        return v;
    }

private:
    std::int64_t tolerance_;
    bool require_header_;
    std::int64_t process_tolerance_;
};

std::unique_ptr<check> make_deadline(config::table_reader& p) {
    using namespace std::chrono_literals;
    const auto tolerance = p.duration("tolerance").value_or(10ms);
    const bool require_header = p.boolean("require_header").value_or(false);
    // A process's life includes its start-up (exec, a runtime's initialisation) before its own
    // deadline clock starts, so it needs more slack than an attempt does.
    const auto process_tolerance = p.duration("process_tolerance").value_or(250ms);
    return std::make_unique<deadline>(tolerance, require_header, process_tolerance);
}

}  // namespace

const core::registration<check_info> registered{
    "deadline", "no attempt starts after the operation's deadline; the client finishes by deadline + tolerance",
    &make_deadline};

}  // namespace faultline::checks
