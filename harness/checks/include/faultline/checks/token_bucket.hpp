// gRPC's retryThrottling token bucket as the retry_budget and grpc_throttling checks replay it over a
// journal, shared with the HTML report's token-level chart so the chart shows the very levels the
// verdict judged. The bucket starts full; each failure costs one token, each success adds token_ratio
// (over HTTP: a retryable failure or missing response, a 2xx; over gRPC: a status in the method's
// retryable or non-fatal codes, OK); a retry may be issued only while the bucket is above half. Attempts are fed in the
// order they ended (`ended_before`): a client decides to retry when an attempt ends. Kept in
// milli-tokens, as gRPC keeps them, so token_ratio 0.1 adds exactly 100. Not thread-safe: one
// replay, one thread.
#pragma once

#include <cstdint>

#include "faultline/record/journal_record.hpp"

namespace faultline::checks {

// What an ended attempt does to the bucket, as the caller classifies it: an HTTP attempt by its
// status (on_ended(journal_record)), a gRPC call by its method's retryable or non-fatal codes.
enum class throttle_outcome {
    success,  // adds token_ratio
    failure,  // costs one token
    neutral,  // neither (a failure the policy would not retry)
};

class token_bucket {
public:
    token_bucket(double max_tokens, double token_ratio);

    // One HTTP attempt ended: a 2xx is a success, a retryable failure or a missing response a failure.
    void on_ended(const record::journal_record& attempt);
    // One attempt ended, classified by the caller.
    void on_ended(throttle_outcome outcome);
    // Retries are allowed only while the bucket is above half.
    bool allows_retry() const { return milli_ * 2 > max_milli_; }

    std::int64_t milli_tokens() const { return milli_; }
    std::int64_t max_milli_tokens() const { return max_milli_; }
    std::int64_t ratio_milli_tokens() const { return ratio_milli_; }

private:
    std::int64_t max_milli_;
    std::int64_t ratio_milli_;
    std::int64_t milli_;
};

// Milli-tokens as tokens, for evidence and reports.
inline double tokens(std::int64_t milli) { return static_cast<double>(milli) / 1000; }

// The replay's order: by the time attempts ended, then by seq.
bool ended_before(const record::journal_record& a, const record::journal_record& b);

}  // namespace faultline::checks
