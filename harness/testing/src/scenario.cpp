#include "faultline/testing/scenario.hpp"

#include "errors.hpp"

#include "faultline/runner/scenario.hpp"

namespace faultline::testing {

namespace {

harness::run_record run_loaded(harness::scenario_result loaded, const std::string& where,
                               const harness::run_options& options) {
    if (!loaded.ok()) detail::throw_config_errors("run_scenario: " + where + " does not load:", loaded.errors);
    return harness::run_scenario(*loaded.value, options);
}

}  // namespace

harness::run_record run_scenario_file(const std::string& path, const harness::run_options& options) {
    return run_loaded(harness::load_scenario_file(path), path, options);
}

harness::run_record run_scenario_text(std::string_view toml, const std::string& name,
                                      const harness::run_options& options) {
    return run_loaded(harness::parse_scenario(toml, name), name, options);
}

}  // namespace faultline::testing
