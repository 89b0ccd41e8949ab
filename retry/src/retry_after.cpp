#include "faultline/retry/retry_after.hpp"

#include <array>
#include <cstdio>
#include <limits>

namespace faultline::retry {

namespace {

using namespace std::chrono;

constexpr std::array<std::string_view, 7> short_days{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
constexpr std::array<std::string_view, 7> long_days{"Sunday",   "Monday", "Tuesday", "Wednesday",
                                                    "Thursday", "Friday", "Saturday"};
constexpr std::array<std::string_view, 12> months{"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ows(char c) { return c == ' ' || c == '\t'; }

std::string_view trim(std::string_view s) {
    while (!s.empty() && is_ows(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_ows(s.back())) s.remove_suffix(1);
    return s;
}

bool all_digits(std::string_view s) {
    if (s.empty()) return false;
    for (const char c : s)
        if (!is_digit(c)) return false;
    return true;
}

// Exactly `n` digits at the front of `s`, consumed.
std::optional<int> take_digits(std::string_view& s, std::size_t n) {
    if (s.size() < n) return std::nullopt;
    int v = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (!is_digit(s[i])) return std::nullopt;
        v = v * 10 + (s[i] - '0');
    }
    s.remove_prefix(n);
    return v;
}

bool take(std::string_view& s, std::string_view literal) {
    if (s.substr(0, literal.size()) != literal) return false;
    s.remove_prefix(literal.size());
    return true;
}

template <std::size_t N>
std::optional<unsigned> take_name(std::string_view& s, const std::array<std::string_view, N>& names) {
    for (std::size_t i = 0; i < N; ++i)
        if (take(s, names[i])) return static_cast<unsigned>(i);
    return std::nullopt;
}

struct clock_time {
    int hour, minute, second;
};

// time-of-day = hour ":" minute ":" second
std::optional<clock_time> take_time(std::string_view& s) {
    const auto h = take_digits(s, 2);
    if (!h || !take(s, ":")) return std::nullopt;
    const auto m = take_digits(s, 2);
    if (!m || !take(s, ":")) return std::nullopt;
    const auto sec = take_digits(s, 2);
    if (!sec || *h > 23 || *m > 59 || *sec > 60) return std::nullopt;
    return clock_time{*h, *m, *sec};
}

// Dates are kept in whole seconds: every four-digit year fits there, while a nanosecond
// wall_time_point only spans about 1677..2262.
std::optional<sys_seconds> make_time(int y, unsigned month_index, int d, clock_time t) {
    if (d < 1) return std::nullopt;
    const year_month_day ymd{year{y}, month{month_index + 1}, day{static_cast<unsigned>(d)}};
    if (!ymd.ok()) return std::nullopt;  // rejects Feb 30, Apr 31, Feb 29 outside leap years
    return sys_days{ymd} + hours{t.hour} + minutes{t.minute} + seconds{t.second};
}

// A date as a wall_time_point, saturated to the representable range instead of wrapping.
wall_time_point to_wall(sys_seconds s) {
    constexpr auto lowest = ceil<seconds>(wall_time_point::min());
    constexpr auto highest = floor<seconds>(wall_time_point::max());
    if (s <= lowest) return wall_time_point::min();
    if (s >= highest) return wall_time_point::max();
    return time_point_cast<wall_time_point::duration>(s);
}

// IMF-fixdate after the day name: ", " 2DIGIT SP month SP 4DIGIT SP time-of-day SP "GMT"
std::optional<sys_seconds> imf_fixdate(std::string_view s) {
    if (!take(s, ", ")) return std::nullopt;
    const auto d = take_digits(s, 2);
    if (!d || !take(s, " ")) return std::nullopt;
    const auto m = take_name(s, months);
    if (!m || !take(s, " ")) return std::nullopt;
    const auto y = take_digits(s, 4);
    if (!y || !take(s, " ")) return std::nullopt;
    const auto t = take_time(s);
    if (!t || !take(s, " GMT") || !s.empty()) return std::nullopt;
    return make_time(*y, *m, *d, *t);
}

// rfc850-date after the day name: ", " 2DIGIT "-" month "-" 2DIGIT SP time-of-day SP "GMT"
std::optional<sys_seconds> rfc850_date(std::string_view s, wall_time_point now) {
    if (!take(s, ", ")) return std::nullopt;
    const auto d = take_digits(s, 2);
    if (!d || !take(s, "-")) return std::nullopt;
    const auto m = take_name(s, months);
    if (!m || !take(s, "-")) return std::nullopt;
    const auto yy = take_digits(s, 2);
    if (!yy || !take(s, " ")) return std::nullopt;
    const auto t = take_time(s);
    if (!t || !take(s, " GMT") || !s.empty()) return std::nullopt;
    // RFC 9110 §5.6.7: the year in now's century, unless that date is more than 50 years after now
    // (by timestamp, not by year: "31-Dec-76" read on 2026-12-03 is 1976), then a century earlier.
    const sys_days today = floor<days>(now);
    const year_month_day ymd_today{today};
    const int now_year = static_cast<int>(ymd_today.year());
    // An invalid Feb 29 fifty years on converts to Mar 1, as sys_days defines it.
    const auto fifty_years_on = sys_days{ymd_today + years{50}} + floor<seconds>(now - today);
    const auto date = make_time(now_year - now_year % 100 + *yy, *m, *d, *t);
    if (date && *date > fifty_years_on) return make_time(now_year - now_year % 100 + *yy - 100, *m, *d, *t);
    return date;
}

// asctime-date after the day name: SP month SP (2DIGIT / SP 1DIGIT) SP time-of-day SP 4DIGIT
std::optional<sys_seconds> asctime_date(std::string_view s) {
    if (!take(s, " ")) return std::nullopt;
    const auto m = take_name(s, months);
    if (!m || !take(s, " ")) return std::nullopt;
    std::optional<int> d;
    if (take(s, " "))
        d = take_digits(s, 1);
    else
        d = take_digits(s, 2);
    if (!d || !take(s, " ")) return std::nullopt;
    const auto t = take_time(s);
    if (!t || !take(s, " ")) return std::nullopt;
    const auto y = take_digits(s, 4);
    if (!y || !s.empty()) return std::nullopt;
    return make_time(*y, *m, *d, *t);
}

// Any of the three forms, in whole seconds.
std::optional<sys_seconds> parse_date_seconds(std::string_view value, wall_time_point now) {
    std::string_view s = trim(value);
    // Long names first: "Sunday" would otherwise match "Sun" and fail on the comma.
    if (take_name(s, long_days)) return rfc850_date(s, now);
    if (!take_name(s, short_days)) return std::nullopt;
    if (!s.empty() && s.front() == ',') return imf_fixdate(s);
    return asctime_date(s);
}

// date - reference, where the reference is whole seconds plus a sub-second part: 0 when the date is
// not after it, saturated at the largest whole number of seconds a duration holds (as delta-seconds
// are). The difference of two dates in seconds cannot overflow; only the conversion to nanoseconds
// could, and it is bounded first.
duration wait_until(sys_seconds date, sys_seconds reference, duration reference_fraction) {
    constexpr auto max_seconds = duration_cast<seconds>(duration::max());
    const seconds whole = date - reference;
    if (whole <= seconds{0}) return duration{0};
    if (whole >= max_seconds) return duration{max_seconds};
    return duration{whole} - reference_fraction;
}

}  // namespace

std::optional<wall_time_point> parse_http_date(std::string_view value, wall_time_point now) {
    const auto date = parse_date_seconds(value, now);
    if (!date) return std::nullopt;
    return to_wall(*date);
}

std::optional<duration> parse_retry_after(std::string_view value, wall_time_point now) {
    return parse_retry_after(value, now, std::string_view{});
}

std::optional<duration> parse_retry_after(std::string_view value, wall_time_point now, std::string_view date_header) {
    const std::string_view s = trim(value);
    if (all_digits(s)) {
        // Saturate at the largest whole number of seconds a duration can hold.
        constexpr auto max_seconds = duration_cast<seconds>(duration::max()).count();
        seconds::rep secs = 0;
        for (const char c : s) {
            const int digit = c - '0';
            if (secs > (max_seconds - digit) / 10) return duration{seconds{max_seconds}};
            secs = secs * 10 + digit;
        }
        return duration{seconds{secs}};
    }
    if (s.size() > 1 && s.front() == '-' && all_digits(s.substr(1))) return duration{0};
    const auto date = parse_date_seconds(s, now);
    if (!date) return std::nullopt;
    // Both dates come from the server's clock, so their difference does not depend on the skew
    // between the server's clock and ours (RFC 9110 §10.2.3 counts from the response).
    if (const auto sent = parse_date_seconds(date_header, now)) return wait_until(*date, *sent, duration{0});
    const auto now_seconds = floor<seconds>(now);
    return wait_until(*date, now_seconds, now - now_seconds);
}

std::string format_http_date(wall_time_point t) {
    const auto secs = floor<seconds>(t);
    const auto day_point = floor<days>(secs);
    const year_month_day ymd{day_point};
    const hh_mm_ss<seconds> tod{secs - day_point};
    const unsigned wd = weekday{day_point}.c_encoding();
    std::array<char, 40> buf{};
    const int n = std::snprintf(buf.data(), buf.size(), "%s, %02u %s %04d %02d:%02d:%02d GMT",
                                short_days[wd].data(), static_cast<unsigned>(ymd.day()),
                                months[static_cast<unsigned>(ymd.month()) - 1].data(), static_cast<int>(ymd.year()),
                                static_cast<int>(tod.hours().count()), static_cast<int>(tod.minutes().count()),
                                static_cast<int>(tod.seconds().count()));
    return std::string(buf.data(), n > 0 ? static_cast<std::size_t>(n) : 0);
}

}  // namespace faultline::retry
