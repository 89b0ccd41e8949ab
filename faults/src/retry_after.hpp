// Retry-After header values written by fault kinds (status, overload), as delta-seconds or as an
// IMF-fixdate HTTP-date (RFC 9110 §5.6.7). Private to the faults module.
#pragma once

#include <chrono>
#include <string>

namespace faultline::faults::detail {

enum class retry_after_format { seconds, http_date };

// "Sun, 06 Nov 1994 08:49:37 GMT" for `t`, truncated to the second.
std::string http_date(std::chrono::system_clock::time_point t);

// The header value for a wait of `wait` (whole seconds) sent at wall time `now`. The date form is
// rounded up to the next whole second so a client waiting until it waits at least `wait`.
std::string retry_after_value(std::chrono::seconds wait, retry_after_format format,
                              std::chrono::system_clock::time_point now);

}  // namespace faultline::faults::detail
