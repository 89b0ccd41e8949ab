// `faultline list faults|checks`: the registered fault kinds and checks, one per line with what it
// does — the names a scenario's `kind = "..."` and `check = "..."` accept.
#include "commands.hpp"

#include "faultline/faults/kind.hpp"
#include "faultline/checks/check.hpp"

#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace faultline::cli {

namespace {

void print_row(std::string_view name, std::string_view summary, std::size_t width) {
    std::cout << name << std::string(width - name.size() + 2, ' ') << summary << '\n';
}

void list_faults() {
    const auto& kinds = faults::kind_registry::instance().entries();
    std::size_t width = 0;
    for (const auto& k : kinds) width = std::max(width, k.name.size());
    for (const auto& k : kinds) print_row(k.name, k.summary, width);
}

void list_checks() {
    const auto names = harness::check_names();
    std::size_t width = 0;
    for (const auto name : names) width = std::max(width, name.size());
    for (const auto name : names) print_row(name, harness::check_summary(name), width);
}

}  // namespace

void add_list_command(CLI::App& app) {
    auto what = std::make_shared<std::string>();
    CLI::App* cmd = app.add_subcommand("list", "List the fault kinds or the checks a scenario can name");
    cmd->add_option("what", *what, "faults or checks")->required()->check(CLI::IsMember({"faults", "checks"}));
    cmd->callback([what] {
        if (*what == "faults") {
            list_faults();
        } else {
            list_checks();
        }
    });
}

}  // namespace faultline::cli
