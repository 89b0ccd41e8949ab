// retry_budget: retries as a share of traffic. (1) A sliding-window ratio budget (Finagle, Linkerd):
// in every window of length `window`, retries ≤ ratio × first attempts + min_per_sec × window.
// Windows slide over the journal's request times, the windows that start or end at an attempt. The
// client keeps its budget by its own clock and the journal has the server's, which reads each request
// a little later, some later than others: first attempts up to `tolerance` either side of a window
// count for it, or a client that spends its budget to the last retry is failed for its latency.
// (2) Optionally (max_tokens > 0) a replay of gRPC's retryThrottling token bucket (token_bucket.hpp):
// each retry is judged by the bucket when its previous attempt ended, which is when a client decides
// to retry (it then sleeps). A run without a retry is insufficient evidence.
#include <algorithm>
#include <optional>

#include "faultline/checks/token_bucket.hpp"
#include "support.hpp"

namespace faultline::checks {

namespace {

struct window_result {
    std::int64_t start = 0;
    std::size_t retries = 0;
    std::size_t firsts = 0;
    double allowed = 0;
};

class retry_budget final : public check {
public:
    retry_budget(double ratio, double min_per_sec, std::chrono::nanoseconds window, std::chrono::nanoseconds tolerance,
                 double max_tokens, double token_ratio)
        : ratio_(ratio), min_per_sec_(min_per_sec), window_(window), tolerance_(tolerance.count()) {
        if (max_tokens > 0) full_bucket_.emplace(max_tokens, token_ratio);
    }

    record::verdict evaluate(const record::run_record&, const record::operation_groups& operations) const override {
        record::verdict v;
        if (full_bucket_) {
            // The bucket as the check replays it, for the HTML report's token-level chart.
            v.parameters = {{"max_tokens", tokens(full_bucket_->max_milli_tokens())},
                            {"token_ratio", tokens(full_bucket_->ratio_milli_tokens())}};
        }
        std::vector<std::int64_t> firsts;
        std::vector<std::pair<std::int64_t, std::uint64_t>> retries;  // (t_request, seq)
        firsts.reserve(operations.size());
        for (const auto& op : operations) {
            firsts.push_back(op.attempts.front()->request_ns);
            for (std::size_t i = 1; i < op.attempts.size(); ++i) {
                retries.emplace_back(op.attempts[i]->request_ns, op.attempts[i]->seq);
            }
        }
        std::sort(firsts.begin(), firsts.end());
        std::sort(retries.begin(), retries.end());
        const std::string window_summary = check_windows(v, firsts, retries);
        std::string summary = std::to_string(retries.size()) + " retries for " + std::to_string(firsts.size()) +
                              " operations; " + window_summary;
        if (full_bucket_) summary += "; " + replay_tokens(v, operations);
        v.summary = summary;
        // Both parts bound retries: a run without one holds any budget, whatever the client does.
        if (retries.empty() && v.evidence_total == 0) {
            v.insufficient_evidence = true;
            v.summary = "no retry: nothing to judge (" + summary + ")";
            return v;
        }
        v.passed = v.evidence_total == 0;
        return v;
    }

private:
    std::string check_windows(record::verdict& v, const std::vector<std::int64_t>& firsts,
                              const std::vector<std::pair<std::int64_t, std::uint64_t>>& retries) const {
        std::vector<std::int64_t> retry_times;
        retry_times.reserve(retries.size());
        for (const auto& r : retries) retry_times.push_back(r.first);
        const std::int64_t width = window_.count();
        const double floor = min_per_sec_ * std::chrono::duration<double>(window_).count();
        std::optional<window_result> first_bad;
        std::optional<window_result> worst;
        double worst_excess = 0;
        window_counter retries_in{retry_times, width};
        window_counter firsts_in{firsts, width + 2 * tolerance_};
        for_each_window_start(firsts, retry_times, width, [&](std::int64_t s) {
            window_result w{s, retries_in.count_from(s), firsts_in.count_from(s - tolerance_), 0};
            w.allowed = ratio_ * static_cast<double>(w.firsts) + floor;
            const double excess = static_cast<double>(w.retries) - w.allowed;
            if (excess <= 0) return;
            if (!first_bad) first_bad = w;
            if (!worst || excess > worst_excess) {
                worst = w;
                worst_excess = excess;
            }
        });
        const std::string limit = "retries ≤ " + format_number(ratio_) + " × first attempts (± " +
                                  format_ms(tolerance_) + ") + " + format_number(min_per_sec_) + "/s × " +
                                  format_ms(window_);
        if (!worst) return "every " + format_ms(window_) + " window within " + limit;
        add_evidence(v, describe_window(*worst, "worst window", retries));
        if (first_bad->start != worst->start) add_evidence(v, describe_window(*first_bad, "first window", retries));
        return "budget exceeded: " + std::to_string(worst->retries) + " retries in the worst window, allowed " +
               format_number(worst->allowed) + " (" + limit + ")";
    }

    record::evidence_item describe_window(const window_result& w, std::string_view label,
                                  const std::vector<std::pair<std::int64_t, std::uint64_t>>& retries) const {
        const std::int64_t end = w.start + window_.count();
        record::evidence_item item;
        for (const auto& [t, seq] : retries) {
            if (t >= w.start && t < end && item.seqs.size() < record::evidence_limit) item.seqs.push_back(seq);
        }
        item.detail = std::string(label) + " " + format_window(w.start, end) + ": " +
                      std::to_string(w.retries) + " retries > " + format_number(ratio_) + " × " +
                      std::to_string(w.firsts) + " first attempts (± " + format_ms(tolerance_) + ") + " +
                      format_number(min_per_sec_) + "/s × " + format_ms(window_) + " = " + format_number(w.allowed) + " (seqs: the first " +
                      std::to_string(item.seqs.size()) + " retries)";
        return item;
    }

    std::string replay_tokens(record::verdict& v, const record::operation_groups& operations) const {
        struct end_event {
            const record::journal_record* ended;
            const record::journal_record* next;  // the retry decided when `ended` ended, or nullptr
            std::string_view operation;
        };
        std::vector<end_event> events;
        for (const auto& op : operations) {
            for (std::size_t i = 0; i < op.attempts.size(); ++i) {
                const record::journal_record* next = i + 1 < op.attempts.size() ? op.attempts[i + 1] : nullptr;
                events.push_back(end_event{op.attempts[i], next, op.operation});
            }
        }
        std::sort(events.begin(), events.end(),
                  [](const end_event& a, const end_event& b) { return ended_before(*a.ended, *b.ended); });
        token_bucket bucket = *full_bucket_;
        std::int64_t lowest = bucket.milli_tokens();
        std::size_t throttled = 0;
        for (const end_event& e : events) {
            bucket.on_ended(*e.ended);
            lowest = std::min(lowest, bucket.milli_tokens());
            if (e.next == nullptr || bucket.allows_retry()) continue;
            ++throttled;
            add_evidence(v, record::evidence_item{std::string(e.operation), {e.ended->seq, e.next->seq},
                                          "retry #" + std::to_string(e.next->seq) + " at " +
                                              format_ms(e.next->request_ns) + " decided after " +
                                              describe_attempt(*e.ended) + " with " +
                                              format_number(tokens(bucket.milli_tokens())) +
                                              " tokens ≤ max_tokens/2 = " +
                                              format_number(tokens(bucket.max_milli_tokens()) / 2)});
        }
        return "token bucket (max " + format_number(tokens(bucket.max_milli_tokens())) + ", ratio " +
               format_number(tokens(bucket.ratio_milli_tokens())) + "): " + std::to_string(throttled) +
               " retries issued at or below half, lowest " + format_number(tokens(lowest)) + " tokens";
    }

    double ratio_;
    double min_per_sec_;
    std::chrono::nanoseconds window_;
    std::int64_t tolerance_;  // ns either side of a window in which first attempts still count
    std::optional<token_bucket> full_bucket_;  // when max_tokens > 0: the bucket every replay starts from
};

std::unique_ptr<check> make_retry_budget(config::table_reader& p) {
    const double ratio = p.number("ratio", 0, 1000).value_or(0.2);
    const double min_per_sec = p.number("min_per_sec", 0, 1e9).value_or(10);
    const auto window = p.duration("window", std::chrono::nanoseconds{1}).value_or(std::chrono::seconds{10});
    const auto tolerance = p.duration("tolerance").value_or(std::chrono::milliseconds{10});
    const double max_tokens = p.number("max_tokens", 0, 1000).value_or(0);
    const double token_ratio = p.number("token_ratio", 0.001, 1000).value_or(0.1);
    return std::make_unique<retry_budget>(ratio, min_per_sec, window, tolerance, max_tokens, token_ratio);
}

}  // namespace

const core::registration<check_info> registered{
    "retry_budget", "retries stay within a sliding-window ratio and a replayed gRPC token bucket",
    &make_retry_budget};

}  // namespace faultline::checks
