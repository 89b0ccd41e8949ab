// Writers for simulation results: a console table, CSV, JSON (Boost.JSON) and SVG line charts
// (work and completion against clients, one line per strategy, as in the AWS blog; offered load,
// goodput, retries and queue over time for the capacity model), the charts drawn by reports/'s
// line_chart.hpp. Pure functions of a result.
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

}  // namespace faultline::storm
