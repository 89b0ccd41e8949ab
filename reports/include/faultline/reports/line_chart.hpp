// Line charts as one standalone SVG document (charts stacked vertically, styles inline so the file
// stands alone): named series of (x, y) points over linear axes from 0 to a round number above the
// largest value. `faultline simulate` draws its sweeps and storms with it (storm/src/output.cpp);
// it shares the HTML report's SVG primitives (reports/src/svg.hpp).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace faultline::reports {

struct chart_series {
    std::string name;
    std::vector<std::pair<double, double>> points;
};

struct line_chart {
    std::string title;
    std::string x_label;
    std::string y_label;
    std::vector<chart_series> series;
};

std::string line_charts_svg(const std::vector<line_chart>& charts);

}  // namespace faultline::reports
