#include "faultline/testing/scenario.hpp"

#include "errors.hpp"

#include "faultline/runner/scenario.hpp"

namespace faultline::testing {

namespace {

record::run_record run_loaded(runner::scenario_result loaded, const std::string& where,
                               const runner::run_options& options) {
    if (!loaded.ok()) detail::throw_config_errors("run_scenario: " + where + " does not load:", loaded.errors);
    return runner::run_scenario(*loaded.value, options);
}

}  // namespace

record::run_record run_scenario_file(const std::string& path, const runner::run_options& options) {
    return run_loaded(runner::load_scenario_file(path), path, options);
}

record::run_record run_scenario_text(std::string_view toml, const std::string& name,
                                      const runner::run_options& options) {
    return run_loaded(runner::parse_scenario(toml, name), name, options);
}

}  // namespace faultline::testing
