// Retry-After (RFC 9110 §10.2.3): the server's minimum wait before the next attempt, as delta-seconds
// ("120") or an HTTP-date in any of the three forms a recipient must accept (§5.6.7): IMF-fixdate
// ("Sun, 06 Nov 1994 08:49:37 GMT"), obsolete RFC 850 ("Sunday, 06-Nov-94 08:49:37 GMT") and ANSI C
// asctime ("Sun Nov  6 08:49:37 1994"). The parser is strict, locale-free and allocation-free.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "faultline/core/clock.hpp"

namespace faultline::retry {

using faultline::duration;
using faultline::wall_time_point;

// The wait the header asks for, relative to `now` (the client's wall clock):
// - delta-seconds: 1*DIGIT; huge values saturate (to about 292 years, the largest duration) instead
//   of overflowing; a leading '-' followed by digits ("-5") is treated as 0;
// - an HTTP-date: date - now, or 0 when the date is in the past;
// - anything else (empty, garbage, bad dates such as "Feb 30"): nullopt, so the caller ignores the
//   header and its computed backoff applies.
// Surrounding optional whitespace (SP, HTAB) is ignored.
std::optional<duration> parse_retry_after(std::string_view value, wall_time_point now);

// An HTTP-date in any of the three forms, as a time point (seconds resolution, UTC). `now` resolves
// the RFC 850 two-digit year: the year is taken in now's century, or the century before when that
// would be more than 50 years in the future (RFC 9110 §5.6.7). The day name must be a valid one but
// is not checked against the date. Seconds up to 60 (a leap second) are accepted.
std::optional<wall_time_point> parse_http_date(std::string_view value, wall_time_point now);

// The IMF-fixdate form of `t` (truncated to seconds), e.g. "Sun, 06 Nov 1994 08:49:37 GMT".
std::string format_http_date(wall_time_point t);

}  // namespace faultline::retry
