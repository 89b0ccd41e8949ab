// The TLS contexts faultline's listeners and its proxy's upstream connections use (Asio SSL over
// OpenSSL): TLS 1.2 and 1.3 only, as a current service would offer. Failures (an unreadable file, a
// key that does not match its certificate) throw std::runtime_error naming the file and OpenSSL's reason.
#pragma once

#include "faultline/tls/certificates.hpp"

#include <boost/asio/ssl/context.hpp>

#include <memory>
#include <string>

namespace faultline::tls {

using context_ptr = std::shared_ptr<boost::asio::ssl::context>;

// A listener's context, serving `identity` (its certificate may be followed by intermediates), and
// choosing HTTP/2 by ALPN when the client offers `h2` (else `http/1.1`).
context_ptr server_context(const key_and_certificate& identity);

// The user's own certificate (chain) and key, PEM files.
key_and_certificate read_key_and_certificate(const std::string& certificate_file, const std::string& key_file);

struct client_options {
    std::string ca_file;  // "": the system's trust store
    bool verify = true;   // false: accept any certificate (a test upstream with a self-signed one)
};
// An upstream connection's context. With `verify`, the peer's chain must lead to the CA and name
// the host the connection was made to (set per connection with verify_host_name()).
context_ptr client_context(const client_options& options);

}  // namespace faultline::tls
