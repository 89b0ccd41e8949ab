#include "faultline/retry/deadline.hpp"

#include <algorithm>

namespace faultline::retry {

duration remaining(time_point deadline, time_point now) {
    return deadline > now ? deadline - now : duration{0};
}

std::optional<duration> attempt_timeout(std::optional<duration> per_attempt, std::optional<time_point> deadline,
                                        time_point now) {
    if (!deadline) return per_attempt;
    const duration left = remaining(*deadline, now);
    return per_attempt ? std::min(*per_attempt, left) : left;
}

std::int64_t deadline_header_ms(duration remaining_budget) {
    constexpr duration::rep ns_per_ms = 1'000'000;
    const duration::rep ns = remaining_budget.count();
    // Ceil without overflow: divide first, then add one for any remainder.
    const duration::rep ms = ns / ns_per_ms + (ns % ns_per_ms > 0 ? 1 : 0);
    return std::max<std::int64_t>(ms, 1);
}

}  // namespace faultline::retry
