// Retry-After and HTTP-date parsing (retry/retry_after.hpp). The input is split at the first NUL into
// the Retry-After value and the response's Date; the wall clock is fixed, so a finding replays. Checks
// the parser's promises besides not crashing: a wait is never negative, and a date that parses
// formats back to a date that parses to the same instant.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "faultline/retry/retry_after.hpp"

namespace fr = faultline::retry;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input{reinterpret_cast<const char*>(data), size};
    const auto nul = input.find('\0');
    const std::string_view value = input.substr(0, nul);
    const std::string_view date = nul == std::string_view::npos ? std::string_view{} : input.substr(nul + 1);
    const faultline::wall_time_point now{std::chrono::seconds{1'780'000'000} + std::chrono::milliseconds{250}};

    if (const auto wait = fr::parse_retry_after(value, now, date); wait && *wait < faultline::duration{0}) std::abort();
    if (const auto wait = fr::parse_retry_after(value, now); wait && *wait < faultline::duration{0}) std::abort();
    if (const auto t = fr::parse_http_date(value, now);
        t && *t != faultline::wall_time_point::min() && *t != faultline::wall_time_point::max()) {
        const auto again = fr::parse_http_date(fr::format_http_date(*t), now);
        if (!again || *again != std::chrono::floor<std::chrono::seconds>(*t)) std::abort();
    }
    return 0;
}
