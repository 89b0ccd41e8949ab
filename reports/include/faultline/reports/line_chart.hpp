// Line charts as one standalone SVG document (charts stacked vertically, styles inline so the file
// stands alone): named series of (x, y) points over linear axes from 0 to a round number above the
// largest value, optionally with a span of x shaded. `faultline simulate` draws its sweeps and
// storms with it (storm/src/output.cpp); it shares the HTML report's SVG primitives (reports/src/svg.hpp).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace faultline::reports {

struct chart_series {
    std::string name;
    std::vector<std::pair<double, double>> points;
};

// A span of x shaded behind the series (a storm's outage), named in the legend with a note on the
// line below ("outage" / "capacity x 0.10"), as the legend column is narrow.
struct shaded_span {
    double from = 0;
    double to = 0;
    std::string name;
    std::string note;
};

struct line_chart {
    std::string title;
    std::string x_label;
    std::string y_label;
    std::vector<chart_series> series;
    std::optional<shaded_span> shaded = std::nullopt;
};

std::string line_charts_svg(const std::vector<line_chart>& charts);

}  // namespace faultline::reports
