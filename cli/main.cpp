// `faultline`: wires the subcommands (commands.hpp) to CLI11 and maps errors to exit codes. The
// examples in each subcommand's --help are kept here, next to each other, so the help reads as one
// manual (the man page is generated from it: packaging/faultline-man.sh).
#include "commands.hpp"

#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>
#include <string_view>

namespace {

constexpr std::string_view exit_codes = R"(
Exit codes (every command):
  0    passed: every check held
  1    a check failed
  2    bad usage, scenario, rules file or journal: nothing ran
  3    the harness itself failed (bind, I/O, journal overflow, client driver)
  4    no check failed, but one had too little evidence to judge
  130  interrupted by SIGINT (Ctrl-C); 143 by SIGTERM)";

struct subcommand_examples {
    std::string_view name;
    std::string_view examples;
};

constexpr subcommand_examples examples[] = {
    {"serve", R"(
Examples:
  faultline serve --rules rules.toml --journal journal.jsonl
  faultline serve --rules rules.toml --port 8080 --control-port 8081 --control-token secret --seed 7
  faultline serve --no-control-token              (a control API anyone on this machine may drive)
Stops on SIGINT/SIGTERM with exit 0 after writing the journal; judge it with `faultline check`.)"},
    {"check", R"(
Examples:
  faultline check journal.jsonl --expect expect.toml
  faultline check journal.jsonl --expect scenario.toml --report junit:junit.xml)"},
    {"validate", R"(
Examples:
  faultline validate suites/                      every *.toml below suites/; exit 0 or 2
  faultline validate overload.good.toml overload.bad.toml)"},
    {"list", R"(
Examples:
  faultline list faults
  faultline list checks)"},
};

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"faultline: a chaos / fault-injection harness for retry behaviour"};
    app.set_version_flag("--version", "faultline " FAULTLINE_VERSION);
    app.require_subcommand(1);
    faultline::cli::add_serve_command(app);
    faultline::cli::add_proxy_command(app);
    faultline::cli::add_run_command(app);
    faultline::cli::add_validate_command(app);
    faultline::cli::add_check_command(app);
    faultline::cli::add_list_command(app);
    faultline::cli::add_score_command(app);
    faultline::cli::add_simulate_command(app);
    // `run` and `score` keep the examples their own files give; the others get theirs from here.
    for (const auto& [name, text] : examples) app.get_subcommand(std::string{name})->footer(std::string{text.substr(1)});
    for (CLI::App* sub : app.get_subcommands({})) sub->footer(sub->get_footer() + "\n" + std::string{exit_codes});
    app.footer(std::string{R"(
Start with `faultline run suites/`, or `faultline <command> --help` for a command's options and examples.
Docs: docs/scenarios.md (the scenario format), docs/checks.md, docs/control-api.md, docs/guides/.)"}.substr(1) +
               "\n" + std::string{exit_codes});
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        // Help and version exit 0; a command's own failure carries its code; bad usage is 2.
        if (code == 0 || e.get_name() == "RuntimeError") return code;
        return faultline::cli::exit_bad_input;
    } catch (const std::exception& e) {
        std::cerr << "faultline: " << e.what() << '\n';
        return faultline::cli::exit_harness_error;
    }
    return faultline::cli::exit_ok;
}
