#include "faultline/tls/certificates.hpp"

#include "openssl_error.hpp"

#include <boost/asio/ip/address.hpp>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <ctime>
#include <utility>

namespace faultline::tls {

namespace {

using key_ptr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using x509_ptr = std::unique_ptr<X509, decltype(&X509_free)>;
using bio_ptr = std::unique_ptr<BIO, decltype(&BIO_free)>;

key_ptr generate_key() {
    key_ptr key{EVP_EC_gen("P-256"), &EVP_PKEY_free};
    if (!key) throw_openssl_error("generating a P-256 key");
    return key;
}

std::string to_pem(X509* certificate) {
    bio_ptr bio{BIO_new(BIO_s_mem()), &BIO_free};
    if (!bio || PEM_write_bio_X509(bio.get(), certificate) != 1) throw_openssl_error("encoding a certificate");
    char* data = nullptr;
    const long size = BIO_get_mem_data(bio.get(), &data);
    return {data, static_cast<std::size_t>(size)};
}

std::string to_pem(EVP_PKEY* key) {
    bio_ptr bio{BIO_new(BIO_s_mem()), &BIO_free};
    if (!bio || PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
        throw_openssl_error("encoding a private key");
    }
    char* data = nullptr;
    const long size = BIO_get_mem_data(bio.get(), &data);
    return {data, static_cast<std::size_t>(size)};
}

void set_time(ASN1_TIME* field, std::chrono::system_clock::time_point at) {
    if (!ASN1_TIME_set(field, std::chrono::system_clock::to_time_t(at))) throw_openssl_error("setting a validity date");
}

void add_extension(X509* certificate, X509* issuer, int nid, const std::string& value) {
    X509V3_CTX ctx;
    X509V3_set_ctx(&ctx, issuer, certificate, nullptr, nullptr, 0);
    X509_EXTENSION* extension = X509V3_EXT_nconf_nid(nullptr, &ctx, nid, value.c_str());
    if (!extension) throw_openssl_error("making the extension " + value);
    const int added = X509_add_ext(certificate, extension, -1);
    X509_EXTENSION_free(extension);
    if (!added) throw_openssl_error("adding the extension " + value);
}

// A certificate for `key` named `common_name`, its serial random (RFC 5280 asks for uniqueness per
// issuer; a run's CA issues a handful).
x509_ptr new_certificate(EVP_PKEY* key, const std::string& common_name, std::chrono::system_clock::time_point not_before,
                         std::chrono::system_clock::time_point not_after) {
    x509_ptr certificate{X509_new(), &X509_free};
    if (!certificate) throw_openssl_error("making a certificate");
    unsigned char serial[16];
    if (RAND_bytes(serial, sizeof serial) != 1) throw_openssl_error("drawing a serial number");
    serial[0] &= 0x7f;  // a positive INTEGER
    BIGNUM* number = BN_bin2bn(serial, sizeof serial, nullptr);
    const bool serial_set = number && BN_to_ASN1_INTEGER(number, X509_get_serialNumber(certificate.get()));
    BN_free(number);
    if (!serial_set) throw_openssl_error("setting a serial number");
    if (X509_set_version(certificate.get(), X509_VERSION_3) != 1) throw_openssl_error("setting the version");
    set_time(X509_getm_notBefore(certificate.get()), not_before);
    set_time(X509_getm_notAfter(certificate.get()), not_after);
    if (X509_set_pubkey(certificate.get(), key) != 1) throw_openssl_error("setting the public key");
    X509_NAME* name = X509_get_subject_name(certificate.get());
    const auto* cn = reinterpret_cast<const unsigned char*>(common_name.c_str());
    if (X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, cn, -1, -1, 0) != 1) throw_openssl_error("naming a certificate");
    return certificate;
}

void sign(X509* certificate, EVP_PKEY* issuer_key) {
    if (X509_sign(certificate, issuer_key, EVP_sha256()) <= 0) throw_openssl_error("signing a certificate");
}

std::string subject_alt_names(const certificate_request& request) {
    std::string names;
    const auto add = [&](std::string_view kind, const std::string& value) {
        if (!names.empty()) names += ',';
        names.append(kind).append(":").append(value);
    };
    for (const auto& dns : request.dns_names) add("DNS", dns);
    for (const auto& ip : request.ip_addresses) add("IP", ip);
    return names;
}

}  // namespace

struct certificate_authority::keys {
    key_ptr key{nullptr, &EVP_PKEY_free};
    x509_ptr certificate{nullptr, &X509_free};
    std::string certificate_pem;
};

certificate_request request_for(const std::vector<std::string>& names, std::chrono::system_clock::time_point now,
                                std::chrono::hours validity) {
    certificate_request request;
    request.dns_names.clear();
    request.ip_addresses.clear();
    for (const auto& name : names) {
        boost::system::error_code not_an_address;
        boost::asio::ip::make_address(name, not_an_address);
        (not_an_address ? request.dns_names : request.ip_addresses).push_back(name);
    }
    // An hour back, so a client whose clock is slightly behind still accepts it.
    request.not_before = now - std::chrono::hours{1};
    request.not_after = now + validity;
    return request;
}

certificate_authority certificate_authority::generate(const std::string& name,
                                                      std::chrono::system_clock::time_point now,
                                                      std::chrono::hours validity) {
    auto made = std::make_unique<keys>();
    made->key = generate_key();
    made->certificate = new_certificate(made->key.get(), name, now - std::chrono::hours{1}, now + validity);
    X509* certificate = made->certificate.get();
    if (X509_set_issuer_name(certificate, X509_get_subject_name(certificate)) != 1) throw_openssl_error("self-signing");
    add_extension(certificate, certificate, NID_basic_constraints, "critical,CA:TRUE,pathlen:0");
    add_extension(certificate, certificate, NID_key_usage, "critical,keyCertSign,cRLSign");
    add_extension(certificate, certificate, NID_subject_key_identifier, "hash");
    sign(certificate, made->key.get());
    made->certificate_pem = to_pem(certificate);
    return certificate_authority{std::move(made)};
}

certificate_authority::certificate_authority(std::unique_ptr<keys> made) : keys_{std::move(made)} {}
certificate_authority::~certificate_authority() = default;
certificate_authority::certificate_authority(certificate_authority&&) noexcept = default;
certificate_authority& certificate_authority::operator=(certificate_authority&&) noexcept = default;

const std::string& certificate_authority::certificate_pem() const { return keys_->certificate_pem; }

key_and_certificate certificate_authority::issue(const certificate_request& request) const {
    const key_ptr key = generate_key();
    const x509_ptr certificate = new_certificate(key.get(), request.common_name, request.not_before, request.not_after);
    X509* issuer = keys_->certificate.get();
    if (X509_set_issuer_name(certificate.get(), X509_get_subject_name(issuer)) != 1) throw_openssl_error("naming the issuer");
    add_extension(certificate.get(), issuer, NID_basic_constraints, "critical,CA:FALSE");
    add_extension(certificate.get(), issuer, NID_key_usage, "critical,digitalSignature");
    add_extension(certificate.get(), issuer, NID_ext_key_usage, "serverAuth");
    add_extension(certificate.get(), issuer, NID_subject_key_identifier, "hash");
    add_extension(certificate.get(), issuer, NID_authority_key_identifier, "keyid:always");
    if (const std::string names = subject_alt_names(request); !names.empty()) {
        add_extension(certificate.get(), issuer, NID_subject_alt_name, names);
    }
    sign(certificate.get(), keys_->key.get());
    return {to_pem(key.get()), to_pem(certificate.get())};
}

bad_certificates issue_bad_certificates(const certificate_authority& run_ca, const std::vector<std::string>& names,
                                        std::chrono::system_clock::time_point now) {
    using std::chrono::hours;
    certificate_request expired = request_for(names, now - hours{48});
    expired.not_after = now - hours{1};
    const certificate_authority stranger = certificate_authority::generate("faultline untrusted CA", now);
    return {run_ca.issue(expired), run_ca.issue(request_for({"wrong-name.faultline.invalid"}, now)),
            stranger.issue(request_for(names, now))};
}

}  // namespace faultline::tls
