#include "faultline/config/duration.hpp"

#include <array>
#include <cstdint>
#include <limits>

namespace faultline::config {
namespace {

struct unit {
    std::string_view suffix;
    std::int64_t nanoseconds;
};

// Longest suffixes first so "ms" is not read as "m" followed by junk.
constexpr std::array<unit, 6> units{{
    {"ns", 1},
    {"us", 1'000},
    {"ms", 1'000'000},
    {"s", 1'000'000'000},
    {"m", 60'000'000'000},
    {"h", 3'600'000'000'000},
}};

}  // namespace

parsed_duration parse_duration(std::string_view text) {
    // Built by appending: GCC 12 at -O3 reports a false -Wrestrict on `"\"" + std::string{text}`.
    std::string quoted;
    quoted.reserve(text.size() + 2);
    quoted.append(1, '"').append(text).append(1, '"');
    if (text.empty()) {
        return {std::nullopt, "empty duration (write e.g. \"250ms\" or \"2s\")"};
    }
    std::size_t digits = 0;
    while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
        ++digits;
    }
    if (digits == 0) {
        return {std::nullopt, "bad duration " + quoted + ": expected digits then a unit (ns, us, ms, s, m, h)"};
    }
    const std::string_view suffix = text.substr(digits);
    if (suffix.empty()) {
        return {std::nullopt, "bad duration " + quoted + ": missing unit (ns, us, ms, s, m, h)"};
    }
    const unit* found = nullptr;
    for (const unit& u : units) {
        if (suffix == u.suffix) {
            found = &u;
        }
    }
    if (found == nullptr) {
        return {std::nullopt, "bad duration " + quoted + ": unknown unit \"" + std::string{suffix} +
                                  "\" (ns, us, ms, s, m, h)"};
    }
    constexpr std::int64_t max = std::numeric_limits<std::int64_t>::max();
    const std::int64_t limit = max / found->nanoseconds;
    std::int64_t count = 0;
    for (std::size_t i = 0; i < digits; ++i) {
        const std::int64_t digit = text[i] - '0';
        // Checked before multiplying so the count never wraps.
        if (count > (limit - digit) / 10) {
            return {std::nullopt, "bad duration " + quoted +
                                      ": too large (durations are counted in 64-bit nanoseconds: at most "
                                      "9223372036854775807ns, about 292 years; 2562047h is the most in hours)"};
        }
        count = count * 10 + digit;
    }
    return {std::chrono::nanoseconds{count * found->nanoseconds}, {}};
}

std::string format_duration(std::chrono::nanoseconds d) {
    const std::int64_t ns = d.count();
    if (ns == 0) {
        return "0s";
    }
    // Unsigned magnitude: negating INT64_MIN would overflow.
    const std::uint64_t magnitude = ns < 0 ? 0 - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
    const std::string sign = ns < 0 ? "-" : "";
    // Largest unit that divides exactly, so the text reads back to the same value; every
    // count of nanoseconds is exact in "ns", the fallback.
    for (auto it = units.rbegin(); it + 1 != units.rend(); ++it) {
        const auto per = static_cast<std::uint64_t>(it->nanoseconds);
        if (magnitude % per == 0) {
            return sign + std::to_string(magnitude / per) + std::string{it->suffix};
        }
    }
    return sign + std::to_string(magnitude) + "ns";
}

}  // namespace faultline::config
