#include "faultline/checks/token_bucket.hpp"

#include <algorithm>
#include <cmath>

#include "support.hpp"

namespace faultline::checks {

token_bucket::token_bucket(double max_tokens, double token_ratio)
    : max_milli_(std::llround(max_tokens * 1000)), ratio_milli_(std::llround(token_ratio * 1000)), milli_(max_milli_) {}

void token_bucket::on_ended(const record::journal_record& attempt) {
    on_ended(is_success(attempt)             ? throttle_outcome::success
             : is_retryable_failure(attempt) ? throttle_outcome::failure
                                             : throttle_outcome::neutral);
}

void token_bucket::on_ended(throttle_outcome outcome) {
    // The count stays in [0, max_tokens].
    if (outcome == throttle_outcome::success) {
        milli_ = std::min(max_milli_, milli_ + ratio_milli_);
    } else if (outcome == throttle_outcome::failure) {
        milli_ = std::max<std::int64_t>(0, milli_ - 1000);
    }
}

bool ended_before(const record::journal_record& a, const record::journal_record& b) {
    return a.finished_ns != b.finished_ns ? a.finished_ns < b.finished_ns : a.seq < b.seq;
}

}  // namespace faultline::checks
