// `faultline schema scenario|rules|toxics|simulate`: the JSON Schema of a file format, generated from its own
// parser (config/schema.hpp), for editors that validate and complete TOML against JSON Schemas
// (Taplo, Even Better TOML: a `#:schema FILE` line at the top of the file).
#include "commands.hpp"

#include "faultline/config/schema.hpp"
#include "faultline/runner/scenario.hpp"
#include "faultline/server/serve_config.hpp"
#include "faultline/storm/simulate_file.hpp"
#include "faultline/tcp/toxics_config.hpp"

#include <boost/json/serialize.hpp>

#include <iostream>
#include <memory>
#include <string>

namespace faultline::cli {

namespace {

// Keys whose value decides which other keys a table takes.
const std::vector<std::string> discriminators{"kind", "check", "driver"};

boost::json::object schema_of(const std::string& format) {
    if (format == "scenario") {
        return config::generate_schema("faultline scenario", [](std::string_view text) {
            runner::parse_scenario(text, "schema.toml");
        }, discriminators);
    }
    if (format == "rules") {
        return config::generate_schema("faultline rules file (serve --rules)", [](std::string_view text) {
            server::parse_serve_config(text, "schema.toml");
        }, discriminators);
    }
    if (format == "toxics") {
        return config::generate_schema("faultline toxics file (proxy --mode tcp --toxics)", [](std::string_view text) {
            tcp::parse_toxics(text, "schema.toml");
        }, discriminators);
    }
    return config::generate_schema("faultline simulation file (simulate FILE)", [](std::string_view text) {
        storm::parse_simulate_file(text, "schema.toml");
    }, discriminators);
}

}  // namespace

void add_schema_command(CLI::App& app) {
    auto format = std::make_shared<std::string>();
    CLI::App* cmd = app.add_subcommand(
        "schema", "Print the JSON Schema of scenario, rules, toxics or simulation files, generated from their parsers, for editors");
    cmd->add_option("format", *format, "scenario, rules, toxics or simulate")
        ->required()
        ->check(CLI::IsMember({"scenario", "rules", "toxics", "simulate"}));
    cmd->callback([format] { std::cout << boost::json::serialize(schema_of(*format)) << '\n'; });
}

}  // namespace faultline::cli
