// How the fault-injecting server listens and runs (server.hpp): address, ports, worker threads,
// body limit, drain time. A plain value, kept apart from server.hpp so that configuration parsers
// (serve_config.hpp) can fill it without depending on the server itself.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace faultline::harness {

struct server_options {
    std::string address = "127.0.0.1";
    std::uint16_t port = 0;  // 0: an ephemeral port, read back with server::port()
    // A second port that serves only the control API (nullopt: none; 0: ephemeral).
    std::optional<std::uint16_t> control_port;
    std::size_t threads = 1;               // io_context worker threads
    std::size_t body_limit = 1024 * 1024;  // larger request bodies get 413 and close
    // stop(): how long in-progress attempts may take to finish before their connections are closed.
    std::chrono::milliseconds drain_timeout{1000};
    // Binding to an address other than loopback must be asked for (all traffic stays local).
    bool allow_non_loopback = false;
};

}  // namespace faultline::harness
