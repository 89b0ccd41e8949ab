// Running a scenario file from a test in one call: the same loading, run and checks as
// `faultline run FILE`, returning the run record (verdicts included) for PassesAllChecks() or any
// matcher of matchers.hpp.
//
//   EXPECT_THAT(faultline::testing::run_scenario_file("suites/overload.good.toml"),
//               faultline::testing::PassesAllChecks());
#pragma once

#include <string>
#include <string_view>

#include "faultline/record/run_record.hpp"
#include "faultline/runner/runner.hpp"

namespace faultline::testing {

// Throws std::invalid_argument listing every problem (file:line:column) when the scenario does not
// load; a run that fails in the harness comes back with `harness_error` set (PassesAllChecks says so).
record::run_record run_scenario_file(const std::string& path, const runner::run_options& options = {});
// The same for scenario text; `name` stands in for the file name in errors and the record.
record::run_record run_scenario_text(std::string_view toml, const std::string& name = "scenario.toml",
                                      const runner::run_options& options = {});

}  // namespace faultline::testing
