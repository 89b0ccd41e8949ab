#include "backoff_table.hpp"

#include <optional>
#include <string>
#include <string_view>

#include "faultline/config/duration.hpp"

namespace faultline::drivers {

namespace {

using namespace std::chrono_literals;

std::optional<retry::jitter_kind> jitter_from_string(std::string_view s) {
    for (const auto k : {retry::jitter_kind::none, retry::jitter_kind::full, retry::jitter_kind::equal,
                         retry::jitter_kind::decorrelated, retry::jitter_kind::proportional}) {
        if (retry::to_string(k) == s) return k;
    }
    return std::nullopt;
}

}  // namespace

void read_backoff_table(config::table_reader& r, retry::backoff_policy& policy, config::need curve_keys) {
    if (const auto v = r.duration("base", 0ns, 1h, curve_keys)) policy.base = *v;
    if (const auto v = r.duration("cap", 0ns, 24h, curve_keys)) policy.cap = *v;
    if (const auto v = r.number("multiplier", 1.0, 100.0)) policy.multiplier = *v;
    if (const auto v = r.choice("jitter", {"none", "full", "equal", "decorrelated", "proportional"}, curve_keys)) {
        policy.jitter = *jitter_from_string(*v);
    }
    if (const auto v = r.number("jitter_fraction", 0.0, 1.0)) policy.jitter_fraction = *v;
    if (r.ok() && policy.cap < policy.base) {
        r.fail("cap", "cap (" + config::format_duration(policy.cap) + ") is below base (" +
                          config::format_duration(policy.base) + ")");
    }
    r.finish();
}

namespace {

record::declared_jitter declared_from(retry::jitter_kind kind) {
    switch (kind) {
        case retry::jitter_kind::none: return record::declared_jitter::none;
        case retry::jitter_kind::full: return record::declared_jitter::full;
        case retry::jitter_kind::equal: return record::declared_jitter::equal;
        case retry::jitter_kind::decorrelated: return record::declared_jitter::decorrelated;
        case retry::jitter_kind::proportional: return record::declared_jitter::proportional;
    }
    return record::declared_jitter::full;
}

}  // namespace

record::declared_backoff declared_backoff_of(const retry::backoff_policy& policy) {
    return record::declared_backoff{policy.base, policy.cap, policy.multiplier, declared_from(policy.jitter),
                            policy.jitter_fraction};
}

}  // namespace faultline::drivers
