// latency: percentiles (nearest rank) of operation durations stay within limits p50/p90/p99.
// Durations come from the client records when present (started → finished, including backoff
// sleeps); otherwise from the journal: the first attempt's t_request to the last attempt's t_end.
#include <algorithm>
#include <cmath>

#include "support.hpp"

namespace faultline::checks {

namespace {

struct sample {
    std::int64_t duration;
    record::symbol operation;
};

class latency final : public check {
public:
    explicit latency(std::vector<std::pair<int, std::int64_t>> limits) : limits_(std::move(limits)) {}

    record::verdict evaluate(const record::run_record& run, const record::operation_groups& operations) const override {
        record::verdict v;
        // Percentiles need only selection (nth_element, linear) and the evidence only the slowest
        // few, so nothing is sorted whole: the one full sort was most of this check's time. The
        // operations' names are gathered only for that evidence.
        std::vector<std::int64_t> durations;
        durations.reserve(count_samples(run, operations));
        for_each_sample(run, operations, [&](const sample& s) { durations.push_back(s.duration); });
        std::string summary;
        std::optional<std::int64_t> lowest_broken;
        for (const auto& [p, limit] : limits_) {
            if (durations.empty()) break;
            // Nearest rank: the rank-th smallest duration.
            const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(durations.size())));
            const auto nth = durations.begin() + static_cast<std::ptrdiff_t>(std::max<std::size_t>(rank, 1) - 1);
            std::nth_element(durations.begin(), nth, durations.end());
            const std::int64_t value = *nth;
            summary += (summary.empty() ? "" : ", ") + ("p" + std::to_string(p) + " " + format_ms(value) + " (max " +
                                                         format_ms(limit) + ")");
            if (value <= limit) continue;
            add_evidence(v, record::evidence_item{"", {},
                                          "p" + std::to_string(p) + " " + format_ms(value) + " > " +
                                              format_ms(limit) + " over " + std::to_string(durations.size()) +
                                              " operations"});
            lowest_broken = std::min(lowest_broken.value_or(limit), limit);
        }
        const std::size_t count = durations.size();
        durations = {};
        if (lowest_broken) {
            std::vector<sample> samples;
            samples.reserve(count);
            for_each_sample(run, operations, [&](const sample& s) { samples.push_back(s); });
            add_slowest(v, samples, operations, *lowest_broken);
        }
        v.passed = v.evidence_total == 0;
        v.summary = count == 0 ? "no operations"
                               : std::to_string(count) + " operations (from " +
                                     (run.clients.empty() ? "the journal" : "client records") + "): " + summary;
        return v;
    }

private:
    // Each operation's duration, from the client records when there are any, else from the journal.
    static std::size_t count_samples(const record::run_record& run, const record::operation_groups& operations) {
        return run.clients.empty() ? operations.size() : run.clients.size();
    }
    template <class Visit>
    static void for_each_sample(const record::run_record& run, const record::operation_groups& operations, Visit visit) {
        if (!run.clients.empty()) {
            for (const auto& c : run.clients) visit(sample{c.finished_ns - c.started_ns, c.operation});
            return;
        }
        for (const auto& op : operations) {
            visit(sample{op.attempts.back()->finished_ns - op.attempts.front()->request_ns, op.operation});
        }
    }

    // The (at most 10) slowest operations over `limit`, slowest first (ties by operation name).
    static void add_slowest(record::verdict& v, std::vector<sample>& samples, const record::operation_groups& operations,
                            std::int64_t limit) {
        const auto shown = samples.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(samples.size(), 10));
        std::partial_sort(samples.begin(), shown, samples.end(), [](const sample& a, const sample& b) {
            return a.duration != b.duration ? a.duration > b.duration : a.operation < b.operation;
        });
        std::vector<record::symbol> names;
        for (auto s = samples.begin(); s != shown && s->duration > limit; ++s) names.push_back(s->operation);
        const auto groups = find_operations(operations, names);
        for (auto s = samples.begin(); s != shown && s->duration > limit; ++s) {
            record::evidence_item item{s->operation.str(), {}, "took " + format_ms(s->duration)};
            if (const auto found = groups.find(s->operation); found != groups.end()) {
                const record::operation_attempts& op = found->second;
                item.seqs = seqs_of(op.attempts);
                item.detail += ", last " + describe_attempt(*op.attempts.back());
            }
            add_evidence(v, std::move(item));
        }
    }

    std::vector<std::pair<int, std::int64_t>> limits_;  // (percentile, limit ns)
};

std::unique_ptr<check> make_latency(config::table_reader& p) {
    std::vector<std::pair<int, std::int64_t>> limits;
    for (const auto& [name, percentile] : {std::pair{"p50", 50}, std::pair{"p90", 90}, std::pair{"p99", 99}}) {
        if (const auto d = p.duration(name)) limits.emplace_back(percentile, d->count());
    }
    if (!p.has("p50") && !p.has("p90") && !p.has("p99")) p.fail_table("set at least one of p50, p90, p99");
    return std::make_unique<latency>(std::move(limits));
}

}  // namespace

const core::registration<check_info> registered{
    "latency", "operation latency percentiles (p50, p90, p99) stay under limits",
    &make_latency};

}  // namespace faultline::checks
