// `faultline validate PATH...`: loads every scenario file (folders are searched for *.toml) with the
// same strict loader `run` uses, prints every problem as file:line:column, and runs nothing.
// Exit 0 when every file is valid, 2 otherwise.
#include "commands.hpp"

#include "faultline/runner/scenario.hpp"

#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace faultline::cli {

namespace {

void run_validate(const std::vector<std::string>& paths) {
    const runner::scenario_files found = runner::collect_scenario_files(paths);
    std::size_t bad = found.errors.size();
    for (const auto& e : found.errors) std::cerr << e.to_string() << '\n';
    for (const std::string& file : found.files) {
        const runner::scenario_result loaded = runner::load_scenario_file(file);
        if (loaded.ok()) {
            std::cout << "ok    " << file << " (" << loaded.value->name << ")\n";
            continue;
        }
        ++bad;
        for (const auto& e : loaded.errors) std::cerr << e.to_string() << '\n';
    }
    std::cout << found.files.size() << " file(s), " << bad << " with errors\n";
    if (bad != 0) throw CLI::RuntimeError(exit_bad_input);
}

}  // namespace

void add_validate_command(CLI::App& app) {
    auto paths = std::make_shared<std::vector<std::string>>();
    CLI::App* cmd = app.add_subcommand("validate", "Check scenario files strictly without running them (exit 0 or 2)");
    cmd->add_option("paths", *paths, "Scenario files or folders of *.toml files")->required();
    cmd->callback([paths] { run_validate(*paths); });
}

}  // namespace faultline::cli
