// Writers for simulation results: a console table, CSV, JSON (Boost.JSON) and SVG line charts
// (work and completion against clients, one line per strategy, as in the AWS blog; offered load,
// goodput, retries and queue over time for the capacity model). Pure functions of a result.
//
// The SVG charts live here, not in reports/, because reports/ renders run records; if charts are
// to be shared with the HTML report they should move there (docs/storms.md).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "faultline/storm/capacity.hpp"
#include "faultline/storm/occ.hpp"

namespace faultline::storm {

void write_occ_table(std::ostream& out, const occ_sweep_config& config, const occ_sweep_result& result);
void write_occ_csv(std::ostream& out, const occ_sweep_result& result);
void write_occ_json(std::ostream& out, const occ_sweep_config& config, const occ_sweep_result& result);
void write_occ_svg(std::ostream& out, const occ_sweep_result& result);

void write_capacity_table(std::ostream& out, const std::string& scenario, const capacity_config& config,
                          const capacity_result& result);
void write_capacity_csv(std::ostream& out, const capacity_config& config, const capacity_result& result);
void write_capacity_json(std::ostream& out, const std::string& scenario, const capacity_config& config,
                         const capacity_result& result);
void write_capacity_svg(std::ostream& out, const capacity_config& config, const capacity_result& result);

// One line chart: named series of (x, y) points, linear axes from 0 to the largest value.
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
// Charts stacked vertically in one SVG document.
void write_svg(std::ostream& out, const std::vector<line_chart>& charts);

}  // namespace faultline::storm
