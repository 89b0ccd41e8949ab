// gRPC's retryThrottling token bucket as the retry_budget check replays it over a journal, shared
// with the HTML report's token-level chart so the chart shows the very levels the verdict judged.
// The bucket starts full; each retryable failure or missing response costs one token, each 2xx adds
// token_ratio; a retry may be issued only while the bucket is above half. Attempts are fed in the
// order they ended (`ended_before`): a client decides to retry when an attempt ends. Kept in
// milli-tokens, as gRPC keeps them, so token_ratio 0.1 adds exactly 100. Not thread-safe: one
// replay, one thread.
#pragma once

#include <cstdint>

#include "faultline/record/journal_record.hpp"

namespace faultline::harness::checks {

class token_bucket {
public:
    token_bucket(double max_tokens, double token_ratio);

    // One attempt ended.
    void on_ended(const journal_record& attempt);
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

// The replay's order: by the time attempts ended, then by seq.
bool ended_before(const journal_record& a, const journal_record& b);

}  // namespace faultline::harness::checks
