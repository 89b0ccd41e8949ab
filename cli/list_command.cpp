// `faultline list faults|checks|drivers|reports|toxics`: what each registry holds, one per line with
// what it does — the names a scenario's `kind = "..."`, `check = "..."` and `[client] driver = "..."`,
// `--report FORMAT:PATH`, and a `proxy --mode tcp` toxics file's `kind = "..."`, accept.
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

void print_rows(const std::vector<row>& rows) {
    std::size_t width = 0;
    for (const auto& [name, summary] : rows) width = std::max(width, name.size());
    for (const auto& [name, summary] : rows) {
        std::cout << name << std::string(width - name.size() + 2, ' ') << summary << '\n';
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
    for (const std::string_view name : harness::check_names()) rows.emplace_back(name, harness::check_summary(name));
    return rows;
}

}  // namespace

void add_list_command(CLI::App& app) {
    auto what = std::make_shared<std::string>();
    CLI::App* cmd = app.add_subcommand("list", "List the fault kinds, checks, client drivers, report formats or TCP toxics faultline knows");
    cmd->add_option("what", *what, "faults, checks, drivers, reports or toxics")
        ->required()
        ->check(CLI::IsMember({"faults", "checks", "drivers", "reports", "toxics"}));
    cmd->callback([what] {
        if (*what == "faults") print_rows(rows_of(faults::kind_registry::instance()));
        if (*what == "checks") print_rows(check_rows());
        if (*what == "drivers") print_rows(rows_of(harness::driver_registry::instance()));
        if (*what == "reports") print_rows(rows_of(reports::report_registry::instance()));
        if (*what == "toxics") print_rows(rows_of(tcp::toxic_registry::instance()));
    });
}

}  // namespace faultline::cli
