// `faultline`: wires the subcommands (commands.hpp) to CLI11 and maps errors to exit codes. The
// examples in each subcommand's --help are kept here, next to each other, so the help reads as one
// manual (the man page is generated from it: packaging/faultline-man.sh).
#include "commands.hpp"
#include "shipped_files.hpp"

#include "faultline/core/edit_distance.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <exception>
#include <iostream>
#include <string>
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
    {"new", R"(
Examples:
  faultline new                                   writes scenario.toml here
  faultline new payments.toml && faultline run payments.toml
  faultline new - | less)"},
    {"schema", R"(
Examples:
  faultline schema scenario > faultline-scenario.schema.json
  then start a scenario file with `#:schema ./faultline-scenario.schema.json` (Taplo, Even Better TOML))"},
    {"list", R"(
Examples:
  faultline list                                  every list below, each under its name
  faultline list faults
  faultline list checks)"},
};

// `faultline runn …`: CLI11 would say "A subcommand is required"; name the command meant instead.
// Empty when `word` is a command.
std::string unknown_command_message(const CLI::App& app, std::string_view word) {
    std::string nearest, names;
    std::size_t nearest_distance = word.size();
    for (const CLI::App* sub : app.get_subcommands({})) {
        const std::string& name = sub->get_name();
        if (name == word) return {};
        names += (names.empty() ? "" : ", ") + name;
        const std::size_t distance = faultline::core::edit_distance(word, name);
        if (distance < nearest_distance) nearest_distance = distance, nearest = name;
    }
    std::string message = "faultline: '" + std::string{word} + "' is not a command.";
    // A typo is a few characters; a word that shares little with every command gets no guess.
    if (!nearest.empty() && nearest_distance <= std::max<std::size_t>(1, nearest.size() / 2)) {
        message += " Did you mean `faultline " + nearest + "`?";
    }
    return message + "\nCommands: " + names + ". See `faultline --help`.";
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"faultline: a chaos / fault-injection harness for retry behaviour", "faultline"};
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
    faultline::cli::add_new_command(app);
    faultline::cli::add_schema_command(app);
    // `run` and `score` keep the examples their own files give; the others get theirs from here.
    for (const auto& [name, text] : examples) app.get_subcommand(std::string{name})->footer(std::string{text.substr(1)});
    for (CLI::App* sub : app.get_subcommands({})) sub->footer(sub->get_footer() + "\n" + std::string{exit_codes});
    const auto shipped = faultline::cli::find_shipped_files();
    app.footer("Start with `faultline run " + shipped.suites.string() +
               "`, or `faultline <command> --help` for a command's options and examples.\nDocs in " +
               shipped.docs.string() +
               ": scenarios.md (the scenario format), checks.md, control-api.md, guides/.\n" + std::string{exit_codes});
    if (argc == 1) {
        std::cout << app.help() << '\n';
        return faultline::cli::exit_bad_input;
    }
    if (std::string_view{argv[1]} == "help") {  // as `git help [command]`
        const CLI::App* about = &app;
        if (argc > 2) {
            const auto subs = app.get_subcommands({});
            const auto named = std::ranges::find(subs, std::string_view{argv[2]}, &CLI::App::get_name);
            about = named == subs.end() ? nullptr : *named;
        }
        // A command's help names it after its parent, as `faultline check --help` does.
        std::cout << (about == &app ? app.help() : about ? about->help(app.get_name()) : app.help()) << '\n';
        return about ? faultline::cli::exit_ok : faultline::cli::exit_bad_input;
    }
    if (const std::string_view first{argv[1]}; !first.starts_with('-')) {
        if (const auto message = unknown_command_message(app, first); !message.empty()) {
            std::cerr << message << '\n';
            return faultline::cli::exit_bad_input;
        }
    }
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
