// TLS for the long-running server commands (`serve`, `proxy`): --tls serves a certificate issued by
// the run's own certificate authority (generated at start, never installed anywhere: its file is
// handed to the clients under test, as FAULTLINE_CA and the ready file's "ca"), or --tls-cert and
// --tls-key serve the user's own. Bad options or files print why and exit 2.
#pragma once

#include "faultline/tls/certificates.hpp"
#include "faultline/tls/run_certificates.hpp"

#include <CLI/App.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace faultline::cli {

struct tls_options {
    bool generate = false;           // --tls
    std::string certificate_file;    // --tls-cert
    std::string key_file;            // --tls-key
    std::vector<std::string> names;  // --tls-name: more names on the run's certificate
    std::string ca_file;             // --tls-ca-file: where the run's CA is written
};
void add_tls_options(CLI::App& cmd, tls_options& options);

// What a command serves, and the CA file it wrote (removed when this is destroyed, unless the user
// named the path with --tls-ca-file).
struct tls_choice {
    std::optional<tls::key_and_certificate> identity;  // nullopt: plain TCP
    std::string ca_file;  // the run's CA ("" with the user's own certificate)
    std::optional<tls::run_certificates> generated;  // with --tls: owns the CA file
};

// `listen_address` goes on the run's certificate beside localhost, 127.0.0.1 and ::1 (unless it is a
// wildcard address).
tls_choice choose_tls(const tls_options& options, const std::string& listen_address, std::string_view command);

// "TLS: clients trust /tmp/faultline-123-ca.pem (curl --cacert …)", or "" without TLS.
std::string tls_banner(const tls_choice& choice);

}  // namespace faultline::cli
