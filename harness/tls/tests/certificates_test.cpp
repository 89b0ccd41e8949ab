#include "faultline/tls/certificates.hpp"
#include "faultline/tls/contexts.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/stream.hpp>

#include <gtest/gtest.h>

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>

namespace faultline::tls {
namespace {

using namespace std::chrono_literals;
namespace asio = boost::asio;
using clock = std::chrono::system_clock;

using x509_ptr = std::unique_ptr<X509, decltype(&X509_free)>;

x509_ptr parse(const std::string& pem) {
    std::unique_ptr<BIO, decltype(&BIO_free)> bio{BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free};
    return {PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr), &X509_free};
}

// What OpenSSL's chain verification says of `leaf` against `ca` alone, at `at`.
int verify(const std::string& ca, const std::string& leaf, clock::time_point at) {
    const x509_ptr root = parse(ca);
    const x509_ptr certificate = parse(leaf);
    std::unique_ptr<X509_STORE, decltype(&X509_STORE_free)> store{X509_STORE_new(), &X509_STORE_free};
    X509_STORE_add_cert(store.get(), root.get());
    std::unique_ptr<X509_STORE_CTX, decltype(&X509_STORE_CTX_free)> ctx{X509_STORE_CTX_new(), &X509_STORE_CTX_free};
    X509_STORE_CTX_init(ctx.get(), store.get(), certificate.get(), nullptr);
    X509_STORE_CTX_set_time(ctx.get(), 0, clock::to_time_t(at));
    X509_verify_cert(ctx.get());
    return X509_STORE_CTX_get_error(ctx.get());
}

const clock::time_point now = clock::now();

TEST(CertificateAuthority, IssuesACertificateThatVerifiesAgainstItAndNamesLoopback) {
    const auto ca = certificate_authority::generate("faultline test CA", now);
    const auto issued = ca.issue(request_for({"localhost", "127.0.0.1"}, now));
    EXPECT_EQ(verify(ca.certificate_pem(), issued.certificate_pem, now), X509_V_OK);
    const x509_ptr leaf = parse(issued.certificate_pem);
    EXPECT_EQ(X509_check_host(leaf.get(), "localhost", 0, 0, nullptr), 1);
    EXPECT_EQ(X509_check_ip_asc(leaf.get(), "127.0.0.1", 0), 1);
    EXPECT_EQ(X509_check_host(leaf.get(), "example.com", 0, 0, nullptr), 0);
    EXPECT_NE(issued.key_pem.find("PRIVATE KEY"), std::string::npos);
}

TEST(CertificateAuthority, ACertificatePastItsDatesOrFromAnotherAuthorityFailsVerification) {
    const auto ca = certificate_authority::generate("run CA", now);
    auto expired = request_for({"localhost"}, now - 48h);
    EXPECT_EQ(verify(ca.certificate_pem(), ca.issue(expired).certificate_pem, now), X509_V_ERR_CERT_HAS_EXPIRED);
    const auto stranger = certificate_authority::generate("untrusted CA", now);
    EXPECT_EQ(verify(ca.certificate_pem(), stranger.issue(request_for({"localhost"}, now)).certificate_pem, now),
              X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY);
}

TEST(CertificateAuthority, EachAuthorityIsItsOwn) {
    const auto a = certificate_authority::generate("a", now);
    const auto b = certificate_authority::generate("b", now);
    EXPECT_NE(a.certificate_pem(), b.certificate_pem());
    EXPECT_EQ(verify(a.certificate_pem(), a.certificate_pem(), now), X509_V_OK);
}

TEST(Contexts, AKeyThatDoesNotMatchItsCertificateIsRefusedWithAReason) {
    const auto ca = certificate_authority::generate("ca", now);
    auto first = ca.issue(request_for({"localhost"}, now));
    const auto second = ca.issue(request_for({"localhost"}, now));
    first.key_pem = second.key_pem;
    EXPECT_THROW(server_context(first), std::runtime_error);
    EXPECT_THROW(read_key_and_certificate("/nonexistent/cert.pem", "/nonexistent/key.pem"), std::runtime_error);
    EXPECT_THROW(client_context({"/nonexistent/ca.pem", true}), std::runtime_error);
}

// A real handshake over loopback: a client that trusts the run's CA and checks the name succeeds; one
// checking another name fails.
struct handshake_result {
    boost::system::error_code client;
    boost::system::error_code server;
};

handshake_result handshake(const std::string& ca_file, const key_and_certificate& identity, const std::string& name) {
    asio::io_context io;
    asio::ip::tcp::acceptor acceptor{io, {asio::ip::make_address("127.0.0.1"), 0}};
    auto server_ctx = server_context(identity);
    auto client_ctx = client_context({ca_file, true});
    asio::ssl::stream<asio::ip::tcp::socket> server{io, *server_ctx};
    asio::ssl::stream<asio::ip::tcp::socket> client{io, *client_ctx};
    client.set_verify_callback(asio::ssl::host_name_verification{name});
    handshake_result result;
    acceptor.async_accept(server.next_layer(), [&](boost::system::error_code ec) {
        if (ec) return;
        server.async_handshake(asio::ssl::stream_base::server, [&](boost::system::error_code e) { result.server = e; });
    });
    client.next_layer().async_connect(acceptor.local_endpoint(), [&](boost::system::error_code ec) {
        if (ec) return void(result.client = ec);
        client.async_handshake(asio::ssl::stream_base::client, [&](boost::system::error_code e) {
            result.client = e;
            if (e) client.next_layer().close();  // the server's handshake then ends too
        });
    });
    io.run_for(10s);
    return result;
}

TEST(Contexts, AClientTrustingTheRunsAuthorityCompletesAHandshakeForTheNameOnly) {
    const auto ca = certificate_authority::generate("handshake CA", now);
    const auto identity = ca.issue(request_for({"localhost", "127.0.0.1"}, now));
    const auto ca_file = std::filesystem::temp_directory_path() /
                         ("faultline-tls-test-" + std::to_string(::getpid()) + ".pem");
    std::ofstream{ca_file} << ca.certificate_pem();
    const auto good = handshake(ca_file.string(), identity, "localhost");
    EXPECT_FALSE(good.client) << good.client.message();
    EXPECT_FALSE(good.server) << good.server.message();
    const auto wrong_name = handshake(ca_file.string(), identity, "example.com");
    EXPECT_TRUE(wrong_name.client);
    EXPECT_TRUE(wrong_name.server);
    std::filesystem::remove(ca_file);
}

}  // namespace
}  // namespace faultline::tls
