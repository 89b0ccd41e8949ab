#include "tls_setup.hpp"

#include "commands.hpp"

#include "faultline/tls/contexts.hpp"

#include <unistd.h>

#include <iostream>
#include <stdexcept>

namespace faultline::cli {

namespace {

[[noreturn]] void fail_usage(std::string_view command, const std::string& message) {
    std::cerr << "faultline " << command << ": " << message << '\n';
    throw CLI::RuntimeError(exit_bad_input);
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
        std::vector<std::string> names = options.names;
        if (!is_wildcard(listen_address)) names.push_back(listen_address);
        choice.generated.emplace("faultline run CA " + std::to_string(::getpid()), std::move(names),
                                 options.ca_file.empty() ? tls::temporary_ca_path(std::string{command}) : options.ca_file,
                                 !options.ca_file.empty());
        choice.identity = choice.generated->identity();
        choice.ca_file = choice.generated->ca_file();
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
