// The client side of one TLS connection to `name` (Asio SSL, faultline::asio_ssl): SNI with the name
// (none for an IP address, as RFC 6066 says) and, when `verify`, the certificate checked against it.
// Shared by the retry client and the proxy's upstream connections.
#pragma once

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/stream.hpp>

#include <string>

namespace faultline {

template <class NextLayer>
void prepare_tls_client(boost::asio::ssl::stream<NextLayer>& tls, const std::string& name, bool verify) {
    boost::system::error_code not_an_address;
    boost::asio::ip::make_address(name, not_an_address);
    // SSL_set_tlsext_host_name, spelled out: the macro's C cast trips -Wold-style-cast.
    if (not_an_address) {
        SSL_ctrl(tls.native_handle(), SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                 const_cast<char*>(name.c_str()));
    }
    if (verify) tls.set_verify_callback(boost::asio::ssl::host_name_verification{name});
}

}  // namespace faultline
