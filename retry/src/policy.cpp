#include "faultline/retry/policy.hpp"

namespace faultline::retry {

void validate(const retry_policy& policy) { validate(policy.backoff); }

}  // namespace faultline::retry
