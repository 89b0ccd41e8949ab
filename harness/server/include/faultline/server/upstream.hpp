// How faultline's proxies find the service they front (`proxy` and `proxy --mode tcp`): a host name
// (a Docker or Kubernetes service) or an IP address, resolved with Asio's resolver; each address it
// resolved to is tried in turn when connecting.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace faultline::server {

// The addresses `host` resolves to for TCP on `port`; empty, with `ec` saying why, when it does not.
std::vector<boost::asio::ip::tcp::endpoint> resolve_upstream(const std::string& host, std::uint16_t port,
                                                             boost::system::error_code& ec);

// One TCP connect to the upstream within `timeout`, closed at once: the proxies check the upstream is
// reachable before they start.
boost::system::error_code probe_upstream(const std::string& host, std::uint16_t port,
                                         std::chrono::milliseconds timeout);

}  // namespace faultline::server
