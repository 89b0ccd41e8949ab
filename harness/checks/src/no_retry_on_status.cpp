// no_retry_on_status: after a response whose status says the same request will fail the same way, the
// operation is over — no further attempt of it may follow. The default list is the retry library's
// status table (retry/status_rules.hpp), the one the builtin client classifies by, so the check holds
// any client to RFC 9110 as the builtin client reads it: a status retried only under a condition
// (413 with Retry-After, a 409 for an idempotency key in use) is a violation only when the condition
// does not hold. `strict = true` uses the table's strict profile (408 and 413 never retried at all).
// The check judges the statuses it knows either way — every status of the table (a retried 503 or
// 408 is judged correct), or only the listed ones — and a run without a response carrying one of
// them is insufficient evidence.
#include <algorithm>

#include "support.hpp"

namespace faultline::checks {

namespace {

using retry::status_treatment;

// One status the check watches, with the condition under which a retry is still correct.
struct watched_status {
    int status = 0;
    status_treatment treatment = status_treatment::never;  // never, unless_retry_after or unless_key_in_use
    bool strict_only = false;  // never retried only because of `strict`; the standard profile allows it
};

// How the summary lists a watched status: "404", "413 unless Retry-After".
std::string listed(const watched_status& w) {
    const std::string status = std::to_string(w.status);
    switch (w.treatment) {
        case status_treatment::unless_retry_after: return status + " unless Retry-After";
        case status_treatment::unless_key_in_use: return status + " unless key in use";
        case status_treatment::never:
        case status_treatment::retry: break;
    }
    return status;
}

// What made this response final, for the evidence: "413 without Retry-After".
std::string why_final(const watched_status& w, const record::journal_record& r) {
    const std::string status = std::to_string(w.status);
    switch (w.treatment) {
        case status_treatment::unless_retry_after: return status + " without Retry-After";
        case status_treatment::unless_key_in_use: return status + " that is not an idempotency key in use";
        case status_treatment::never:
        case status_treatment::retry: break;
    }
    if (!w.strict_only) return status;
    return status + (r.retry_after_ms ? " with Retry-After" : "") + " (never retried under strict)";
}

class no_retry_on_status final : public check {
public:
    // `judged`: the statuses whose responses count as evidence, retried or not (a superset of `statuses`);
    // `judged_name` says which they are in the summary.
    no_retry_on_status(std::vector<watched_status> statuses, std::vector<int> judged, std::string judged_name)
        : statuses_(std::move(statuses)), judged_(std::move(judged)), judged_name_(std::move(judged_name)) {}

    record::verdict evaluate(const record::run_record&, const record::operation_groups& operations) const override {
        record::verdict v;
        std::size_t final_responses = 0;
        std::size_t judged_responses = 0;
        for (const auto& op : operations) {
            for (std::size_t i = 0; i < op.attempts.size(); ++i) {
                const record::journal_record& r = *op.attempts[i];
                if (is_judged(r)) ++judged_responses;
                const watched_status* w = watched(r);
                if (w == nullptr || allows_retry(w->treatment, r)) continue;
                ++final_responses;
                if (i + 1 == op.attempts.size()) continue;
                const record::journal_record& retry = *op.attempts[i + 1];
                add_evidence(v, record::evidence_item{std::string(op.operation), {r.seq, retry.seq},
                                              "retried after a " + why_final(*w, r) + ":\n" + describe_attempt(r) +
                                                  "\n" + describe_attempt(retry)});
                break;
            }
        }
        std::string list;
        for (const watched_status& w : statuses_) list += (list.empty() ? "" : ", ") + listed(w);
        if (judged_responses == 0) {
            v.insufficient_evidence = true;
            v.summary = "no response with a status in the judged set (" + judged_name_ + "): nothing to judge";
            return v;
        }
        v.passed = v.evidence_total == 0;
        v.summary = std::to_string(final_responses) + " responses with a status never to retry (" + list + "); " +
                    std::to_string(v.evidence_total) + " operations retried after one";
        return v;
    }

private:
    bool is_judged(const record::journal_record& r) const {
        return r.outcome == record::wire_outcome::responded && std::find(judged_.begin(), judged_.end(), r.status) != judged_.end();
    }

    const watched_status* watched(const record::journal_record& r) const {
        if (r.outcome != record::wire_outcome::responded) return nullptr;
        const auto it = std::find_if(statuses_.begin(), statuses_.end(),
                                     [&](const watched_status& w) { return w.status == r.status; });
        return it == statuses_.end() ? nullptr : &*it;
    }

    std::vector<watched_status> statuses_;
    std::vector<int> judged_;
    std::string judged_name_;
};

// Every status the profile does not simply retry, in the table's order.
std::vector<watched_status> default_statuses(retry::status_profile profile) {
    std::vector<watched_status> out;
    for (const retry::status_rule& rule : retry::status_rules()) {
        const status_treatment t = retry::treatment(rule, profile);
        if (t == status_treatment::retry) continue;
        out.push_back({rule.status, t, t != rule.standard});
    }
    return out;
}

// Every status of the retry library's table, retried or not: each is judged either way.
std::vector<int> table_statuses() {
    std::vector<int> out;
    for (const retry::status_rule& rule : retry::status_rules()) out.push_back(rule.status);
    return out;
}

// One `statuses` item: 404, or { status = 413, unless = "retry_after" }.
std::optional<watched_status> read_status(config::table_reader& p, const toml::node& item, const std::string& path) {
    constexpr std::int64_t lowest = 100;
    constexpr std::int64_t highest = 599;
    if (const auto* value = item.as_integer()) {
        if (value->get() < lowest || value->get() > highest) {
            p.fail_at(item, path,
                      "must be in [" + std::to_string(lowest) + ", " + std::to_string(highest) + "], got " +
                          std::to_string(value->get()));
            return std::nullopt;
        }
        return watched_status{static_cast<int>(value->get())};
    }
    const auto* table = item.as_table();
    if (table == nullptr) {
        p.fail_at(item, path,
                  "expected a status such as 404 or { status = 413, unless = \"retry_after\" }, got " +
                      std::string(config::type_name(item)));
        return std::nullopt;
    }
    config::table_reader entry = p.child(*table, p.context() + ": " + path);
    const auto status = entry.integer("status", lowest, highest, config::need::required);
    const auto unless = entry.choice("unless", {"retry_after", "key_in_use"});
    entry.finish();
    if (!status) return std::nullopt;
    watched_status w{static_cast<int>(*status)};
    if (unless == "retry_after") w.treatment = status_treatment::unless_retry_after;
    if (unless == "key_in_use") {
        // The server marks only a 409 as "key in use"; on any other status the condition never holds.
        if (w.status != 409) {
            entry.fail("unless", "\"key_in_use\" applies only to status 409, got " + std::to_string(w.status));
            return std::nullopt;
        }
        w.treatment = status_treatment::unless_key_in_use;
    }
    if (!entry.ok()) return std::nullopt;
    return w;
}

std::optional<std::vector<watched_status>> read_statuses(config::table_reader& p, const toml::array& items) {
    if (items.empty()) {
        p.fail("statuses", "needs at least one status");
        return std::nullopt;
    }
    std::vector<watched_status> out;
    bool good = true;
    for (std::size_t i = 0; i < items.size(); ++i) {
        const std::string path = "statuses[" + std::to_string(i) + "]";
        const auto w = read_status(p, *items.get(i), path);
        if (!w) {
            good = false;
            continue;
        }
        const bool repeated = std::any_of(out.begin(), out.end(), [&](const watched_status& o) {
            return o.status == w->status;
        });
        if (repeated) {
            p.fail_at(*items.get(i), path, std::to_string(w->status) + " is listed twice");
            good = false;
            continue;
        }
        out.push_back(*w);
    }
    if (!good) return std::nullopt;
    return out;
}

std::unique_ptr<check> make_no_retry_on_status(config::table_reader& p) {
    const bool strict = p.boolean("strict").value_or(false);
    const toml::array* items = p.array("statuses");
    if (items == nullptr) {
        return std::make_unique<no_retry_on_status>(
            default_statuses(strict ? retry::status_profile::strict : retry::status_profile::standard),
            table_statuses(), "the retry library's status table");
    }
    // strict chooses a default list; a list given in full leaves nothing for it to choose.
    if (strict) p.fail("strict", "give either statuses or strict = true, not both");
    auto statuses = read_statuses(p, *items);
    if (!statuses) return nullptr;
    std::vector<int> listed_statuses;
    for (const watched_status& w : *statuses) listed_statuses.push_back(w.status);
    return std::make_unique<no_retry_on_status>(std::move(*statuses), std::move(listed_statuses), "the listed statuses");
}

}  // namespace

const core::registration<check_info> registered{
    "no_retry_on_status", "no retry after a status RFC 9110 calls final (413 unless Retry-After, 409 unless key in use)",
    &make_no_retry_on_status};

}  // namespace faultline::checks
