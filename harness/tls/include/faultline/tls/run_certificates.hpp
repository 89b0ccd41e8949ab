// A run's TLS identity when the user brings none: a certificate authority made for this run, the
// server certificate it issues (localhost, 127.0.0.1, ::1 and any names asked for) and the CA's PEM
// file for the client under test to trust ({ca}, FAULTLINE_CA, curl --cacert), and the certificates
// the `tls` fault kind presents instead (bad()). The file is removed when the object goes, unless the
// caller chose to keep it.
#pragma once

#include "faultline/tls/certificates.hpp"

#include <string>
#include <vector>

namespace faultline::tls {

class run_certificates {
public:
    // Writes the CA to `ca_file`. Failures (OpenSSL, an unwritable file) throw std::runtime_error.
    run_certificates(const std::string& ca_name, std::vector<std::string> extra_names, std::string ca_file,
                     bool keep_ca_file);
    ~run_certificates();
    run_certificates(run_certificates&&) noexcept;
    run_certificates& operator=(run_certificates&&) = delete;
    run_certificates(const run_certificates&) = delete;

    const key_and_certificate& identity() const { return identity_; }
    const bad_certificates& bad() const { return bad_; }
    const std::string& ca_file() const { return ca_file_; }

private:
    key_and_certificate identity_;
    bad_certificates bad_;
    std::string ca_file_;
    bool remove_ca_file_;
};

// "$TMPDIR/faultline-<pid>-<label>-ca.pem" (/tmp without TMPDIR).
std::string temporary_ca_path(const std::string& label);

}  // namespace faultline::tls
