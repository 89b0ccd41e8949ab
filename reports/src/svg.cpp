#include "svg.hpp"

#include <cmath>
#include <cstdio>

#include "text.hpp"

namespace faultline::reports::detail {

std::string px(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.1f", value);
    std::string out = buffer;
    if (out.size() > 2 && out.compare(out.size() - 2, 2, ".0") == 0) out.resize(out.size() - 2);
    if (out == "-0") out = "0";
    return out;
}

double linear_scale::operator()(double value) const {
    if (domain_max <= domain_min) return range_min;
    return range_min + (value - domain_min) / (domain_max - domain_min) * (range_max - range_min);
}

double nice_step(double max, int count) {
    if (max <= 0 || count <= 0) return 1;
    const double raw = max / count;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    for (const double m : {1.0, 2.0, 5.0}) {
        if (raw <= m * magnitude) return m * magnitude;
    }
    return 10 * magnitude;
}

svg_chart::svg_chart(std::string_view kind, std::string_view label, double width, double height) {
    open_ = "<svg class=\"chart\" data-chart=\"" + xml_escape(kind, true) + "\" role=\"img\" aria-label=\"" +
            xml_escape(label, true) + "\" viewBox=\"0 0 " + px(width) + " " + px(height) + "\" width=\"" + px(width) +
            "\" height=\"" + px(height) + "\" xmlns=\"http://www.w3.org/2000/svg\">";
}

void svg_chart::text(double x, double y, std::string_view content, std::string_view anchor,
                     std::string_view css_class) {
    body_ += "<text x=\"" + px(x) + "\" y=\"" + px(y) + "\" text-anchor=\"" + std::string(anchor) + "\" class=\"" +
             std::string(css_class) + "\">" + xml_escape(content, false) + "</text>";
}

namespace {

std::string tick_label(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%g", value);
    return buffer;
}

}  // namespace

void svg_chart::y_axis(double x, const linear_scale& scale, double step, std::string_view unit) {
    body_ += "<line class=\"frame\" x1=\"" + px(x) + "\" x2=\"" + px(x) + "\" y1=\"" + px(scale.range_min) +
             "\" y2=\"" + px(scale.range_max) + "\"/>";
    int ticks = 0;
    for (double v = scale.domain_min; v <= scale.domain_max + step * 1e-9 && ticks < 12; v += step, ++ticks) {
        const double y = scale(v);
        body_ += "<line class=\"grid\" x1=\"" + px(x) + "\" x2=\"" + px(x - 4) + "\" y1=\"" + px(y) + "\" y2=\"" +
                 px(y) + "\"/>";
        text(x - 6, y + 4, tick_label(v), "end");
    }
    if (!unit.empty()) text(2, scale.range_max - 10, unit, "start");
}

void svg_chart::time_axis(double y, const linear_scale& scale_ns) {
    const double span_ns = scale_ns.domain_max - scale_ns.domain_min;
    const bool in_seconds = span_ns >= 2e9;
    const double unit_ns = in_seconds ? 1e9 : 1e6;
    const double step = nice_step(span_ns / unit_ns, 8);
    body_ += "<line class=\"frame\" x1=\"" + px(scale_ns.range_min) + "\" x2=\"" + px(scale_ns.range_max) +
             "\" y1=\"" + px(y) + "\" y2=\"" + px(y) + "\"/>";
    int ticks = 0;
    for (double v = 0; v * unit_ns <= span_ns + 1 && ticks < 12; v += step, ++ticks) {
        const double x = scale_ns(scale_ns.domain_min + v * unit_ns);
        body_ += "<line class=\"grid\" x1=\"" + px(x) + "\" x2=\"" + px(x) + "\" y1=\"" + px(y) + "\" y2=\"" +
                 px(y + 4) + "\"/>";
        // The last label would be cut at the chart's right edge if centred there.
        const bool at_edge = x > scale_ns.range_max - 20;
        text(x, y + 16, tick_label(v) + (in_seconds ? " s" : " ms"), at_edge ? "end" : "middle");
    }
}

void svg_chart::time_span_axis(double y, const linear_scale& scale_ns) {
    const double span_ns = scale_ns.domain_max - scale_ns.domain_min;
    body_ += "<line class=\"frame\" x1=\"" + px(scale_ns.range_min) + "\" x2=\"" + px(scale_ns.range_max) +
             "\" y1=\"" + px(y) + "\" y2=\"" + px(y) + "\"/>";
    char end[32];
    // Two or three significant digits: "4.7 ms", "47 ms", "1.2 s".
    if (span_ns >= 1e9) {
        std::snprintf(end, sizeof end, "%.2g s", span_ns / 1e9);
    } else {
        std::snprintf(end, sizeof end, span_ns >= 1e7 ? "%.0f ms" : "%.2g ms", span_ns / 1e6);
    }
    text(scale_ns.range_min, y + 14, "0", "middle");
    text(scale_ns.range_max, y + 14, end, "end");
}

std::string svg_chart::str() const { return open_ + body_ + "</svg>"; }

}  // namespace faultline::reports::detail
