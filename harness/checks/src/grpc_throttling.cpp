// grpc_throttling: the service config's retryThrottling (gRFC A6) replayed over every attempt of the
// run in the order they ended (token_bucket.hpp): an OK adds tokenRatio, a status in its method's
// retryableStatusCodes (hedging: nonFatalStatusCodes) or a "do not retry" pushback costs one token,
// anything else leaves the bucket alone. A retry (an attempt after the first of its operation, not a
// transparent retry after a refused stream) may be issued only while the bucket is above half. A
// retry is decided when the attempt before it ended, after that attempt's own cost (as gRPC's
// RecordFailure returns the verdict), so it is judged there; a hedge is decided by its timer, so it is
// judged when it started. Each retry at or below half is a finding with the token level.
//
// The bucket is a channel's: a client whose every operation is a process of its own (a command client
// run per operation, as `faultline score` runs one) has one bucket per operation; any other run is
// one client with one bucket. A run in which the bucket never had to stop a retry the policy allowed
// proves nothing of throttling: insufficient evidence, with the lowest level it reached.
#include <algorithm>
#include <map>

#include "faultline/checks/token_bucket.hpp"
#include "grpc_support.hpp"

namespace faultline::checks {

namespace {

class grpc_throttling final : public grpc_check {
public:
    explicit grpc_throttling(grpc_config_source source) : grpc_check{std::move(source), grpc_policy::either} {}

    record::verdict judge(const record::grpc_service_config& config, const record::run_record& run, const record::operation_groups& operations) const override {
        if (!config.throttling) {
            record::verdict v;
            v.insufficient_evidence = true;
            v.summary = "not applicable: the service config has no retryThrottling";
            return v;
        }
        // Every attempt's end feeds the bucket; a retry is judged at its decision (see above): just
        // after the end of the attempt before it, or (a hedge) at its own start after the ends before it.
        struct event {
            std::int64_t at;
            int order;  // 0: an end, 1: a judgment, after every end at the same instant
            std::uint64_t seq;
            const record::journal_record* attempt;
            const record::journal_record* before = nullptr;  // judgments: the attempt it followed (null for a hedge)
            const record::grpc_method_config* method = nullptr;
            std::string_view operation{};
            std::size_t index = 0;  // ends: the attempt's place in its operation, 0-based
        };
        const bool bucket_per_operation = run.command && run.command->processes.size() > 1;
        std::vector<event> events;
        events.reserve(run.journal.size() * 2);
        std::size_t retries = 0;
        for (const auto& op : operations) {
            const record::grpc_method_config* m = method_of(config, op, grpc_policy::either);
            for (std::size_t k = 0; k < op.attempts.size(); ++k) {
                const record::journal_record* a = op.attempts[k];
                events.push_back(event{a->finished_ns, 0, a->seq, a, nullptr, m, op.operation, k});
                if (k == 0 || m == nullptr || refused(*op.attempts[k - 1])) continue;
                ++retries;
                const record::journal_record* before = op.attempts[k - 1];
                if (m->hedging) {
                    events.push_back(event{a->request_ns, 1, a->seq, a, nullptr, m, op.operation});
                } else {
                    events.push_back(event{before->finished_ns, 1, before->seq, a, before, m, op.operation});
                }
            }
        }
        std::sort(events.begin(), events.end(), [](const event& a, const event& b) {
            if (a.at != b.at) return a.at < b.at;
            if (a.order != b.order) return a.order < b.order;
            return a.seq < b.seq;
        });
        const token_bucket full{config.throttling->max_tokens, config.throttling->token_ratio};
        std::map<std::string_view, token_bucket> buckets;
        std::int64_t lowest = full.milli_tokens();
        std::size_t throttled = 0;
        std::size_t stops_due = 0;  // failures the policy would retry, with the bucket at or below half after them
        record::verdict v;
        for (const event& e : events) {
            token_bucket& bucket =
                buckets.try_emplace(bucket_per_operation ? e.operation : std::string_view{}, full).first->second;
            if (e.order == 0) {
                bucket.on_ended(outcome_of(*e.attempt, e.method));
                lowest = std::min(lowest, bucket.milli_tokens());
                if (e.method != nullptr && classify(*e.attempt, *e.method) == grpc_end::retryable &&
                    e.index + 1 < max_attempts_of(*e.method) && !bucket.allows_retry()) {
                    ++stops_due;
                }
                continue;
            }
            if (bucket.allows_retry()) continue;
            ++throttled;
            const std::string level = format_number(tokens(bucket.milli_tokens())) + " tokens ≤ maxTokens/2 = " +
                                      format_number(tokens(bucket.max_milli_tokens()) / 2);
            record::evidence_item item{std::string(e.operation), {}, ""};
            if (e.before != nullptr) {
                item.seqs = {e.before->seq, e.attempt->seq};
                item.detail = "retry #" + std::to_string(e.attempt->seq) + " at " + format_ms(e.attempt->request_ns) +
                              " decided after " + describe_attempt(*e.before) + " with " + level;
            } else {
                item.seqs = {e.attempt->seq};
                item.detail = "hedge " + describe_attempt(*e.attempt) + " started with " + level;
            }
            add_evidence(v, std::move(item));
        }
        const std::string bucket_text = "retryThrottling (maxTokens " + format_number(config.throttling->max_tokens) +
                                        ", tokenRatio " + format_number(config.throttling->token_ratio) + ")";
        const std::string scope = bucket_per_operation ? " (a bucket per client process)" : "";
        if (throttled == 0 && stops_due == 0) {
            v.insufficient_evidence = true;
            v.summary = retries == 0 ? "no retry under a retryPolicy or hedgingPolicy: nothing to judge (" + bucket_text + ")"
                                     : "retryThrottling never had to stop a retry: the bucket's lowest level was " +
                                           format_number(tokens(lowest)) + " tokens, above half of " + bucket_text +
                                           scope;
            return v;
        }
        v.passed = throttled == 0;
        v.summary = std::to_string(throttled) + " of " + std::to_string(retries) + " retries issued with the bucket at or below half; " +
                    bucket_text + scope + ", lowest " + format_number(tokens(lowest)) + " tokens; " +
                    std::to_string(stops_due) + " failures left no retry allowed";
        return v;
    }

private:
    // A6 counts every call: an OK refills whatever its method; only a method with a policy has
    // retryable (non-fatal) codes, whose statuses cost a token, as does "do not retry" pushback.
    static throttle_outcome outcome_of(const record::journal_record& r, const record::grpc_method_config* m) {
        if (r.grpc_status && static_cast<grpc_status>(*r.grpc_status) == grpc_status::ok && !refused(r) &&
            r.outcome != record::wire_outcome::truncated) {
            return throttle_outcome::success;
        }
        if (m == nullptr) return throttle_outcome::neutral;
        const grpc_end e = classify(r, *m);
        return e == grpc_end::retryable || e == grpc_end::stop ? throttle_outcome::failure : throttle_outcome::neutral;
    }
};

std::unique_ptr<check> make_grpc_throttling(config::table_reader& p) {
    return std::make_unique<grpc_throttling>(grpc_config_source::read(p));
}

}  // namespace

const core::registration<check_info> registered{
    "grpc_throttling", "gRPC: no retry or hedge is issued while the replayed retryThrottling bucket is at or below half",
    &make_grpc_throttling};

}  // namespace faultline::checks
