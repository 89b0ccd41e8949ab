// `faultline`: wires the subcommands (commands.hpp) to CLI11 and maps errors to exit codes.
#include "commands.hpp"

#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>

int main(int argc, char** argv) {
    CLI::App app{"faultline: a chaos / fault-injection harness for retry behaviour"};
    app.require_subcommand(1);
    faultline::cli::add_serve_command(app);
    faultline::cli::add_proxy_command(app);
    faultline::cli::add_run_command(app);
    faultline::cli::add_validate_command(app);
    faultline::cli::add_check_command(app);
    faultline::cli::add_list_command(app);
    faultline::cli::add_score_command(app);
    faultline::cli::add_simulate_command(app);
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
