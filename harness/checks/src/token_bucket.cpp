#include "faultline/checks/token_bucket.hpp"

#include <algorithm>
#include <cmath>

#include "support.hpp"

namespace faultline::harness::checks {

token_bucket::token_bucket(double max_tokens, double token_ratio)
    : max_milli_(std::llround(max_tokens * 1000)), ratio_milli_(std::llround(token_ratio * 1000)), milli_(max_milli_) {}

void token_bucket::on_ended(const journal_record& attempt) {
    if (is_success(attempt)) {
        milli_ = std::min(max_milli_, milli_ + ratio_milli_);
    } else if (is_retryable_failure(attempt)) {
        milli_ = std::max<std::int64_t>(0, milli_ - 1000);
    }
}

bool ended_before(const journal_record& a, const journal_record& b) {
    return a.finished_ns != b.finished_ns ? a.finished_ns < b.finished_ns : a.seq < b.seq;
}

}  // namespace faultline::harness::checks
