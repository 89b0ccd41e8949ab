#include "faultline/server/serve_config.hpp"

#include "faultline/config/document.hpp"
#include "faultline/config/reader.hpp"
#include "faultline/faults/rules_toml.hpp"

#include <algorithm>
#include <limits>
#include <tuple>

namespace faultline::server {

namespace {

serve_config_result parse_serve_config(config::document document, const std::string& file) {
    serve_config_result result;
    if (!document.table) {
        result.errors = std::move(document.errors);
        return result;
    }
    config::table_reader top{*document.table, file, "rules file", result.errors};
    serve_config config;
    // [server] first: its max_fault_wait bounds the rules' waits.
    if (const toml::table* table = top.table("server")) {
        if (auto model = parse_model_config(*table, file, result.errors,
                                             {"port", "control_port", "threads", "body_limit", "seed",
                                              "max_active_faults"})) {
            config.model = std::move(*model);
        }
        config.settings = parse_server_settings(*table, file, result.errors);
    }
    if (top.has("fault")) {
        auto rules = faults::parse_rules(*document.table->get("fault"), file, {config.model.limits.max_fault_wait});
        result.errors.insert(result.errors.end(), rules.errors.begin(), rules.errors.end());
        config.rules = std::move(rules.rules);
    }
    top.finish();
    // Reported in file order, whichever table was read first.
    std::stable_sort(result.errors.begin(), result.errors.end(), [](const config_error& a, const config_error& b) {
        return std::tie(a.where.line, a.where.column) < std::tie(b.where.line, b.where.column);
    });
    if (result.errors.empty()) result.config = std::move(config);
    return result;
}

}  // namespace

void server_settings::apply(server_options& options, faults::engine_limits& limits) const {
    if (port) options.port = *port;
    if (control_port) options.control_port = *control_port;
    if (threads) options.threads = *threads;
    if (body_limit) options.body_limit = *body_limit;
    if (max_active_faults) limits.max_active_faults = *max_active_faults;
}

server_settings parse_server_settings(const toml::table& table, const std::string& file, config_errors& errors) {
    // The project's one table reader gives the same messages and positions as every other table. Its
    // unknown-key report (finish) is not used: the model's parser owns the rest of the table.
    config::table_reader keys{table, file, "[server]", errors};
    server_settings out;
    constexpr std::int64_t max_port = std::numeric_limits<std::uint16_t>::max();
    if (const auto v = keys.integer("port", 0, max_port)) {
        out.port = static_cast<std::uint16_t>(*v);
    }
    if (const auto v = keys.integer("control_port", 0, max_port)) {
        out.control_port = static_cast<std::uint16_t>(*v);
    }
    if (const auto v = keys.integer("threads", 1, 256)) {
        out.threads = static_cast<std::size_t>(*v);
    }
    if (const auto v = keys.integer("body_limit", 1, std::int64_t{1} << 30)) {
        out.body_limit = static_cast<std::size_t>(*v);
    }
    if (const auto v = keys.integer("seed", 0, std::numeric_limits<std::int64_t>::max())) {
        out.seed = static_cast<std::uint64_t>(*v);
    }
    if (const auto v = keys.integer("max_active_faults", 1, 1'000'000)) {
        out.max_active_faults = static_cast<std::size_t>(*v);
    }
    return out;
}

serve_config_result parse_serve_config(std::string_view toml_text, const std::string& file) {
    return parse_serve_config(config::parse_document(toml_text, file), file);
}

serve_config_result load_serve_config(const std::string& path) {
    return parse_serve_config(config::load_document(path, "rules file"), path);
}

}  // namespace faultline::server
