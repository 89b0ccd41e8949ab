// success_rate: the share of operations that succeeded is at least `min`. Success comes from the
// client records when the built-in driver kept them; otherwise from the journal: an operation
// succeeded when its last attempt got a complete 2xx response.
#include "support.hpp"

namespace faultline::checks {

namespace {

class success_rate final : public check {
public:
    explicit success_rate(double min) : min_(min) {}

    record::verdict evaluate(const record::run_record& run, const record::operation_groups& operations) const override {
        if (!run.clients.empty()) return judge_client_records(run, operations);
        if (operations.size() == 0) return nothing_reached_the_server(run);
        record::verdict v;
        std::size_t failed = 0;
        for (const auto& op : operations) {
            if (!is_success(*op.attempts.back())) ++failed;
        }
        judge(v, operations.size(), failed, "the journal");
        if (v.passed) return v;
        for (const auto& op : operations) {
            const record::journal_record& last = *op.attempts.back();
            if (is_success(last)) continue;
            add_evidence(v, record::evidence_item{std::string(op.operation), seqs_of(op.attempts),
                                          "last of " + std::to_string(op.attempts.size()) +
                                              " attempts: " + describe_attempt(last)});
        }
        return v;
    }

private:
    // The builtin client's own account: it knows the operations that never reached the server.
    record::verdict judge_client_records(const record::run_record& run, const record::operation_groups& operations) const {
        record::verdict v;
        std::vector<const record::client_record*> failures;
        for (const record::client_record& c : run.clients) {
            if (!c.success) failures.push_back(&c);
        }
        judge(v, run.clients.size(), failures.size(), "client records");
        if (v.passed) return v;
        std::vector<record::symbol> names;
        names.reserve(failures.size());
        for (const record::client_record* c : failures) names.push_back(c->operation);
        const auto groups = find_operations(operations, names);
        for (const record::client_record* c : failures) {
            record::evidence_item item{c->operation.str(), {},
                               "client " + c->client + " " + c->method + " " + c->target + ": " + c->decision +
                                   " after " + std::to_string(c->attempts) + " attempts (" + c->attempt_outcomes + ")"};
            if (const auto found = groups.find(c->operation); found != groups.end()) {
                item.seqs = seqs_of(found->second.attempts);
            }
            add_evidence(v, std::move(item));
        }
        return v;
    }

    void judge(record::verdict& v, std::size_t total, std::size_t failed, std::string_view source) const {
        const double rate = static_cast<double>(total - failed) / static_cast<double>(total);
        v.passed = rate >= min_;
        v.summary = std::to_string(total - failed) + " of " + std::to_string(total) + " operations succeeded (" +
                    format_number(rate) + ", min " + format_number(min_) + ", from " + std::string(source) + ")";
    }

    // No operation at all is no success: a client that gave up before anything reached the server
    // (or was killed first) must not pass by default.
    record::verdict nothing_reached_the_server(const record::run_record& run) const {
        record::verdict v;
        v.passed = min_ == 0;
        v.summary = "no operation reached the server, so none succeeded (min " + format_number(min_) + ")";
        if (v.passed) return v;
        std::string detail = "the journal holds no attempt";
        if (run.command) {
            for (const record::process_record& p : run.command->processes) {
                detail += "; process " + std::to_string(p.op) + " (pid " + std::to_string(p.pid) + ") exited with status " +
                          std::to_string(p.exit_status) + (p.killed ? " (killed at the time limit)" : "");
            }
        }
        add_evidence(v, record::evidence_item{"", {}, detail});
        return v;
    }

    double min_;
};

std::unique_ptr<check> make_success_rate(config::table_reader& p) {
    return std::make_unique<success_rate>(p.number("min", 0, 1).value_or(0.99));
}

}  // namespace

const core::registration<check_info> registered{
    "success_rate", "the share of operations that succeed is at least `min`",
    &make_success_rate};

}  // namespace faultline::checks
