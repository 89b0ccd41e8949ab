#include "faultline/tls/contexts.hpp"

#include "openssl_error.hpp"

#include <boost/asio/buffer.hpp>

#include <openssl/ssl.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace faultline::tls {

namespace ssl = boost::asio::ssl;

namespace {

context_ptr new_context(ssl::context::method method) {
    auto context = std::make_shared<ssl::context>(method);
    if (SSL_CTX_set_min_proto_version(context->native_handle(), TLS1_2_VERSION) != 1) {
        throw_openssl_error("requiring TLS 1.2 or later");
    }
    return context;
}

std::string read_file(const std::string& path, std::string_view what) {
    std::ifstream in{path, std::ios::binary};
    if (!in) throw std::runtime_error("cannot read the " + std::string{what} + " file " + path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

void fail_on(const boost::system::error_code& ec, const std::string& what) {
    if (ec) throw std::runtime_error(what + ": " + ec.message());
}

// ALPN (RFC 7301), the server's choice: HTTP/2 when the client offers it, else HTTP/1.1; a client
// that offers neither gets no protocol chosen and speaks HTTP/1.1 as without ALPN. The listener's
// connection reads the choice after the handshake (SSL_get0_alpn_selected).
int select_alpn(SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in, unsigned int inlen,
                void*) {
    static constexpr unsigned char preferred[] = {2, 'h', '2', 8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
    unsigned char* chosen = nullptr;
    if (SSL_select_next_proto(&chosen, outlen, preferred, sizeof preferred, in, inlen) != OPENSSL_NPN_NEGOTIATED) {
        return SSL_TLSEXT_ERR_NOACK;
    }
    *out = chosen;
    return SSL_TLSEXT_ERR_OK;
}

}  // namespace

context_ptr server_context(const key_and_certificate& identity) {
    auto context = new_context(ssl::context::tls_server);
    boost::system::error_code ec;
    context->use_certificate_chain(boost::asio::buffer(identity.certificate_pem), ec);
    fail_on(ec, "the TLS certificate");
    context->use_private_key(boost::asio::buffer(identity.key_pem), ssl::context::pem, ec);
    fail_on(ec, "the TLS private key");
    if (SSL_CTX_check_private_key(context->native_handle()) != 1) {
        throw_openssl_error("the TLS private key does not match the certificate");
    }
    SSL_CTX_set_alpn_select_cb(context->native_handle(), &select_alpn, nullptr);
    return context;
}

key_and_certificate read_key_and_certificate(const std::string& certificate_file, const std::string& key_file) {
    return {read_file(key_file, "TLS key"), read_file(certificate_file, "TLS certificate")};
}

context_ptr client_context(const client_options& options) {
    auto context = new_context(ssl::context::tls_client);
    boost::system::error_code ec;
    if (!options.verify) {
        context->set_verify_mode(ssl::verify_none, ec);
        fail_on(ec, "TLS verification");
        return context;
    }
    context->set_verify_mode(ssl::verify_peer, ec);
    fail_on(ec, "TLS verification");
    if (options.ca_file.empty()) {
        context->set_default_verify_paths(ec);
        fail_on(ec, "the system's trust store");
    } else {
        context->load_verify_file(options.ca_file, ec);
        fail_on(ec, "the CA file " + options.ca_file);
    }
    return context;
}

}  // namespace faultline::tls
