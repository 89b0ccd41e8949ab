#include "support.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unordered_set>

namespace faultline::checks {

std::string format_ms(std::int64_t ns) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.1fms", static_cast<double>(ns) / 1e6);
    return buf;
}

std::string format_ms(std::chrono::nanoseconds d) { return format_ms(d.count()); }

std::string format_window(std::int64_t start_ns, std::int64_t end_ns) {
    return format_ms(std::max<std::int64_t>(start_ns, 0)) + "–" + format_ms(end_ns);
}

std::string format_number(double value) {
    char buf[48];
    // Three significant digits say a ratio (7.56, 0.2); a large count is written whole, not 1.23e+04.
    std::snprintf(buf, sizeof buf, std::abs(value) < 1000 ? "%.3g" : "%.0f", value);
    return buf;
}

std::string attempt_result(const record::journal_record& r) {
    if (r.outcome == record::wire_outcome::responded) return std::to_string(r.status);
    return std::string(to_string(r.outcome));
}

std::string describe_attempt(const record::journal_record& r) {
    std::string out = "#" + std::to_string(r.seq) + " " + r.method + " " + r.target;
    // In a merged history (several sidecars, relay tiers) the instance says where the attempt went.
    if (r.instance && !r.instance->empty()) out += " to " + *r.instance;
    out += " on conn " + std::to_string(r.connection);
    // A resend on a kept-alive connection is invisible to a client's logs; the evidence says so.
    if (r.connection_request && *r.connection_request > 1) {
        out += " (request " + std::to_string(*r.connection_request) + ", kept alive)";
    }
    out += " at " + format_ms(r.request_ns) + "→" + format_ms(r.finished_ns) + ": " + attempt_result(r);
    // A gRPC call's own outcome is in its trailers, not in the HTTP status (always 200).
    if (r.grpc_status) out += " grpc " + std::string(grpc_status_names(static_cast<grpc_status>(*r.grpc_status)));
    if (r.grpc_pushback_ms) out += ", pushback " + std::to_string(*r.grpc_pushback_ms) + "ms";
    if (r.effect != record::effect_kind::none) out += ", effect " + std::string(to_string(r.effect));
    if (!r.fault.empty()) {
        out += " [fault " + r.fault;
        if (!r.rule.empty()) out += ", rule " + r.rule;
        out += "]";
    }
    return out;
}

bool is_success(const record::journal_record& r) {
    return r.outcome == record::wire_outcome::responded && r.status >= 200 && r.status < 300;
}

bool idempotency_key_in_use(const record::journal_record& r) {
    return r.outcome == record::wire_outcome::responded && r.status == 409 && r.effect == record::effect_kind::conflict;
}

bool allows_retry(retry::status_treatment t, const record::journal_record& r) {
    return retry::allows_retry(t, r.retry_after_ms.has_value(), idempotency_key_in_use(r));
}

bool is_retryable_failure(const record::journal_record& r) {
    if (r.outcome != record::wire_outcome::responded) return true;
    const auto rule = retry::find_status_rule(r.status);
    return rule && allows_retry(rule->standard, r);
}

bool reply_lost_after_commit(const record::journal_record& r) {
    return r.effect == record::effect_kind::committed && r.outcome != record::wire_outcome::responded;
}

namespace {

template <class Attempts>
std::vector<std::uint64_t> seqs_in(const Attempts& attempts) {
    std::vector<std::uint64_t> out;
    out.reserve(attempts.size());
    for (const record::journal_record* r : attempts) out.push_back(r->seq);
    return out;
}

}  // namespace

std::vector<std::uint64_t> seqs_of(record::attempt_list attempts) { return seqs_in(attempts); }
std::vector<std::uint64_t> seqs_of(std::span<const record::journal_record* const> attempts) { return seqs_in(attempts); }

client_index::client_index(const record::run_record& run) : clients_{run.clients} {
    by_operation_.reserve(clients_.size());
    for (std::size_t i = 0; i < clients_.size(); ++i) {
        by_operation_.emplace_back(clients_[i].operation.id(), static_cast<std::uint32_t>(i));
    }
    std::sort(by_operation_.begin(), by_operation_.end());  // by id, then position: the first comes first
}

const record::client_record* client_index::find(record::symbol operation) const {
    const auto found = std::lower_bound(by_operation_.begin(), by_operation_.end(),
                                        std::pair<std::uint32_t, std::uint32_t>{operation.id(), 0});
    if (found == by_operation_.end() || found->first != operation.id()) return nullptr;
    return &clients_[found->second];
}

std::unordered_map<record::symbol, record::operation_attempts> find_operations(const record::operation_groups& operations,
                                                              std::span<const record::symbol> names) {
    std::unordered_map<record::symbol, record::operation_attempts> found;
    if (names.empty()) return found;
    const std::unordered_set<record::symbol> wanted(names.begin(), names.end());
    for (const record::operation_attempts op : operations) {
        if (wanted.contains(op.operation)) found.emplace(op.operation, op);
    }
    return found;
}

std::optional<std::int64_t> operation_deadline(const record::operation_attempts& op, const record::client_record* client) {
    if (client != nullptr && client->deadline_ns) return client->deadline_ns;
    const record::journal_record& first = *op.attempts.front();
    if (first.deadline_ms) return first.request_ns + *first.deadline_ms * 1'000'000;
    return std::nullopt;
}

server_lateness::server_lateness(const record::run_record& run) {
    for (const record::server_event& e : run.server_events) {
        if (e.kind == record::server_event_kind::server_late && e.late_ns) spells_.emplace_back(e.at_ns, *e.late_ns);
    }
}

std::int64_t server_lateness::overlapping(std::int64_t from_ns, std::int64_t to_ns) const {
    // A stamp taken just after the watch's last late firing, before its next, was still delayed.
    constexpr std::int64_t timer_period_ns = std::chrono::nanoseconds{record::lateness_watch_period}.count();
    std::int64_t longest = 0;
    for (const auto& [from, length] : spells_) {
        if (from <= to_ns && from + length + timer_period_ns >= from_ns) longest = std::max(longest, length);
    }
    return longest;
}

bool lateness_excuses::excuse(std::int64_t from_ns, std::int64_t to_ns, double off) {
    const std::int64_t late = spells_.overlapping(from_ns, to_ns);
    if (late == 0 || off > static_cast<double>(late)) return false;
    ++count_;
    longest_ = std::max(longest_, late);
    return true;
}

std::string lateness_excuses::clause(std::string_view how, std::string_view when, std::string_view tail) const {
    if (count_ == 0) return {};
    return "; " + std::to_string(count_) + " not judged: " + std::string(how) +
           " by no more than the server itself ran late " + std::string(when) + " (up to " + format_ms(longest_) +
           ", server_late)" + std::string(tail);
}

std::size_t window_counter::count_from(std::int64_t start) {
    while (begin_ < times_.size() && times_[begin_] < start) ++begin_;
    end_ = std::max(end_, begin_);
    while (end_ < times_.size() && times_[end_] < start + width_) ++end_;
    return end_ - begin_;
}

double quantile(const std::vector<double>& sorted_values, double q) {
    const double position = q * static_cast<double>(sorted_values.size() - 1);
    const auto below = static_cast<std::size_t>(std::floor(position));
    const std::size_t above = std::min(below + 1, sorted_values.size() - 1);
    const double weight = position - static_cast<double>(below);
    return sorted_values[below] + weight * (sorted_values[above] - sorted_values[below]);
}

std::size_t binomial_upper_bound(std::size_t n, double p, double alpha) {
    if (p >= 1) return n;
    if (p <= 0) return 0;
    // log P(X = j) from the recurrence P(j+1) = P(j) × (n−j)/(j+1) × p/(1−p), starting at
    // log P(X = 0) = n log(1−p): lgamma would be simpler but is not thread-safe (signgam).
    const double log_odds = std::log(p) - std::log1p(-p);
    std::vector<double> log_pmf(n + 1);
    log_pmf[0] = static_cast<double>(n) * std::log1p(-p);
    for (std::size_t j = 0; j < n; ++j) {
        log_pmf[j + 1] = log_pmf[j] + std::log(static_cast<double>(n - j)) - std::log(static_cast<double>(j + 1)) +
                         log_odds;
    }
    double tail_above = 0;  // P(X > m) for the m being tried
    for (std::size_t m = n; m > 0; --m) {
        const double tail_from = tail_above + std::exp(log_pmf[m]);  // P(X >= m) = P(X > m − 1)
        if (tail_from > alpha) return m;
        tail_above = tail_from;
    }
    return 0;
}

void add_evidence(record::verdict& v, record::evidence_item item) {
    if (v.evidence.size() < record::evidence_limit) v.evidence.push_back(std::move(item));
    ++v.evidence_total;
}

}  // namespace faultline::checks
