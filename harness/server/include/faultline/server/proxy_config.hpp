// How a proxy is told where its upstream is: the `ADDRESS:PORT` form `faultline proxy --listen` and
// `--upstream` take, and a scenario's `[proxy]` table, which puts the proxy (proxy.hpp) in front of a
// real service instead of the built-in service model:
//
//   [proxy]
//   upstream = "127.0.0.1:9000"   # required; a loopback IP address and a port (1..65535)
//   connect_timeout = "2s"        # upstream connect, else 502 (1ms..1h)
//   upstream_timeout = "30s"      # forwarded -> complete reply, else 504 (1ms..1h)
//
// What commits is declared as for `faultline proxy --rules`: by the `[server]` table's routes
// (model_config.hpp), read by the same parser; the scenario loader rejects the `[server]` keys that
// describe the built-in service's own replies or idempotency layer, which a proxy does not have.
// Problems are reported as `file:line:column: [proxy]: key: message`.
#pragma once

#include "faultline/core/config_error.hpp"
#include "faultline/server/proxy.hpp"

#include <toml++/toml.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace faultline::server {

struct host_port {
    std::string address;  // an IP address as written, without IPv6 brackets
    std::uint16_t port = 0;
};

// "ADDRESS:PORT", e.g. "127.0.0.1:8080" or "[::1]:8080". Only the form is checked, not the address.
std::optional<host_port> parse_host_port(std::string_view text);

// A validated `[proxy]` table.
struct proxy_config {
    host_port upstream;
    std::chrono::milliseconds connect_timeout{2000};
    std::chrono::milliseconds upstream_timeout{30000};

    // The proxy's options for this upstream (listening on 127.0.0.1, an ephemeral port).
    proxy_options options() const;
};

// Parses `table` (the value of `[proxy]`). The upstream must be a loopback address: a scenario keeps
// every byte on loopback. Returns nullopt and appends to `errors` when anything is wrong.
std::optional<proxy_config> parse_proxy_config(const toml::table& table, std::string_view file,
                                               config_errors& errors);

}  // namespace faultline::server
