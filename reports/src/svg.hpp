// A small SVG writer for the HTML report's charts (internal to reports/src): a chart is a fixed-size
// view box with a plot area inside margins, linear scales from data to pixels, and marks appended
// as text. Marks carry `data-*` attributes (series, bucket, count) so tests and the browser check
// can read the charts back without parsing geometry.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace faultline::reports::detail {

// A pixel coordinate with one decimal, so 10,000-mark charts stay small.
std::string px(double value);

// data → pixels on one axis: [domain_min, domain_max] onto [range_min, range_max]. An empty domain
// maps everything onto range_min.
struct linear_scale {
    double domain_min = 0;
    double domain_max = 1;
    double range_min = 0;
    double range_max = 1;

    double operator()(double value) const;
};

// Round numbers for an axis: about `count` ticks covering [0, max], as multiples of 1, 2 or 5 × 10^k.
double nice_step(double max, int count);

class svg_chart {
public:
    // `kind` becomes data-chart (the browser check and the tests look charts up by it); `label` is
    // the chart's accessible name.
    svg_chart(std::string_view kind, std::string_view label, double width, double height);

    // Appends raw SVG markup (already escaped) inside the chart.
    void add(std::string_view markup) { body_ += markup; }
    // Text at (x, y); `anchor` is start, middle or end. The text is escaped here.
    void text(double x, double y, std::string_view content, std::string_view anchor = "start",
              std::string_view css_class = "axis");
    // A vertical axis at x over the scale's pixel range, a tick and label every `step` units
    // (`unit`, when given, written above it).
    void y_axis(double x, const linear_scale& scale, double step, std::string_view unit);
    // A horizontal time axis in seconds or milliseconds (by the span) along y.
    void time_axis(double y, const linear_scale& scale_ns);
    // A thumbnail's time axis along y: labelled only at 0 and at its end, with the span ("47 ms").
    void time_span_axis(double y, const linear_scale& scale_ns);

    std::string str() const;

private:
    std::string open_;
    std::string body_;
};

}  // namespace faultline::reports::detail
