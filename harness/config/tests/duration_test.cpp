#include "faultline/config/duration.hpp"

#include <gtest/gtest.h>

namespace faultline::config {
namespace {

using namespace std::chrono_literals;

TEST(parse_duration, reads_every_unit) {
    EXPECT_EQ(parse_duration("7ns").value, 7ns);
    EXPECT_EQ(parse_duration("7us").value, 7us);
    EXPECT_EQ(parse_duration("250ms").value, 250ms);
    EXPECT_EQ(parse_duration("2s").value, 2s);
    EXPECT_EQ(parse_duration("3m").value, 3min);
    EXPECT_EQ(parse_duration("1h").value, 1h);
    EXPECT_EQ(parse_duration("0s").value, 0ns);
}

TEST(parse_duration, rejects_bad_text_with_a_reason) {
    for (const char* text : {"", "5", "abc", "-1s", "+1s", "1.5s", "1 s", "s", "10sec", "1S", "1ms "}) {
        const parsed_duration parsed = parse_duration(text);
        EXPECT_FALSE(parsed) << text;
        EXPECT_FALSE(parsed.error.empty()) << text;
    }
    EXPECT_NE(parse_duration("5").error.find("missing unit"), std::string::npos);
    EXPECT_NE(parse_duration("5x").error.find("unknown unit"), std::string::npos);
}

TEST(parse_duration, rejects_overflow_and_accepts_the_largest_value) {
    EXPECT_EQ(parse_duration("9223372036854775807ns").value, std::chrono::nanoseconds::max());
    EXPECT_FALSE(parse_duration("9223372036854775808ns"));
    EXPECT_EQ(parse_duration("9223372036s").value, 9223372036s);
    EXPECT_FALSE(parse_duration("9223372037s"));
    EXPECT_NE(parse_duration("99999999999999999999999h").error.find("too large"), std::string::npos);
    // The hour count nearest the edge: 2562047h fits (a fault wait that long is refused by the
    // rules' max_fault_wait instead), one more overflows and says what the most is.
    EXPECT_EQ(parse_duration("2562047h").value, std::chrono::hours{2562047});
    const parsed_duration over = parse_duration("2562048h");
    EXPECT_FALSE(over);
    EXPECT_NE(over.error.find("at most 9223372036854775807ns"), std::string::npos) << over.error;
}

TEST(format_duration, round_trips) {
    EXPECT_EQ(format_duration(0ns), "0s");
    EXPECT_EQ(format_duration(1500ms), "1500ms");
    EXPECT_EQ(format_duration(2s), "2s");
    EXPECT_EQ(format_duration(120s), "2m");
    EXPECT_EQ(format_duration(-3ms), "-3ms");
    for (std::chrono::nanoseconds d : std::initializer_list<std::chrono::nanoseconds>{1ns, 999us, 61s, std::chrono::nanoseconds::max()}) {
        EXPECT_EQ(parse_duration(format_duration(d)).value, d);
    }
}

}  // namespace
}  // namespace faultline::config
