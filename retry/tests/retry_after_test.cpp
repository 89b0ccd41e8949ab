#include "faultline/retry/retry_after.hpp"

#include <gtest/gtest.h>

namespace faultline::retry {
namespace {

using namespace std::chrono_literals;

// Sun, 06 Nov 1994 08:49:37 GMT (RFC 9110's example date).
const wall_time_point example_date{std::chrono::seconds{784111777}};
const wall_time_point ten_seconds_before = example_date - 10s;

TEST(RetryAfter, DeltaSeconds) {
    const auto now = example_date;
    EXPECT_EQ(parse_retry_after("120", now), duration{120s});
    EXPECT_EQ(parse_retry_after("0", now), duration{0s});
    EXPECT_EQ(parse_retry_after("007", now), duration{7s});
    EXPECT_EQ(parse_retry_after(" \t2 ", now), duration{2s});
}

TEST(RetryAfter, HugeDeltaSaturates) {
    const auto max_seconds = std::chrono::duration_cast<std::chrono::seconds>(duration::max());
    EXPECT_EQ(parse_retry_after("9223372036", example_date), duration{max_seconds});
    EXPECT_EQ(parse_retry_after("99999999999999999999999999999999", example_date), duration{max_seconds});
    EXPECT_EQ(parse_retry_after("9223372035", example_date), duration{9223372035s});
}

TEST(RetryAfter, NegativeIsZero) {
    EXPECT_EQ(parse_retry_after("-5", example_date), duration{0});
    EXPECT_EQ(parse_retry_after("-99999999999999999999", example_date), duration{0});
}

TEST(RetryAfter, GarbageIsIgnored) {
    for (const auto v : {"", " ", "abc", "5s", "1.5", "+5", "-", "--5", "5 5", "0x10", "Sun", "Sun,"})
        EXPECT_EQ(parse_retry_after(v, example_date), std::nullopt) << '"' << v << '"';
}

TEST(RetryAfter, ImfFixdate) {
    EXPECT_EQ(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", ten_seconds_before), duration{10s});
}

TEST(RetryAfter, ObsoleteRfc850Date) {
    EXPECT_EQ(parse_retry_after("Sunday, 06-Nov-94 08:49:37 GMT", ten_seconds_before), duration{10s});
}

TEST(RetryAfter, AsctimeDate) {
    EXPECT_EQ(parse_retry_after("Sun Nov  6 08:49:37 1994", ten_seconds_before), duration{10s});
    EXPECT_EQ(parse_retry_after("Sun Nov 16 08:49:37 1994", ten_seconds_before), duration{10s + 240h});
}

TEST(RetryAfter, PastDateIsZero) {
    EXPECT_EQ(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", example_date + 1h), duration{0});
    EXPECT_EQ(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", example_date), duration{0});
}

TEST(RetryAfter, BadDatesAreIgnored) {
    for (const auto v : {
             "Sun, 30 Feb 1994 08:49:37 GMT",  // no such day
             "Sun, 29 Feb 1995 08:49:37 GMT",  // not a leap year
             "Sun, 06 Nov 1994 24:00:00 GMT",  // hour out of range
             "Sun, 06 Nov 1994 08:60:00 GMT",  // minute out of range
             "Sun, 06 Nov 1994 08:49:61 GMT",  // second out of range
             "Sun, 06 nov 1994 08:49:37 GMT",  // month names are case-sensitive
             "Sun, 6 Nov 1994 08:49:37 GMT",   // one-digit day in IMF-fixdate
             "Sun, 06 Nov 1994 08:49:37",      // no GMT
             "Sun, 06 Nov 1994 08:49:37 UTC",  // only GMT
             "Sun, 06 Nov 1994 08:49:37 GMT x",
             "Sun, 00 Nov 1994 08:49:37 GMT",
             "Sno, 06 Nov 1994 08:49:37 GMT",
             "Sun 06 Nov 1994 08:49:37 GMT",
             "Sunday, 06-Nov-1994 08:49:37 GMT",  // RFC 850 has a two-digit year
             "Sun Nov 6 08:49:37 1994",           // asctime pads the day with a space
             "Sun Nov  6 08:49:37 94",
         })
        EXPECT_EQ(parse_retry_after(v, example_date), std::nullopt) << v;
}

TEST(RetryAfter, LeapDayAndLeapSecondAccepted) {
    const auto d = parse_http_date("Thu, 29 Feb 2024 12:00:00 GMT", example_date);
    ASSERT_TRUE(d);
    EXPECT_EQ(std::chrono::duration_cast<std::chrono::seconds>(d->time_since_epoch()).count(), 1709208000);
    EXPECT_TRUE(parse_http_date("Sat, 31 Dec 2016 23:59:60 GMT", example_date));
}

TEST(RetryAfter, Rfc850TwoDigitYearsFollowRfc9110) {
    const wall_time_point now_2026{std::chrono::seconds{1'780'000'000}};  // 2026-05-28
    const auto d1 = parse_http_date("Friday, 01-Jan-99 00:00:00 GMT", now_2026);  // 2099 is > 50 years ahead
    ASSERT_TRUE(d1);
    EXPECT_EQ(format_http_date(*d1), "Fri, 01 Jan 1999 00:00:00 GMT");
    const auto d2 = parse_http_date("Tuesday, 01-Jan-30 00:00:00 GMT", now_2026);
    ASSERT_TRUE(d2);
    EXPECT_EQ(format_http_date(*d2), "Tue, 01 Jan 2030 00:00:00 GMT");
}

TEST(RetryAfter, DatesOutsideTheNanosecondRangeSaturate) {
    // A wall_time_point holds about 1677..2262; the date itself is read in whole seconds, so a far
    // future date is a huge wait (then refused by max_retry_after), never a wrapped one.
    const auto max_seconds = std::chrono::duration_cast<std::chrono::seconds>(duration::max());
    EXPECT_EQ(parse_retry_after("Fri, 31 Dec 9999 23:59:59 GMT", example_date), duration{max_seconds});
    // Past 2262 but within 292 years of now: exact, although the date itself is not a wall_time_point.
    const std::chrono::sys_seconds in_2263{std::chrono::sys_days{std::chrono::year{2263} / 1 / 1}};
    EXPECT_EQ(parse_retry_after("Sat, 01 Jan 2263 00:00:00 GMT", example_date),
              duration{in_2263 - std::chrono::sys_seconds{784111777s}});
    EXPECT_EQ(parse_retry_after("Fri, 31 Dec 9999 23:59:59 GMT", example_date + 500ms),
              duration{max_seconds});
    EXPECT_EQ(parse_retry_after("Thu, 01 Jan 1000 00:00:00 GMT", example_date), duration{0});
    EXPECT_EQ(parse_retry_after("Mon, 01 Jan 0001 00:00:00 GMT", example_date), duration{0});
    // parse_http_date saturates to the representable range instead of wrapping.
    EXPECT_EQ(parse_http_date("Fri, 31 Dec 9999 23:59:59 GMT", example_date), wall_time_point::max());
    EXPECT_EQ(parse_http_date("Thu, 01 Jan 1000 00:00:00 GMT", example_date), wall_time_point::min());
}

TEST(RetryAfter, SubSecondNowIsSubtractedExactly) {
    EXPECT_EQ(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", ten_seconds_before + 250ms), duration{9750ms});
}

TEST(RetryAfter, Rfc850FiftyYearRuleIsByTimestamp) {
    // 2026-12-03 12:00:00 UTC: "31-Dec-76" would be 50 years and 28 days ahead, so it is 1976;
    // "03-Dec-76 12:00:00" is exactly 50 years ahead, not more, so it stays 2076.
    const wall_time_point now{std::chrono::sys_days{std::chrono::year{2026} / 12 / 3} + 12h};
    const auto far = parse_http_date("Friday, 31-Dec-76 23:59:59 GMT", now);
    ASSERT_TRUE(far);
    EXPECT_EQ(format_http_date(*far), "Fri, 31 Dec 1976 23:59:59 GMT");
    const auto exactly_fifty = parse_http_date("Thursday, 03-Dec-76 12:00:00 GMT", now);
    ASSERT_TRUE(exactly_fifty);
    EXPECT_EQ(format_http_date(*exactly_fifty), "Thu, 03 Dec 2076 12:00:00 GMT");
    const auto one_second_more = parse_http_date("Friday, 03-Dec-76 12:00:01 GMT", now);
    ASSERT_TRUE(one_second_more);
    EXPECT_EQ(format_http_date(*one_second_more), "Fri, 03 Dec 1976 12:00:01 GMT");
}

TEST(RetryAfter, ResponseDateIsTheReferenceWhenValid) {
    // The server's clock wrote both dates; a client clock 1 h ahead must not shorten the wait to 0,
    // and one 1 h behind must not lengthen it by an hour.
    const auto retry_at = "Sun, 06 Nov 1994 08:49:37 GMT";
    const auto sent_at = "Sun, 06 Nov 1994 08:49:07 GMT";
    EXPECT_EQ(parse_retry_after(retry_at, example_date + 1h, sent_at), duration{30s});
    EXPECT_EQ(parse_retry_after(retry_at, example_date - 1h, sent_at), duration{30s});
    EXPECT_EQ(parse_retry_after(retry_at, example_date, "Sun, 06 Nov 1994 08:50:00 GMT"), duration{0});
    // Without a usable Date the client's clock is the reference; delta-seconds ignore both.
    EXPECT_EQ(parse_retry_after(retry_at, ten_seconds_before, ""), duration{10s});
    EXPECT_EQ(parse_retry_after(retry_at, ten_seconds_before, "yesterday"), duration{10s});
    EXPECT_EQ(parse_retry_after("120", example_date + 1h, sent_at), duration{120s});
    // The Date may be in any of the three forms, and itself beyond 2262.
    EXPECT_EQ(parse_retry_after(retry_at, example_date, "Sun Nov  6 08:49:27 1994"), duration{10s});
    EXPECT_EQ(parse_retry_after("Fri, 31 Dec 9999 23:59:59 GMT", example_date, "Fri, 31 Dec 9999 23:59:49 GMT"),
              duration{10s});
}

TEST(RetryAfter, FormatRoundTrips) {
    EXPECT_EQ(format_http_date(example_date), "Sun, 06 Nov 1994 08:49:37 GMT");
    EXPECT_EQ(format_http_date(example_date + 999ms), "Sun, 06 Nov 1994 08:49:37 GMT");
    const wall_time_point t{std::chrono::seconds{1'700'000'000}};
    const auto text = format_http_date(t);
    EXPECT_EQ(text, "Tue, 14 Nov 2023 22:13:20 GMT");
    EXPECT_EQ(parse_http_date(text, t), t);
}

}  // namespace
}  // namespace faultline::retry
