// `faultline list [faults|checks|drivers|reports|toxics]`: what each registry holds (every one when none
// is named), one per line with what it does — the names a scenario's `kind = "..."`, `check = "..."`
// and `[client] driver = "..."`, `--report FORMAT:PATH`, and a `proxy --mode tcp` toxics file's
// `kind = "..."`, accept.
#include "commands.hpp"

#include "faultline/checks/check.hpp"
#include "faultline/drivers/driver.hpp"
#include "faultline/faults/kind.hpp"
#include "faultline/reports/writer.hpp"
#include "faultline/tcp/toxic.hpp"

#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace faultline::cli {

namespace {

using row = std::pair<std::string_view, std::string_view>;  // name, summary

void print_rows(const std::vector<row>& rows, std::string_view indent = "") {
    std::size_t width = 0;
    for (const auto& [name, summary] : rows) width = std::max(width, name.size());
    for (const auto& [name, summary] : rows) {
        std::cout << indent << name << std::string(width - name.size() + 2, ' ') << summary << '\n';
    }
}

template <class Entry>
std::vector<row> rows_of(const core::registry<Entry>& registry) {
    std::vector<row> rows;
    for (const Entry& e : registry.entries()) rows.emplace_back(e.name, e.summary);
    return rows;
}

std::vector<row> check_rows() {
    std::vector<row> rows;
    for (const std::string_view name : checks::check_names()) rows.emplace_back(name, checks::check_summary(name));
    return rows;
}

}  // namespace

void add_list_command(CLI::App& app) {
    auto what = std::make_shared<std::string>();
    CLI::App* cmd = app.add_subcommand("list", "List the fault kinds, checks, client drivers, report formats or TCP toxics faultline knows");
    cmd->add_option("what", *what, "faults, checks, drivers, reports or toxics (default: all of them)")
        ->check(CLI::IsMember({"faults", "checks", "drivers", "reports", "toxics"}));
    cmd->callback([what] {
        const std::pair<std::string_view, std::vector<row>> lists[] = {
            {"faults", rows_of(faults::kind_registry::instance())},
            {"checks", check_rows()},
            {"drivers", rows_of(drivers::driver_registry::instance())},
            {"reports", rows_of(reports::report_registry::instance())},
            {"toxics", rows_of(tcp::toxic_registry::instance())},
        };
        if (!what->empty()) {
            for (const auto& [name, rows] : lists) {
                if (name == *what) print_rows(rows);
            }
            return;
        }
        // Everything, each list under its name, so a first look shows what there is to ask for.
        bool first = true;
        for (const auto& [name, rows] : lists) {
            std::cout << (first ? "" : "\n") << name << " (faultline list " << name << "):\n";
            print_rows(rows, "  ");
            first = false;
        }
    });
}

}  // namespace faultline::cli
