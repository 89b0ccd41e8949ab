#include "faultline/reports/line_chart.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string_view>

#include "svg.hpp"
#include "text.hpp"

namespace faultline::reports {

namespace {

constexpr std::array<std::string_view, 6> palette{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"};
constexpr int ticks = 5;  // about this many steps on each axis

// Steps of a round size covering [0, max]: the axis ends at the first step at or above max.
int steps_to(double max, double step) { return std::max(1, static_cast<int>(std::ceil(max / step - 1e-9))); }

std::string tick_label(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%g", value);
    return buffer;
}

std::string text(double x, double y, std::string_view content, std::string_view extra = "") {
    return "<text x=\"" + detail::px(x) + "\" y=\"" + detail::px(y) + "\"" + std::string(extra) + ">" +
           detail::xml_escape(content, false) + "</text>\n";
}

constexpr double top = 40;  // the plot's top edge

// The baseline of the n-th legend entry: the series in order, then the shaded span.
double legend_y(std::size_t n) { return top + 14 + 18 * static_cast<double>(n); }

// The span clipped to the x axis, drawn before the series so the lines stay on top, and its legend
// entry at (legend_x, ly).
std::string shaded_span_svg(const shaded_span& span, const detail::linear_scale& sx, double plot_h, double legend_x,
                            double ly) {
    using detail::px;
    const double from = sx(std::max(span.from, sx.domain_min));
    const double to = sx(std::min(span.to, sx.domain_max));
    if (to <= from) return "";
    constexpr std::string_view fill = " fill=\"#d62728\" fill-opacity=\"0.12\"";
    return "<rect class=\"shaded-span\" data-from=\"" + tick_label(span.from) + "\" data-to=\"" + tick_label(span.to) +
           "\" x=\"" + px(from) + "\" y=\"" + px(top) + "\" width=\"" + px(to - from) + "\" height=\"" + px(plot_h) +
           "\"" + std::string(fill) + "/>\n" + "<rect x=\"" + px(legend_x) + "\" y=\"" + px(ly - 10) +
           "\" width=\"20\" height=\"10\"" + std::string(fill) + "/>\n" + text(legend_x + 26, ly, span.name) +
           text(legend_x + 26, ly + 14, span.note, " font-size=\"11\" fill=\"#555\"");
}

}  // namespace

std::string line_charts_svg(const std::vector<line_chart>& charts) {
    using detail::px;
    constexpr double width = 720, height = 360, left = 70, right = 160 /* the legend */, bottom = 50;
    const double plot_w = width - left - right;
    const double plot_h = height - top - bottom;
    std::string out = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + px(width) + "\" height=\"" +
                      px(height * static_cast<double>(charts.size())) + "\" font-family=\"sans-serif\" font-size=\"12\">\n";
    for (std::size_t c = 0; c < charts.size(); ++c) {
        const line_chart& chart = charts[c];
        double x_max = 0;
        double y_max = 0;
        for (const chart_series& s : chart.series) {
            for (const auto& [x, y] : s.points) {
                x_max = std::max(x_max, x);
                y_max = std::max(y_max, y);
            }
        }
        const double x_step = detail::nice_step(x_max, ticks);
        const double y_step = detail::nice_step(y_max, ticks);
        const int x_steps = steps_to(x_max, x_step);
        const int y_steps = steps_to(y_max, y_step);
        const detail::linear_scale sx{0, x_step * x_steps, left, left + plot_w};
        const detail::linear_scale sy{0, y_step * y_steps, top + plot_h, top};
        out += "<g transform=\"translate(0," + px(height * static_cast<double>(c)) + ")\">\n";
        out += text(width / 2, 20, chart.title, " text-anchor=\"middle\" font-size=\"14\"");
        out += "<rect x=\"" + px(left) + "\" y=\"" + px(top) + "\" width=\"" + px(plot_w) + "\" height=\"" + px(plot_h) +
               "\" fill=\"none\" stroke=\"#999\"/>\n";
        if (chart.shaded) out += shaded_span_svg(*chart.shaded, sx, plot_h, width - right + 12, legend_y(chart.series.size()));
        for (int tick = 0; tick <= x_steps; ++tick) {
            const double fx = x_step * tick;
            out += text(sx(fx), top + plot_h + 16, tick_label(fx), " text-anchor=\"middle\"");
        }
        for (int tick = 0; tick <= y_steps; ++tick) {
            const double fy = y_step * tick;
            out += text(left - 6, sy(fy) + 4, tick_label(fy), " text-anchor=\"end\"");
            out += "<line x1=\"" + px(left) + "\" x2=\"" + px(left + plot_w) + "\" y1=\"" + px(sy(fy)) + "\" y2=\"" +
                   px(sy(fy)) + "\" stroke=\"#eee\"/>\n";
        }
        out += text(left + plot_w / 2, height - 12, chart.x_label, " text-anchor=\"middle\"");
        out += "<text transform=\"translate(16," + px(top + plot_h / 2) + ") rotate(-90)\" text-anchor=\"middle\">" +
               detail::xml_escape(chart.y_label, false) + "</text>\n";
        for (std::size_t s = 0; s < chart.series.size(); ++s) {
            const std::string colour(palette[s % palette.size()]);
            out += "<polyline fill=\"none\" stroke=\"" + colour + "\" stroke-width=\"1.5\" points=\"";
            for (const auto& [x, y] : chart.series[s].points) out += px(sx(x)) + "," + px(sy(y)) + " ";
            out += "\"/>\n";
            const double ly = legend_y(s);
            out += "<line x1=\"" + px(width - right + 12) + "\" x2=\"" + px(width - right + 32) + "\" y1=\"" +
                   px(ly - 4) + "\" y2=\"" + px(ly - 4) + "\" stroke=\"" + colour + "\" stroke-width=\"2\"/>\n";
            out += text(width - right + 38, ly, chart.series[s].name);
        }
        out += "</g>\n";
    }
    return out + "</svg>\n";
}

}  // namespace faultline::reports
