// The standalone SVG line charts `faultline simulate` writes: one polyline per series at the
// points' pixel positions on axes from 0 to a round number, names escaped, charts stacked.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "faultline/reports/line_chart.hpp"

namespace faultline::reports {
namespace {

using ::testing::HasSubstr;

std::size_t occurrences(const std::string& text, std::string_view what) {
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

TEST(line_charts_svg, draws_each_series_on_round_axes) {
    const std::string svg = line_charts_svg({line_chart{"work", "clients", "calls", {chart_series{"full", {{0, 0}, {100, 45}}},
                                                                                    chart_series{"none", {{0, 0}, {100, 90}}}}}});
    EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"720\" height=\"360\"", 0), 0u);
    EXPECT_EQ(occurrences(svg, "<polyline"), 2u);
    // x 0..100 in steps of 20 onto 70..560 px; y 0..100 in steps of 20 onto 310..40 px.
    EXPECT_THAT(svg, HasSubstr("points=\"70,310 560,188.5 \""));  // (100, 45)
    EXPECT_THAT(svg, HasSubstr("points=\"70,310 560,67 \""));     // (100, 90)
    EXPECT_THAT(svg, HasSubstr(">80</text>"));
    EXPECT_THAT(svg, HasSubstr(">full</text>"));
}

TEST(line_charts_svg, stacks_charts_and_escapes_names) {
    const std::string svg = line_charts_svg({line_chart{"a < b & c", "x", "y", {chart_series{"\"s\"", {{0, 0}, {1, 1}}}}},
                                             line_chart{"second", "x", "y", {}}});
    EXPECT_THAT(svg, HasSubstr("height=\"720\""));
    EXPECT_THAT(svg, HasSubstr("<g transform=\"translate(0,360)\">"));
    EXPECT_THAT(svg, HasSubstr("a &lt; b &amp; c"));
    EXPECT_THAT(svg, HasSubstr("\"s\"</text>"));
}

// x 0..10 in steps of 2 onto 70..560 px (49 px a unit), the plot 270 px high from y = 40.
line_chart with_span(double from, double to) {
    line_chart chart{"load", "time (s)", "attempts", {chart_series{"offered", {{0, 0}, {10, 1}}}}};
    chart.shaded = shaded_span{from, to, "outage", "down"};
    return chart;
}

TEST(line_charts_svg, shades_a_span_behind_the_series_with_a_legend_entry) {
    const std::string svg = line_charts_svg({with_span(2, 4)});
    const std::size_t shaded = svg.find("<rect class=\"shaded-span\" data-from=\"2\" data-to=\"4\" x=\"168\" y=\"40\" "
                                        "width=\"98\" height=\"270\"");
    ASSERT_NE(shaded, std::string::npos);
    EXPECT_LT(shaded, svg.find("<polyline"));
    // Its legend entry follows the one series': a swatch at 572 px, the name at 598 px on the second line.
    EXPECT_THAT(svg, HasSubstr("<rect x=\"572\" y=\"62\" width=\"20\" height=\"10\""));
    EXPECT_THAT(svg, HasSubstr("<text x=\"598\" y=\"72\">outage</text>\n<text x=\"598\" y=\"86\" font-size=\"11\" "
                               "fill=\"#555\">down</text>"));
}

TEST(line_charts_svg, clips_the_shaded_span_to_the_axis) {
    EXPECT_THAT(line_charts_svg({with_span(8, 30)}), HasSubstr("data-from=\"8\" data-to=\"30\" x=\"462\" y=\"40\" width=\"98\""));
    const std::string outside = line_charts_svg({with_span(20, 30)});
    EXPECT_EQ(occurrences(outside, "shaded-span"), 0u);
    EXPECT_EQ(occurrences(outside, "outage"), 0u);
}

}  // namespace
}  // namespace faultline::reports
