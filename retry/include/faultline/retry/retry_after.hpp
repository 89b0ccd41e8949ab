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
// - an HTTP-date: date - now, or 0 when the date is in the past; a date beyond what a duration can
//   reach (past 2262, e.g. "Fri, 31 Dec 9999 23:59:59 GMT") saturates like delta-seconds;
// - anything else (empty, garbage, bad dates such as "Feb 30"): nullopt, so the caller ignores the
//   header and its computed backoff applies.
// Surrounding optional whitespace (SP, HTAB) is ignored.
std::optional<duration> parse_retry_after(std::string_view value, wall_time_point now);

// The same, for a response whose `Date` header is `date_header` (empty when absent). When it is a
// valid HTTP-date, an HTTP-date Retry-After is measured from it: wait = Retry-After - Date, both
// written by the server's clock, so a skew between the server's clock and ours does not change the
// wait (RFC 9110 §10.2.3, §6.6.1). Without a valid Date, `now` is the reference as above.
std::optional<duration> parse_retry_after(std::string_view value, wall_time_point now, std::string_view date_header);

// An HTTP-date in any of the three forms, as a time point (seconds resolution, UTC), saturated to
// [wall_time_point::min(), max()] (about 1677..2262) for dates outside it. `now` resolves the RFC
// 850 two-digit year: the year is taken in now's century, or the century before when that date
// would be more than 50 years after `now`, compared by timestamp (RFC 9110 §5.6.7). The day name
// must be a valid one but is not checked against the date. Seconds up to 60 (a leap second) are
// accepted.
std::optional<wall_time_point> parse_http_date(std::string_view value, wall_time_point now);

// The IMF-fixdate form of `t` (truncated to seconds), e.g. "Sun, 06 Nov 1994 08:49:37 GMT".
std::string format_http_date(wall_time_point t);

}  // namespace faultline::retry
