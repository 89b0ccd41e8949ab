// Durations as users write them: a non-negative integer with a unit, "250ms", "2s", "1m". Strict on
// purpose — a bare "5" is an error rather than a guess at the unit. Shared by the fault rules and the
// scenario loader so every duration in faultline's TOML reads the same way.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace faultline::config {

// The result of parsing a duration: a value, or a message saying what is wrong with the text.
struct parsed_duration {
    std::optional<std::chrono::nanoseconds> value;
    std::string error;  // empty when `value` is set

    explicit operator bool() const { return value.has_value(); }
};

// Accepts `<digits><unit>` with unit one of ns, us, ms, s, m, h (no sign, no spaces, no fraction).
// Errors: empty text, missing digits, missing or unknown unit, a value that overflows nanoseconds.
parsed_duration parse_duration(std::string_view text);

// The shortest exact form: 1500ms -> "1500ms", 2s -> "2s", 0 -> "0s". parse_duration reads it back.
std::string format_duration(std::chrono::nanoseconds d);

}  // namespace faultline::config
