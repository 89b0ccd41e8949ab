#include "faultline/score/probe.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "faultline/config/document.hpp"
#include "faultline/config/reader.hpp"
#include "faultline/score/property.hpp"

namespace faultline::score {

namespace {

constexpr std::int64_t max_probe_operations = 1000;

request_values first_request(const toml::table& document) {
    const toml::node_view<const toml::node> first = document["client"]["request"][0];
    request_values out;
    out.method = first["method"].value_or(std::string{"POST"});
    out.path = first["path"].value_or(std::string{"/payments"});
    out.body = first["body"].value_or(std::string{R"({"amount":100})"});
    return out;
}

void read_probe_table(const toml::table& document, const std::string& file, probe& out, config_errors& errors) {
    config::table_reader top{document, file, "", errors};
    const toml::table* table = top.table("probe", config::need::required);
    if (table == nullptr) return;
    config::table_reader r = top.child(*table, "[probe]");
    out.situation = r.string("situation", config::need::required).value_or("");
    out.operations = static_cast<std::uint64_t>(r.integer("operations", 1, max_probe_operations).value_or(1));
    // Which client the probe is for: an HTTP one (its own [client], the builtin, can run it) or a gRPC
    // one (`faultline score --grpc`; the scenario's needs_grpc_client).
    r.choice("client", {"http", "grpc"});
    out.concurrency = static_cast<std::uint32_t>(
        r.integer("concurrency", 1, 64).value_or(static_cast<std::int64_t>(std::min<std::uint64_t>(out.operations, 64))));
    out.control = static_cast<std::uint32_t>(r.integer("control", 0, 64).value_or(0));
    out.control_delay = r.duration("control_delay", std::chrono::milliseconds{100}, std::chrono::seconds{10})
                            .value_or(std::chrono::seconds{1});
    out.control_attempts = static_cast<std::uint32_t>(r.integer("control_attempts", 2, 10).value_or(4));
    out.timeout = r.duration("timeout", std::chrono::milliseconds{100}, std::chrono::seconds{60});
    if (out.control > 0 && out.operations < 2) r.fail("control", "a control measures a herd's noise: only with operations >= 2");
    if (const auto mapped = r.string_table("properties", config::need::required)) {
        for (const auto& [check, property] : *mapped) {
            const property_info* mapped_to = find_property(property);
            if (mapped_to == nullptr) {
                std::string known;
                for (const property_info& p : properties()) {
                    if (p.run_verdict.empty()) known += (known.empty() ? "" : ", ") + std::string(p.id);
                }
                r.fail("properties", "unknown property \"" + property + "\" for check \"" + check + "\"; allowed: " + known);
                continue;
            }
            if (!mapped_to->run_verdict.empty()) {
                r.fail("properties", "property \"" + property + "\" is judged in every probe from the run's own \"" +
                                         std::string(mapped_to->run_verdict) + "\" verdict; no check maps to it");
                continue;
            }
            out.properties.emplace_back(check, property);
        }
    }
    r.finish();
}

void check_every_expectation_is_mapped(const probe& p, config_errors& errors) {
    for (const checks::expectation& e : p.scenario.expectations) {
        if (p.property_of(e.check_name).empty()) {
            errors.push_back(config_error{e.where, "[probe] properties: check \"" + e.check_name +
                                                       "\" proves no property; map it, e.g. " + e.check_name +
                                                       " = \"single_execution\""});
        }
    }
    for (const auto& [check, property] : p.properties) {
        const bool used = std::any_of(p.scenario.expectations.begin(), p.scenario.expectations.end(),
                                      [&](const checks::expectation& e) { return e.check_name == check; });
        if (!used) {
            errors.push_back(config_error{{p.scenario.file, 1, 1},
                                          "[probe] properties: \"" + check + "\" is not a check of this probe's [[expect]]"});
        }
    }
}

}  // namespace

std::string_view probe::property_of(std::string_view check) const {
    for (const auto& [name, property] : properties) {
        if (name == check) return property;
    }
    return "";
}

bool probe::alone() const {
    return operations == 1 && control == 0 &&
           std::any_of(scenario.expectations.begin(), scenario.expectations.end(), [](const checks::expectation& e) {
               return e.check_name == "jittered" && e.failures_only;
           });
}

std::string_view probe::failure_kind() const {
    return scenario.faults.empty() ? std::string_view{} : std::string_view{scenario.faults.front().kind};
}

catalogue parse_probe(std::string_view toml_text, const std::string& file) {
    catalogue out;
    runner::scenario_result loaded = runner::parse_scenario(toml_text, file);
    out.errors = loaded.errors;
    config::document document = config::parse_document(toml_text, file);
    if (!document.table) return out;
    probe p;
    read_probe_table(*document.table, file, p, out.errors);
    if (!out.errors.empty() || !loaded.value) return out;
    p.scenario = std::move(*loaded.value);
    p.request = first_request(*document.table);
    check_every_expectation_is_mapped(p, out.errors);
    if (out.errors.empty()) out.probes.push_back(std::move(p));
    return out;
}

catalogue load_catalogue(const std::string& directory) { return load_catalogue(std::vector<std::string>{directory}); }

catalogue load_catalogue(const std::vector<std::string>& paths) {
    catalogue out;
    const runner::scenario_files found = runner::collect_scenario_files(paths);
    out.errors = found.errors;
    for (const std::string& file : found.files) {
        std::ifstream in(file, std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        if (!in) {
            out.errors.push_back(config_error{{file, 0, 0}, "cannot read the probe file"});
            continue;
        }
        catalogue one = parse_probe(text.str(), file);
        out.errors.insert(out.errors.end(), one.errors.begin(), one.errors.end());
        for (probe& p : one.probes) out.probes.push_back(std::move(p));
    }
    // Two probes of one name would make one scorecard entry of two situations.
    std::sort(out.probes.begin(), out.probes.end(),
              [](const probe& a, const probe& b) { return a.scenario.name < b.scenario.name; });
    for (std::size_t i = 1; i < out.probes.size(); ++i) {
        if (out.probes[i].scenario.name == out.probes[i - 1].scenario.name) {
            out.errors.push_back(config_error{{out.probes[i].scenario.file, 1, 1},
                                              "probe \"" + out.probes[i].scenario.name + "\" is also in " +
                                                  out.probes[i - 1].scenario.file + ": probe names must be unique"});
        }
    }
    if (!out.errors.empty()) out.probes.clear();
    return out;
}

}  // namespace faultline::score
