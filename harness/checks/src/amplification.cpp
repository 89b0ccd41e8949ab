// amplification: how much load retries add. Overall, attempts ÷ operations ≤ max_ratio. At the peak,
// over every window of length `window`, attempts ÷ first attempts ≤ max_peak_ratio — the extra load
// the service sees during an outage. Windows with fewer than `min_first_attempts` first attempts are
// not judged (the tail of a run holds retries of operations that started earlier); with none judged
// and the overall ratio held, the verdict is insufficient evidence. With `instance`, only the attempts
// journaled by that instance count (a chain of relay tiers or proxies merged into one history): the
// load one tier, e.g. the backend, sees per client operation.
#include <algorithm>
#include <optional>

#include "support.hpp"

namespace faultline::checks {

namespace {

class amplification final : public check {
public:
    amplification(double max_ratio, double max_peak_ratio, std::chrono::nanoseconds window,
                  std::size_t min_first_attempts, std::optional<std::string> instance)
        : max_ratio_(max_ratio), max_peak_ratio_(max_peak_ratio), window_(window.count()),
          min_first_attempts_(min_first_attempts), instance_(std::move(instance)) {}

    record::verdict evaluate(const record::run_record& run, const record::operation_groups& operations) const override {
        record::verdict v;
        if (operations.empty()) {
            v.insufficient_evidence = true;
            v.summary = "no attempts: nothing to judge";
            return v;
        }
        const std::size_t attempts = static_cast<std::size_t>(
            std::count_if(run.journal.begin(), run.journal.end(), [&](const record::journal_record& r) { return counts(r); }));
        const std::string at = instance_ ? " at " + *instance_ : "";
        if (attempts == 0) {
            v.insufficient_evidence = true;
            v.summary = "no attempts journaled by instance " + *instance_ + ": nothing to judge";
            return v;
        }
        const double ratio = static_cast<double>(attempts) / static_cast<double>(operations.size());
        if (ratio > max_ratio_) {
            add_evidence(v, record::evidence_item{"", {},
                                          std::to_string(attempts) + " attempts" + at + " for " +
                                              std::to_string(operations.size()) + " operations = " +
                                              format_number(ratio) + " per operation > " + format_number(max_ratio_)});
            struct counted {
                record::symbol operation;
                std::vector<const record::journal_record*> attempts;
            };
            std::vector<counted> most;
            for (const auto& op : operations) {
                counted c{op.operation, {}};
                for (const record::journal_record* r : op.attempts) {
                    if (counts(*r)) c.attempts.push_back(r);
                }
                if (c.attempts.size() > 1) most.push_back(std::move(c));
            }
            std::stable_sort(most.begin(), most.end(),
                             [](const counted& a, const counted& b) { return a.attempts.size() > b.attempts.size(); });
            for (std::size_t i = 0; i < most.size() && i < 10; ++i) {
                add_evidence(v, record::evidence_item{most[i].operation.str(), seqs_of(most[i].attempts),
                                              std::to_string(most[i].attempts.size()) + " attempts" + at + ", last " +
                                                  describe_attempt(*most[i].attempts.back())});
            }
        }
        const peak_result peak = check_peak(v, operations, attempts);
        v.summary = std::to_string(attempts) + " attempts" + at + " for " + std::to_string(operations.size()) +
                    " operations: " + format_number(ratio) + " per operation (max " + format_number(max_ratio_) +
                    "); " + peak.summary;
        // The overall ratio alone cannot show an outage's extra load; a run too small for one judged
        // window proves nothing about the peak.
        if (!peak.judged && v.evidence_total == 0) {
            v.insufficient_evidence = true;
            v.summary = "no window judged: " + v.summary;
            return v;
        }
        v.passed = v.evidence_total == 0;
        return v;
    }

private:
    struct peak_result {
        std::string summary;
        bool judged = false;  // some window held min_first_attempts first attempts
    };

    peak_result check_peak(record::verdict& v, const record::operation_groups& operations, std::size_t attempts) const {
        std::vector<std::int64_t> firsts;  // every operation's first attempt
        std::vector<std::int64_t> times;   // every attempt counted
        firsts.reserve(operations.size());
        times.reserve(attempts);
        for (const auto& op : operations) {
            firsts.push_back(op.attempts.front()->request_ns);
            for (const record::journal_record* r : op.attempts) {
                if (counts(*r)) times.push_back(r->request_ns);
            }
        }
        std::sort(firsts.begin(), firsts.end());
        std::sort(times.begin(), times.end());
        double best = 0;
        std::int64_t best_start = 0;
        std::size_t best_attempts = 0;
        std::size_t best_firsts = 0;
        window_counter firsts_in{firsts, window_};
        window_counter attempts_in{times, window_};
        for_each_window_start(times, {}, window_, [&](std::int64_t s) {
            const std::size_t f = firsts_in.count_from(s);
            if (f < min_first_attempts_) return;
            const std::size_t n = attempts_in.count_from(s);
            const double r = static_cast<double>(n) / static_cast<double>(f);
            if (r > best) {
                best = r;
                best_start = s;
                best_attempts = n;
                best_firsts = f;
            }
        });
        if (best_firsts == 0) {
            return {"peak not judged (no " + format_ms(window_) + " window with " +
                        std::to_string(min_first_attempts_) + " first attempts)",
                    false};
        }
        const std::string where = format_window(best_start, best_start + window_);
        if (best > max_peak_ratio_) {
            std::vector<std::pair<std::int64_t, std::uint64_t>> in_window;  // (t_request, seq)
            for (const auto& op : operations) {
                for (const record::journal_record* r : op.attempts) {
                    if (counts(*r) && r->request_ns >= best_start && r->request_ns < best_start + window_) {
                        in_window.emplace_back(r->request_ns, r->seq);
                    }
                }
            }
            std::sort(in_window.begin(), in_window.end());
            record::evidence_item item;
            for (std::size_t i = 0; i < in_window.size() && i < record::evidence_limit; ++i) item.seqs.push_back(in_window[i].second);
            item.detail = "peak window " + where + ": " + std::to_string(best_attempts) + " attempts for " +
                          std::to_string(best_firsts) + " first attempts = " + format_number(best) + " > " +
                          format_number(max_peak_ratio_) + " (seqs: the window's first attempts)";
            add_evidence(v, std::move(item));
        }
        return {"peak " + format_number(best) + " in " + where + " (max " + format_number(max_peak_ratio_) + ")", true};
    }

    bool counts(const record::journal_record& r) const { return !instance_ || r.instance == *instance_; }

    double max_ratio_;
    double max_peak_ratio_;
    std::int64_t window_;
    std::size_t min_first_attempts_;
    std::optional<std::string> instance_;  // count only this instance's attempts
};

std::unique_ptr<check> make_amplification(config::table_reader& p) {
    const double max_ratio = p.number("max_ratio", 1, 1e9).value_or(2);
    const double max_peak_ratio = p.number("max_peak_ratio", 1, 1e9).value_or(3);
    const auto window = p.duration("window", std::chrono::nanoseconds{1}).value_or(std::chrono::seconds{1});
    const auto min_first =
        static_cast<std::size_t>(p.integer("min_first_attempts", 1, 1'000'000'000).value_or(10));
    auto instance = p.string("instance");
    return std::make_unique<amplification>(max_ratio, max_peak_ratio, window, min_first, std::move(instance));
}

}  // namespace

const core::registration<check_info> registered{
    "amplification", "attempts per operation, overall and at the peak of any window",
    &make_amplification};

}  // namespace faultline::checks
