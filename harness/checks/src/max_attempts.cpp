// max_attempts: no operation makes more than `max` attempts — counted from the journal, and from
// the client's own count when the built-in driver kept one (attempts that never reached the server,
// such as refused connections, show up only there).
#include "support.hpp"

namespace faultline::harness::checks {

namespace {

class max_attempts final : public check {
public:
    explicit max_attempts(std::int64_t max) : max_(static_cast<std::size_t>(max)) {}

    verdict evaluate(const run_record& run) const override {
        verdict v;
        const auto operations = group_operations(run.journal);
        const auto clients = index_clients(run);
        std::size_t worst = 0;
        for (const auto& op : operations) {
            const auto client = clients.find(op.operation);
            const std::size_t client_count =
                client == clients.end() ? 0 : std::size_t{client->second->attempts};
            const std::size_t count = std::max(op.attempts.size(), client_count);
            worst = std::max(worst, count);
            if (count <= max_) continue;
            std::string detail = std::to_string(op.attempts.size()) + " attempts on the wire";
            if (client_count != 0) detail += ", " + std::to_string(client_count) + " by the client's count";
            detail += " > max " + std::to_string(max_) + ":";
            for (const journal_record* r : op.attempts) detail += "\n" + describe_attempt(*r);
            add_evidence(v, evidence_item{std::string(op.operation), seqs_of(op.attempts), detail});
        }
        v.passed = v.evidence_total == 0;
        v.summary = std::to_string(v.evidence_total) + " of " + std::to_string(operations.size()) +
                    " operations made more than " + std::to_string(max_) + " attempts (most: " +
                    std::to_string(worst) + ")";
        return v;
    }

private:
    std::size_t max_;
};

std::unique_ptr<check> make_max_attempts(config::table_reader& p) {
    return std::make_unique<max_attempts>(p.integer("max", 1, 1'000'000).value_or(3));
}

}  // namespace

const core::registration<check_info> registered{"max_attempts", "no operation makes more than `max` attempts",
                                                 &make_max_attempts};

}  // namespace faultline::harness::checks
