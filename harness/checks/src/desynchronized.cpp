// desynchronized: the thundering-herd check. After many operations fail at once, a jittered client
// spreads its retries; an unjittered one sends them in lock-step waves. For each retry index k (every
// operation's k-th retry) with at least `min_retries` retries, the retry window is where those retries
// actually fall: the central 90 % of their times (5th to 95th percentile, so one straggler does not
// stretch it), at least `min_window` long (retries fired at once still get a window to compare
// against: a spread narrower than it counts as a wave). The null model: each retry lands in any
// `bucket`-long interval with probability at most p = min(1, k × bucket / window) — a uniform spread
// over the window, with k allowing for the peak of the bell that later indexes form (the sum of
// several jittered delays). A bucket fails when it holds more than the binomial upper quantile of
// (n, p) at `false_alarm_rate` per run, Bonferroni-divided over every bucket judged, and never less
// than 1 (one retry is not a wave). Buckets tile first → last retry twice, the second grid offset by
// half a bucket, so a wave at most half a bucket wide lies wholly in one bucket. `after`/`before`
// restrict the check to retries inside a time range (e.g. around a mass outage in a longer run).
// With a control measured in the same run (timing_control.hpp) the window's floor is the control's
// noise instead of min_relative_window × the wait: the relative floor stood in for noise no run had
// measured, and called got's +U(0, 100 ms) on a 2 s wait a wave.
// A herd is the operations the server failed together: those whose first failure ended within
// `min_window` of another's (chained; scheduling delays a release by milliseconds, a barrier's next
// group comes its timeout later). When the server let a herd go in several groups (a barrier that
// timed out before all had arrived: 24 Node processes starting on 2 cores), each group is judged on
// its own, since one window over two tight groups 800 ms apart reads either as a wave; groups smaller
// than `min_retries` are left out, and with none large enough the verdict is insufficient evidence.
// A spread that passes is insufficient evidence when every gap the client showed alone at an index was
// a fraction of the herd's median there (timing_control::queueing_explains): retries with no delay were
// spread by the processes queueing for the CPU, and would come as one wave from clients on many machines.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>

#include "faultline/checks/timing_control.hpp"
#include "support.hpp"

namespace faultline::checks {

namespace {

struct retry_point {
    std::int64_t at;   // the retry's t_request
    std::int64_t gap;  // its wait: the previous attempt's end to this request
    std::uint64_t seq;
};

// One retry index's retries (of one release group) and what the null model allows per bucket.
struct retry_index {
    std::size_t k = 0;
    std::string group;                // " (group 2 of 3)" when the herd was released in groups
    std::vector<retry_point> points;  // sorted by time
    std::int64_t window = 0;          // ns: central 90 % of the times, at least min_window and relative_floor
    std::int64_t relative_floor = 0;  // ns: min_relative_window × the median wait, or the control's noise
    double p = 0;                     // the largest chance of one retry landing in a given bucket
    std::size_t buckets = 0;          // buckets judged, over both grids
};

// A bucket's retries, [from, from + bucket): the run of its retry index's points (in time order)
// from `first`, `count` long.
struct bucket_count {
    std::int64_t from;
    std::size_t first;
    std::size_t count;
};

class desynchronized final : public check {
public:
    desynchronized(std::chrono::nanoseconds bucket, double density, std::size_t min_retries,
                   std::chrono::nanoseconds min_window, double min_relative_window, double false_alarm_rate,
                   std::chrono::nanoseconds after, std::optional<std::chrono::nanoseconds> before, std::size_t top)
        : bucket_(bucket.count()), density_(density), min_retries_(min_retries), min_window_(min_window.count()),
          min_relative_window_(min_relative_window), false_alarm_rate_(false_alarm_rate), after_(after.count()),
          before_(before ? before->count() : std::numeric_limits<std::int64_t>::max()), top_(top) {}

    record::verdict evaluate(const record::run_record&, const record::operation_groups& operations) const override {
        return judge(operations, nullptr);
    }
    record::verdict evaluate_with_control(const record::run_record&, const record::operation_groups& operations,
                                  const timing_control& control) const override {
        return judge(operations, control.measured() ? &control : nullptr);
    }

private:
    record::verdict judge(const record::operation_groups& operations, const timing_control* control) const {
        record::verdict v;
        // With a control the window's floor is the noise it measured, not a share of the wait.
        const std::int64_t noise = control != nullptr ? control->noise_ns() : -1;
        const std::vector<std::vector<std::size_t>> groups = released_together(operations);
        std::vector<retry_index> judged;
        std::size_t most = 0;
        std::size_t total_buckets = 0;
        std::size_t left_out = 0;  // operations in groups with no index judged
        for (std::size_t g = 0; g < groups.size(); ++g) {
            std::map<std::size_t, std::vector<retry_point>> by_index;
            for (const std::size_t i : groups[g]) {
                const record::operation_attempts op = operations[i];
                for (std::size_t k = 1; k < op.attempts.size(); ++k) {
                    const record::journal_record& r = *op.attempts[k];
                    if (r.request_ns < after_ || r.request_ns >= before_) continue;
                    by_index[k].push_back(
                        retry_point{r.request_ns, r.request_ns - op.attempts[k - 1]->finished_ns, r.seq});
                }
            }
            const std::size_t before = judged.size();
            for (auto& [k, points] : by_index) {
                most = std::max(most, points.size());
                if (points.size() < min_retries_) continue;
                judged.push_back(measure(k, std::move(points), noise));
                if (groups.size() > 1) {
                    judged.back().group =
                        " (group " + std::to_string(g + 1) + " of " + std::to_string(groups.size()) + ")";
                }
                total_buckets += judged.back().buckets;
            }
            if (judged.size() == before) left_out += groups[g].size();
        }
        const std::string released =
            groups.size() > 1 ? "; the server released the herd in " + std::to_string(groups.size()) +
                                    " groups (first failures more than " + format_ms(min_window_) +
                                    " apart), each judged alone" +
                                    (left_out > 0 ? ", " + std::to_string(left_out) +
                                                        " operations in groups too small to judge left out"
                                                  : std::string{})
                              : std::string{};
        if (judged.empty()) {
            v.insufficient_evidence = true;
            v.summary = "no retry index had " + std::to_string(min_retries_) + " retries" +
                        (groups.size() > 1 ? " in one release group" : std::string{}) + " (most: " +
                        std::to_string(most) + "): too few to tell a wave from a spread" + released;
            return v;
        }
        // Bonferroni: each bucket may exceed its bound with at most rate / buckets, so a run of
        // well-spread retries fails anywhere with at most `false_alarm_rate`.
        const double alpha = false_alarm_rate_ / static_cast<double>(total_buckets);
        std::string summary;
        for (const retry_index& index : judged) summary += (summary.empty() ? "" : ", ") + judge(v, index, alpha);
        v.passed = v.evidence_total == 0;
        v.summary = "busiest " + format_ms(bucket_) + " bucket vs its binomial bound (false-alarm rate " +
                    format_number(false_alarm_rate_) + " per run over " + std::to_string(total_buckets) +
                    " buckets), per retry index: " + summary + released +
                    (control != nullptr ? "; the window's floor is the noise " + control->describe() : std::string{});
        if (const std::string queueing = v.passed ? queueing_explains(judged, control) : ""; !queueing.empty()) {
            v.passed = false;
            v.insufficient_evidence = true;
            v.summary = "cannot tell a spread from the herd's own queueing: " + queueing + "; " + v.summary;
        }
        return v;
    }

    // Why retries spread over their window say nothing of the client (timing_control::queueing_explains),
    // for the first index where they do not; "" when none.
    static std::string queueing_explains(const std::vector<retry_index>& judged, const timing_control* control) {
        if (control == nullptr) return "";
        for (const retry_index& index : judged) {
            std::vector<double> gaps;
            for (const retry_point& p : index.points) gaps.push_back(static_cast<double>(p.gap));
            std::sort(gaps.begin(), gaps.end());
            if (std::string why = control->queueing_explains(index.k, std::llround(quantile(gaps, 0.5))); !why.empty()) {
                return "retry " + std::to_string(index.k) + index.group + ": " + why;
            }
        }
        return "";
    }

    // The operations that retried, in groups the server failed together: sorted by the end of their
    // first attempt, a group runs while each ends within min_window of the one before.
    std::vector<std::vector<std::size_t>> released_together(const record::operation_groups& operations) const {
        std::vector<std::pair<std::int64_t, std::size_t>> firsts;
        for (std::size_t i = 0; i < operations.size(); ++i) {
            const record::operation_attempts op = operations[i];
            if (op.attempts.size() > 1) firsts.emplace_back(op.attempts[0]->finished_ns, i);
        }
        std::sort(firsts.begin(), firsts.end());
        std::vector<std::vector<std::size_t>> groups;
        for (std::size_t j = 0; j < firsts.size(); ++j) {
            if (j == 0 || firsts[j].first - firsts[j - 1].first > min_window_) groups.emplace_back();
            groups.back().push_back(firsts[j].second);
        }
        return groups;
    }

    // `noise`: the control's, in ns, or -1 without one (the floor is then min_relative_window × the wait).
    retry_index measure(std::size_t k, std::vector<retry_point> points, std::int64_t noise) const {
        std::sort(points.begin(), points.end(), [](const retry_point& a, const retry_point& b) {
            return a.at != b.at ? a.at < b.at : a.seq < b.seq;
        });
        std::vector<double> times;
        std::vector<double> gaps;
        times.reserve(points.size());
        gaps.reserve(points.size());
        for (const auto& p : points) {
            times.push_back(static_cast<double>(p.at));
            gaps.push_back(static_cast<double>(p.gap));
        }
        std::sort(gaps.begin(), gaps.end());
        retry_index out;
        out.k = k;
        const auto central = static_cast<std::int64_t>(std::llround(quantile(times, 0.95) - quantile(times, 0.05)));
        out.relative_floor = noise >= 0 ? noise
                                        : static_cast<std::int64_t>(std::llround(min_relative_window_ * quantile(gaps, 0.5)));
        out.window = std::max({central, min_window_, out.relative_floor});
        out.p = std::min(1.0, density_ * static_cast<double>(bucket_) / static_cast<double>(out.window));
        const std::int64_t span = points.back().at - points.front().at;
        for (const std::int64_t offset : grid_offsets()) {
            out.buckets += static_cast<std::size_t>((span + offset) / bucket_ + 1);
        }
        out.points = std::move(points);
        return out;
    }

    // Where the two grids of buckets start, before the first retry.
    std::array<std::int64_t, 2> grid_offsets() const { return {0, bucket_ / 2}; }

    // Both grids' buckets that hold any retry, the fullest first (then in grid and time order).
    std::vector<bucket_count> fill(const retry_index& index) const {
        const std::vector<retry_point>& points = index.points;
        const std::int64_t first = points.front().at;
        std::vector<bucket_count> out;
        for (const std::int64_t offset : grid_offsets()) {
            // The points are in time order, so each bucket's retries are one run of them.
            const auto bucket_of = [&](std::size_t i) { return (points[i].at - first + offset) / bucket_; };
            for (std::size_t i = 0; i < points.size();) {
                const std::int64_t b = bucket_of(i);
                std::size_t end = i + 1;
                while (end < points.size() && bucket_of(end) == b) ++end;
                out.push_back(bucket_count{first - offset + b * bucket_, i, end - i});
                i = end;
            }
        }
        std::stable_sort(out.begin(), out.end(), [](const bucket_count& a, const bucket_count& b) { return a.count > b.count; });
        return out;
    }

    std::string judge(record::verdict& v, const retry_index& index, double alpha) const {
        const std::size_t n = index.points.size();
        const std::size_t limit = std::max<std::size_t>(1, binomial_upper_bound(n, index.p, alpha));
        const std::vector<bucket_count> buckets = fill(index);
        std::vector<std::int64_t> reported;  // bucket starts, so a wave is not listed once per grid
        for (const bucket_count& b : buckets) {
            if (b.count <= limit || reported.size() == top_) break;
            const bool overlaps = std::any_of(reported.begin(), reported.end(), [&](std::int64_t from) {
                return b.from < from + bucket_ && from < b.from + bucket_;
            });
            if (overlaps) continue;
            reported.push_back(b.from);
            std::vector<std::uint64_t> shown;
            for (std::size_t i = b.first; i < b.first + std::min(b.count, record::evidence_limit); ++i) {
                shown.push_back(index.points[i].seq);
            }
            add_evidence(v, record::evidence_item{"", std::move(shown),
                                          "retry " + std::to_string(index.k) + index.group + ": " + std::to_string(b.count) +
                                              " retries in " + format_ms(b.from) + "–" + format_ms(b.from + bucket_) +
                                              "; " + std::to_string(n) + " retries spread over a " +
                                              format_ms(index.window) + " window (central 90 % of " +
                                              format_ms(index.points.front().at) + "–" +
                                              format_ms(index.points.back().at) + ", at least " +
                                              format_ms(std::max(min_window_, index.relative_floor)) + ") allow at most " + std::to_string(limit) +
                                              " per bucket (binomial, p = " + format_number(density_) + " × " +
                                              format_ms(bucket_) + " / window = " + format_number(index.p) + ")"});
        }
        return "retry " + std::to_string(index.k) + index.group + ": " + std::to_string(buckets.front().count) + " of " +
               std::to_string(n) + " (bound " + std::to_string(limit) + ")";
    }

    std::int64_t bucket_;
    double density_;
    std::size_t min_retries_;
    std::int64_t min_window_;
    double min_relative_window_;
    double false_alarm_rate_;
    std::int64_t after_;
    std::int64_t before_;
    std::size_t top_;
};

std::unique_ptr<check> make_desynchronized(config::table_reader& p) {
    const auto bucket = p.duration("bucket", std::chrono::nanoseconds{1}).value_or(std::chrono::milliseconds{10});
    const double density = p.number("k", 1, 1e6).value_or(2);
    const auto min_retries = static_cast<std::size_t>(p.integer("min_retries", 2, 1'000'000'000).value_or(20));
    const auto min_window = p.duration("min_window").value_or(std::chrono::milliseconds{100});
    const double min_relative_window = p.number("min_relative_window", 0, 1).value_or(0.2);
    const double false_alarm_rate = p.number_above("false_alarm_rate", 0, 0.5).value_or(1e-3);
    const auto after = p.duration("after").value_or(std::chrono::nanoseconds{0});
    const auto before = p.duration("before");
    const auto top = static_cast<std::size_t>(p.integer("top", 1, 1000).value_or(5));
    // With k × bucket >= min_window a lock-step wave could put every retry in one bucket by the
    // model's own odds (p = 1), so no wave could ever be caught.
    if (p.ok() && density * static_cast<double>(bucket.count()) >= static_cast<double>(min_window.count())) {
        p.fail("min_window", "must be longer than k × bucket (" + format_number(density) + " × " +
                                 format_ms(bucket) + "), or no bucket can ever hold too many retries");
    }
    return std::make_unique<desynchronized>(bucket, density, min_retries, min_window, min_relative_window,
                                            false_alarm_rate, after, before, top);
}

}  // namespace

const core::registration<check_info> registered{
    "desynchronized", "no time bucket holds more retries than a spread over their window allows (binomial bound)",
    &make_desynchronized};

}  // namespace faultline::checks
