// desynchronized: the thundering-herd check. After many operations fail at once, a jittered client
// spreads its retries; an unjittered one sends them in lock-step waves. For each retry index k (the
// k-th retry of an operation) with at least `min_retries` retries, the retry window runs from the
// earliest end of an attempt that preceded such a retry to the last such retry (at least
// `min_window` long, so retries fired instantly still form a window to compare against). The window
// is cut into `bucket`-long buckets; a uniform spread of n retries expects n × bucket / window per
// bucket, and no bucket may hold more than k × that. `after`/`before` restrict the check to retries
// inside a time range (e.g. around a mass outage in a longer run).
#include <algorithm>
#include <limits>
#include <map>

#include "support.hpp"

namespace faultline::harness::checks {

namespace {

struct retry_point {
    std::int64_t at;           // the retry's t_request
    std::int64_t failed_at;    // the previous attempt's t_end
    std::uint64_t seq;
};

class desynchronized final : public check {
public:
    desynchronized(std::chrono::nanoseconds bucket, double factor, std::size_t min_retries,
                   std::chrono::nanoseconds min_window, std::chrono::nanoseconds after,
                   std::optional<std::chrono::nanoseconds> before, std::size_t top)
        : bucket_(bucket.count()), factor_(factor), min_retries_(min_retries), min_window_(min_window.count()),
          after_(after.count()), before_(before ? before->count() : std::numeric_limits<std::int64_t>::max()), top_(top) {}

    verdict evaluate(const run_record& run) const override {
        verdict v;
        std::map<std::size_t, std::vector<retry_point>> by_index;
        for (const auto& op : group_operations(run.journal)) {
            for (std::size_t k = 1; k < op.attempts.size(); ++k) {
                const journal_record& r = *op.attempts[k];
                if (r.request_ns < after_ || r.request_ns >= before_) continue;
                by_index[k].push_back(retry_point{r.request_ns, op.attempts[k - 1]->finished_ns, r.seq});
            }
        }
        std::string judged;
        for (auto& [k, points] : by_index) {
            if (points.size() < min_retries_) continue;
            judged += (judged.empty() ? "" : ", ") + judge(v, k, points);
        }
        v.passed = v.evidence_total == 0;
        v.summary = judged.empty() ? "no retry index had " + std::to_string(min_retries_) +
                                         " retries; nothing synchronised to judge"
                                   : "busiest " + format_ms(bucket_) + " bucket vs the limit " +
                                         format_number(factor_) + "× uniform, per retry index: " + judged;
        return v;
    }

private:
    std::string judge(verdict& v, std::size_t k, std::vector<retry_point>& points) const {
        std::sort(points.begin(), points.end(), [](const retry_point& a, const retry_point& b) {
            return a.at != b.at ? a.at < b.at : a.seq < b.seq;
        });
        std::int64_t start = points.front().failed_at;
        for (const auto& p : points) start = std::min(start, p.failed_at);
        const std::int64_t width = std::max(points.back().at - start, min_window_);
        const double n = static_cast<double>(points.size());
        const double expected = n * static_cast<double>(bucket_) / static_cast<double>(width);
        const double limit = factor_ * expected;
        std::map<std::int64_t, std::vector<std::uint64_t>> buckets;  // bucket number -> seqs
        for (const auto& p : points) buckets[(p.at - start) / bucket_].push_back(p.seq);
        std::vector<std::pair<std::int64_t, const std::vector<std::uint64_t>*>> busiest;
        for (const auto& [b, seqs] : buckets) busiest.emplace_back(b, &seqs);
        std::stable_sort(busiest.begin(), busiest.end(),
                         [](const auto& a, const auto& b) { return a.second->size() > b.second->size(); });
        const std::size_t peak = busiest.front().second->size();
        std::size_t reported = 0;
        for (const auto& [b, seqs] : busiest) {
            if (static_cast<double>(seqs->size()) <= limit || reported == top_) break;
            ++reported;
            const std::int64_t from = start + b * bucket_;
            std::vector<std::uint64_t> shown(seqs->begin(),
                                             seqs->begin() + static_cast<std::ptrdiff_t>(
                                                                 std::min(seqs->size(), evidence_limit)));
            add_evidence(v, evidence_item{"", std::move(shown),
                                          "retry " + std::to_string(k) + ": " + std::to_string(seqs->size()) +
                                              " retries in " + format_ms(from) + "–" + format_ms(from + bucket_) +
                                              "; a uniform spread of " + std::to_string(points.size()) +
                                              " retries over the " + format_ms(width) + " window from " +
                                              format_ms(start) + " expects " + format_number(expected) +
                                              " per bucket, limit " + format_number(limit)});
        }
        return "retry " + std::to_string(k) + ": " + std::to_string(peak) + " of " + std::to_string(points.size()) +
               " (limit " + format_number(limit) + ")";
    }

    std::int64_t bucket_;
    double factor_;
    std::size_t min_retries_;
    std::int64_t min_window_;
    std::int64_t after_;
    std::int64_t before_;
    std::size_t top_;
};

std::unique_ptr<check> make_desynchronized(config::table_reader& p) {
    const auto bucket = p.duration("bucket", std::chrono::nanoseconds{1}).value_or(std::chrono::milliseconds{10});
    const double factor = p.number("k", 1, 1e6).value_or(3);
    const auto min_retries = static_cast<std::size_t>(p.integer("min_retries", 1, 1'000'000'000).value_or(20));
    const auto min_window = p.duration("min_window").value_or(std::chrono::milliseconds{100});
    const auto after = p.duration("after").value_or(std::chrono::nanoseconds{0});
    const auto before = p.duration("before");
    const auto top = static_cast<std::size_t>(p.integer("top", 1, 1000).value_or(5));
    return std::make_unique<desynchronized>(bucket, factor, min_retries, min_window, after, before, top);
}

}  // namespace

const core::registration<check_info> registered{
    "desynchronized", "after a synchronised failure no time bucket holds more than k x a uniform spread of retries",
    &make_desynchronized};

}  // namespace faultline::harness::checks
