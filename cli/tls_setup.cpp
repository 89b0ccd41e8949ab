#include "tls_setup.hpp"

#include "commands.hpp"

#include "faultline/tls/contexts.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <system_error>

namespace faultline::cli {

namespace {

[[noreturn]] void fail_usage(std::string_view command, const std::string& message) {
    std::cerr << "faultline " << command << ": " << message << '\n';
    throw CLI::RuntimeError(exit_bad_input);
}

std::string default_ca_path() {
    const char* tmp = std::getenv("TMPDIR");
    const std::filesystem::path dir = tmp && *tmp ? tmp : "/tmp";
    return (dir / ("faultline-" + std::to_string(::getpid()) + "-ca.pem")).string();
}

bool is_wildcard(const std::string& address) { return address == "0.0.0.0" || address == "::"; }

}  // namespace

void add_tls_options(CLI::App& cmd, tls_options& options) {
    auto* generate = cmd.add_flag("--tls", options.generate,
                                  "Serve TLS with a certificate from the run's own CA (its file: the banner, the ready "
                                  "file's \"ca\", FAULTLINE_CA)");
    auto* certificate = cmd.add_option("--tls-cert", options.certificate_file,
                                       "Serve TLS with this certificate (PEM, the chain after it); needs --tls-key")
                            ->check(CLI::ExistingFile);
    auto* key = cmd.add_option("--tls-key", options.key_file, "The private key of --tls-cert (PEM)")
                    ->check(CLI::ExistingFile);
    certificate->needs(key);
    key->needs(certificate);
    generate->excludes(certificate);
    cmd.add_option("--tls-name", options.names,
                   "With --tls: another DNS name or IP address on the certificate (repeatable; localhost, "
                   "127.0.0.1 and ::1 are always on it)")
        ->needs(generate);
    cmd.add_option("--tls-ca-file", options.ca_file,
                   "With --tls: write the run's CA here and keep it (default: a file in $TMPDIR removed at exit)")
        ->needs(generate);
}

tls_choice::~tls_choice() {
    if (!remove_ca_file_) return;
    std::error_code ignored;
    std::filesystem::remove(ca_file, ignored);
}

tls_choice::tls_choice(tls_choice&& other) noexcept
    : identity{std::move(other.identity)}, ca_file{std::move(other.ca_file)}, remove_ca_file_{other.remove_ca_file_} {
    other.remove_ca_file_ = false;
}

tls_choice choose_tls(const tls_options& options, const std::string& listen_address, std::string_view command) {
    tls_choice choice;
    try {
        if (!options.certificate_file.empty()) {
            choice.identity = tls::read_key_and_certificate(options.certificate_file, options.key_file);
            try {
                tls::server_context(*choice.identity);  // a key that does not match is refused here, not at start
            } catch (const std::runtime_error& e) {
                throw std::runtime_error("--tls-cert " + options.certificate_file + " --tls-key " + options.key_file +
                                         ": " + e.what());
            }
            return choice;
        }
        if (!options.generate) return choice;
        const auto now = std::chrono::system_clock::now();
        const auto authority = tls::certificate_authority::generate("faultline run CA " + std::to_string(::getpid()), now);
        std::vector<std::string> names{"localhost", "127.0.0.1", "::1"};
        if (!is_wildcard(listen_address)) names.push_back(listen_address);
        names.insert(names.end(), options.names.begin(), options.names.end());
        std::sort(names.begin(), names.end());
        names.erase(std::unique(names.begin(), names.end()), names.end());
        choice.identity = authority.issue(tls::request_for(names, now));
        choice.ca_file = options.ca_file.empty() ? default_ca_path() : options.ca_file;
        std::ofstream out{choice.ca_file, std::ios::trunc};
        out << authority.certificate_pem();
        if (!out.flush()) throw std::runtime_error("cannot write the run's CA to " + choice.ca_file);
        choice.remove_ca_file_ = options.ca_file.empty();
    } catch (const std::runtime_error& e) {  // OpenSSL's and the files' failures; nothing here throws CLI's
        fail_usage(command, std::string{"TLS: "} + e.what());
    }
    return choice;
}

std::string tls_banner(const tls_choice& choice) {
    if (!choice.identity) return {};
    if (choice.ca_file.empty()) return "TLS with the given certificate";
    return "TLS: clients trust " + choice.ca_file + " (curl --cacert " + choice.ca_file + ")";
}

}  // namespace faultline::cli
