// no_double_effects: at most one committed effect per operation identity. An operation whose reply
// was lost after the commit is indeterminate (Jepsen's :info): the client cannot know the effect
// happened, so it is counted in the summary but is not a failure by itself — only a second commit is.
// A run without a committed effect is insufficient evidence. In a merged history (a fleet of
// sidecars) the operation is one identity across instances, and a doubled operation whose commits
// were made by different instances is counted and named as such.
#include "support.hpp"

#include <set>

namespace faultline::checks {

namespace {

class no_double_effects final : public check {
public:
    record::verdict evaluate(const record::run_record&, const record::operation_groups& operations) const override {
        record::verdict v;
        std::size_t committed = 0;
        std::size_t doubled = 0;
        std::size_t doubled_across_instances = 0;
        std::size_t indeterminate = 0;
        for (const auto& op : operations) {
            std::vector<const record::journal_record*> effects;
            for (const record::journal_record* r : op.attempts) {
                if (r->effect == record::effect_kind::committed) effects.push_back(r);
            }
            committed += effects.size();
            // Indeterminate: the reply of a committed attempt was lost and no later attempt told the
            // client anything.
            const record::journal_record& last = *op.attempts.back();
            bool lost = false;
            for (const record::journal_record* r : op.attempts) lost = lost || reply_lost_after_commit(*r);
            if (lost && last.outcome != record::wire_outcome::responded) ++indeterminate;
            if (effects.size() <= 1) continue;
            ++doubled;
            std::set<std::string_view> instances;
            for (const record::journal_record* r : effects) {
                if (r->instance && !r->instance->empty()) instances.insert(r->instance->view());
            }
            std::string detail = std::to_string(effects.size()) + " committed effects";
            if (instances.size() > 1) {
                ++doubled_across_instances;
                std::string names;
                for (const std::string_view name : instances) names += (names.empty() ? "" : ", ") + std::string{name};
                detail += " by " + std::to_string(instances.size()) + " instances (" + names + ")";
            }
            detail += ":";
            for (const record::journal_record* r : effects) detail += "\n" + describe_attempt(*r);
            add_evidence(v, record::evidence_item{std::string(op.operation), seqs_of(effects), detail});
        }
        v.summary = std::to_string(operations.size()) + " operations, " + std::to_string(committed) +
                    " committed effects, " + std::to_string(doubled) + " operations with more than one";
        if (doubled_across_instances > 0) {
            v.summary += " (" + std::to_string(doubled_across_instances) + " of them committed by several instances)";
        }
        v.summary += "; " + std::to_string(indeterminate) + " indeterminate (reply lost after commit)";
        // Without a committed effect no operation could have committed twice.
        if (committed == 0) {
            v.insufficient_evidence = true;
            v.summary = "no committed effect: nothing to judge (" + v.summary + ")";
            return v;
        }
        v.passed = doubled == 0;
        return v;
    }
};

std::unique_ptr<check> make_no_double_effects(config::table_reader&) { return std::make_unique<no_double_effects>(); }

}  // namespace

const core::registration<check_info> registered{
    "no_double_effects", "at most one committed effect per operation identity",
    &make_no_double_effects};

}  // namespace faultline::checks
