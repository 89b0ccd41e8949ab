// The file `faultline serve --rules FILE.toml` reads: [[fault]] rules (the same tables as a
// scenario's) and an optional [server] table. The [server] table's model keys (service, identity,
// idempotency, journal bound, and the limits header_timeout, idle_timeout, max_connections,
// max_fault_wait: model_config.hpp) are parsed by the model's parser, so scenarios have them too;
// [server] is read before the rules, whose waits max_fault_wait bounds. The keys below are the
// server engine's own (serve only):
//
//   [server]
//   port = 8080                 # 0..65535; 0 (default) = ephemeral
//   control_port = 8081         # the control API's own port (default: ephemeral)
//   threads = 2                 # io_context worker threads, 1..256 (default 1)
//   body_limit = 1048576        # request body bytes, 1..1 GiB; larger bodies get 413
//   seed = 42                   # fault decisions' seed (default: a random one, printed)
//   max_active_faults = 1000    # cap on faults in progress at once (engine_limits)
//
// Every problem is reported as `file:line:column: message`; nothing is half-loaded.
#pragma once

#include "faultline/core/config_error.hpp"
#include "faultline/faults/engine.hpp"
#include "faultline/faults/rule.hpp"
#include "faultline/server/model_config.hpp"
#include "faultline/server/server_options.hpp"

#include <toml++/toml.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace faultline::server {

// The server engine's keys of the [server] table (absent = not set).
struct server_settings {
    std::optional<std::uint16_t> port;
    std::optional<std::uint16_t> control_port;
    std::optional<std::size_t> threads;
    std::optional<std::size_t> body_limit;
    std::optional<std::uint64_t> seed;
    std::optional<std::size_t> max_active_faults;

    // Writes the settings that are set into `options` / `limits`.
    void apply(server_options& options, faults::engine_limits& limits) const;
};

// Reads the server_settings keys of a [server] table, ignoring every other key: the model's parser
// reports unknown ones, so pass it these key names as `extra_keys` (port, control_port, threads,
// body_limit, seed, max_active_faults). Appends problems to `errors`.
server_settings parse_server_settings(const toml::table& table, const std::string& file, config_errors& errors);

struct serve_config {
    model_config model;
    server_settings settings;
    std::vector<faults::rule> rules;
};

struct serve_config_result {
    std::optional<serve_config> config;  // set only when `errors` is empty
    config_errors errors;
    bool ok() const { return errors.empty(); }
};

// Parses a whole rules file. Top-level keys other than `fault` and `server` are errors.
serve_config_result parse_serve_config(std::string_view toml_text, const std::string& file);
// Reads and parses `path`; an unreadable file is one error at line 0.
serve_config_result load_serve_config(const std::string& path);

}  // namespace faultline::server
