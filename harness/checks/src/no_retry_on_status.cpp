// no_retry_on_status: after a permanent status (default 400, 401, 403, 404, 422, 501) the operation
// is over — no further attempt of the same operation may follow.
#include <algorithm>

#include "support.hpp"

namespace faultline::harness::checks {

namespace {

class no_retry_on_status final : public check {
public:
    explicit no_retry_on_status(std::vector<std::int64_t> statuses) : statuses_(std::move(statuses)) {}

    verdict evaluate(const run_record& run) const override {
        verdict v;
        const auto operations = group_operations(run.journal);
        std::size_t permanent = 0;
        for (const auto& op : operations) {
            for (std::size_t i = 0; i < op.attempts.size(); ++i) {
                const journal_record& r = *op.attempts[i];
                if (r.outcome != wire_outcome::responded ||
                    std::find(statuses_.begin(), statuses_.end(), r.status) == statuses_.end()) {
                    continue;
                }
                ++permanent;
                if (i + 1 == op.attempts.size()) continue;
                std::vector<const journal_record*> involved(op.attempts.begin() + static_cast<std::ptrdiff_t>(i),
                                                            op.attempts.end());
                std::string detail = "retried after a " + std::to_string(r.status) + ":";
                for (const journal_record* a : involved) detail += "\n" + describe_attempt(*a);
                add_evidence(v, evidence_item{std::string(op.operation), seqs_of(involved), detail});
                break;
            }
        }
        std::string list;
        for (std::int64_t s : statuses_) list += (list.empty() ? "" : ", ") + std::to_string(s);
        v.passed = v.evidence_total == 0;
        v.summary = std::to_string(permanent) + " responses with a permanent status (" + list + "); " +
                    std::to_string(v.evidence_total) + " operations retried after one";
        return v;
    }

private:
    std::vector<std::int64_t> statuses_;
};

std::unique_ptr<check> make_no_retry_on_status(config::table_reader& p) {
    return std::make_unique<no_retry_on_status>(
        p.integers("statuses", 100, 599).value_or(std::vector<std::int64_t>{400, 401, 403, 404, 422, 501}));
}

}  // namespace

const core::registration<check_info> registered{
    "no_retry_on_status", "statuses that are not transient (default 400, 401, 403, 404, 422, 501) are never retried",
    &make_no_retry_on_status};

}  // namespace faultline::harness::checks
