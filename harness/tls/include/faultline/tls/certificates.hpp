// Certificates for a TLS listener, made with OpenSSL: a throwaway certificate authority per run and
// the server certificates it issues, so `serve --tls` works with no files and a client under test
// trusts exactly one run's CA (its path is handed to the client, never installed system-wide). The
// same authority issues the certificates a client must reject (expired, another name) and a second,
// untrusted one issues the certificate of an unknown issuer: the TLS certificate faults.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace faultline::tls {

// A private key and its certificate, PEM-encoded.
struct key_and_certificate {
    std::string key_pem;
    std::string certificate_pem;
};

// What a server certificate says.
struct certificate_request {
    std::string common_name = "faultline";
    std::vector<std::string> dns_names = {"localhost"};
    std::vector<std::string> ip_addresses = {"127.0.0.1", "::1"};
    std::chrono::system_clock::time_point not_before;
    std::chrono::system_clock::time_point not_after;
};

// A request for `names` (each an IP address or a DNS name) valid from an hour ago for `validity`.
certificate_request request_for(const std::vector<std::string>& names, std::chrono::system_clock::time_point now,
                                std::chrono::hours validity = std::chrono::hours{24});

// A self-signed CA (P-256 key, SHA-256) that issues server certificates. Generating one takes well
// under a millisecond of key generation, so every run gets its own. Failures throw std::runtime_error
// with OpenSSL's reason.
class certificate_authority {
public:
    static certificate_authority generate(const std::string& name, std::chrono::system_clock::time_point now,
                                          std::chrono::hours validity = std::chrono::hours{24});
    ~certificate_authority();
    certificate_authority(certificate_authority&&) noexcept;
    certificate_authority& operator=(certificate_authority&&) noexcept;

    // A server certificate (its own fresh key) signed by this authority.
    key_and_certificate issue(const certificate_request& request) const;
    const std::string& certificate_pem() const;

private:
    struct keys;
    explicit certificate_authority(std::unique_ptr<keys> made);
    std::unique_ptr<keys> keys_;
};

// The certificates the `tls` fault kind presents instead of the served one, each of which a client
// must refuse: from `run_ca` an expired one (it expired an hour ago) and one that names only
// "wrong-name.faultline.invalid", and from a fresh authority no client was given a valid one for
// `names`.
struct bad_certificates {
    key_and_certificate expired;
    key_and_certificate wrong_name;
    key_and_certificate untrusted_issuer;
};
bad_certificates issue_bad_certificates(const certificate_authority& run_ca, const std::vector<std::string>& names,
                                        std::chrono::system_clock::time_point now);

}  // namespace faultline::tls
