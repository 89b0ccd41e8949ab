// Opening a listening socket, the one way every faultline listener does it (`serve` with its control
// port, `proxy`, `proxy --mode tcp`): the loopback-only rule and the open / SO_REUSEADDR / bind /
// listen sequence live here so the three cannot drift apart.
#pragma once

#include <boost/asio/error.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/socket_base.hpp>
#include <boost/system/error_code.hpp>

#include <cstdint>
#include <string>

namespace faultline::harness {

// Parses `text` into `address`. A fault injector must not be reachable from the network by accident,
// so an address that is not loopback is `access_denied` unless `allow_non_loopback` (a sidecar's pod
// IP, 0.0.0.0) was asked for.
inline boost::system::error_code parse_listen_address(const std::string& text, bool allow_non_loopback,
                                                      boost::asio::ip::address& address) {
    boost::system::error_code ec;
    address = boost::asio::ip::make_address(text, ec);
    if (!ec && !address.is_loopback() && !allow_non_loopback) ec = boost::asio::error::access_denied;
    return ec;
}

// Opens `acceptor` on address:port (port 0: an ephemeral one) and starts listening; on failure the
// acceptor is closed again, so a caller can simply return the error.
template <class Acceptor>
boost::system::error_code open_listener(Acceptor& acceptor, const boost::asio::ip::address& address,
                                        std::uint16_t port) {
    boost::system::error_code ec;
    const boost::asio::ip::tcp::endpoint endpoint{address, port};
    acceptor.open(endpoint.protocol(), ec);
    if (!ec) acceptor.set_option(boost::asio::socket_base::reuse_address{true}, ec);
    if (!ec) acceptor.bind(endpoint, ec);
    if (!ec) acceptor.listen(boost::asio::socket_base::max_listen_connections, ec);
    if (ec) {
        boost::system::error_code ignored;
        acceptor.close(ignored);
    }
    return ec;
}

}  // namespace faultline::harness
