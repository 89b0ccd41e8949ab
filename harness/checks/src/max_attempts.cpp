// max_attempts: no operation makes more than `max` attempts — counted from the journal, and from
// the client's own count when the built-in driver kept one (attempts that never reached the server,
// such as refused connections, show up only there). Without `max` the limit is the one the client
// declared (a command client's [client] max_attempts), else 3.
#include "support.hpp"

namespace faultline::checks {

namespace {

constexpr std::size_t default_max = 3;

class max_attempts final : public check {
public:
    explicit max_attempts(std::optional<std::int64_t> max) {
        if (max) max_ = static_cast<std::size_t>(*max);
    }

    record::verdict evaluate(const record::run_record& run, const record::operation_groups& operations) const override {
        // The scenario's own `max` wins; a client is held to its declared limit only when none is given.
        const bool from_declared = !max_ && run.declared.max_attempts;
        const std::size_t max = max_ ? *max_ : run.declared.max_attempts.value_or(default_max);
        const std::string limit = from_declared ? "the declared max_attempts " + std::to_string(max)
                                                : "max " + std::to_string(max);
        record::verdict v;
        const client_index clients{run};
        std::size_t worst = 0;
        for (const auto& op : operations) {
            const record::client_record* client = clients.find(op.operation);
            const std::size_t client_count = client == nullptr ? 0 : std::size_t{client->attempts};
            const std::size_t count = std::max(op.attempts.size(), client_count);
            worst = std::max(worst, count);
            if (count <= max) continue;
            std::string detail = std::to_string(op.attempts.size()) + " attempts on the wire";
            if (client_count != 0) detail += ", " + std::to_string(client_count) + " by the client's count";
            detail += " > " + limit + ":";
            for (const record::journal_record* r : op.attempts) detail += "\n" + describe_attempt(*r);
            add_evidence(v, record::evidence_item{std::string(op.operation), seqs_of(op.attempts), detail});
        }
        v.passed = v.evidence_total == 0;
        v.summary = std::to_string(v.evidence_total) + " of " + std::to_string(operations.size()) +
                    " operations made more than " + std::to_string(max) + " attempts (most: " +
                    std::to_string(worst) + (from_declared ? "; the client's declared max_attempts" : "") + ")";
        return v;
    }

private:
    std::optional<std::size_t> max_;  // none: the client's declared limit, else default_max
};

std::unique_ptr<check> make_max_attempts(config::table_reader& p) {
    return std::make_unique<max_attempts>(p.integer("max", 1, 1'000'000));
}

}  // namespace

const core::registration<check_info> registered{"max_attempts", "no operation makes more than `max` attempts",
                                                 &make_max_attempts};

}  // namespace faultline::checks
