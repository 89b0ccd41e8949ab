#include "retry_after.hpp"

#include <array>
#include <cstdio>

namespace faultline::faults::detail {

std::string http_date(std::chrono::system_clock::time_point t) {
    using namespace std::chrono;
    static constexpr std::array<const char*, 7> weekdays{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static constexpr std::array<const char*, 12> months{"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    const auto day = floor<days>(t);
    const year_month_day date{day};
    const hh_mm_ss<seconds> clock_time{floor<seconds>(t - day)};
    std::array<char, 40> text{};
    std::snprintf(text.data(), text.size(), "%s, %02u %s %04d %02d:%02d:%02d GMT",
                  weekdays[weekday{day}.c_encoding()], static_cast<unsigned>(date.day()),
                  months[static_cast<unsigned>(date.month()) - 1], static_cast<int>(date.year()),
                  static_cast<int>(clock_time.hours().count()), static_cast<int>(clock_time.minutes().count()),
                  static_cast<int>(clock_time.seconds().count()));
    return text.data();
}

std::string retry_after_value(std::chrono::seconds wait, retry_after_format format,
                              std::chrono::system_clock::time_point now) {
    if (format == retry_after_format::seconds) {
        return std::to_string(wait.count());
    }
    return http_date(std::chrono::ceil<std::chrono::seconds>(now) + wait);
}

}  // namespace faultline::faults::detail
