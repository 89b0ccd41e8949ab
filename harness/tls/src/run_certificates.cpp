#include "faultline/tls/run_certificates.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>

namespace faultline::tls {

run_certificates::run_certificates(const std::string& ca_name, std::vector<std::string> extra_names,
                                   std::string ca_file, bool keep_ca_file)
    : ca_file_{std::move(ca_file)}, remove_ca_file_{false} {
    const auto now = std::chrono::system_clock::now();
    const auto authority = certificate_authority::generate(ca_name, now);
    std::vector<std::string> names{"localhost", "127.0.0.1", "::1"};
    names.insert(names.end(), extra_names.begin(), extra_names.end());
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    identity_ = authority.issue(request_for(names, now));
    bad_ = issue_bad_certificates(authority, names, now);
    std::ofstream out{ca_file_, std::ios::trunc};
    out << authority.certificate_pem();
    if (!out.flush()) throw std::runtime_error("cannot write the run's CA to " + ca_file_);
    remove_ca_file_ = !keep_ca_file;
}

run_certificates::~run_certificates() {
    if (!remove_ca_file_) return;
    std::error_code ignored;
    std::filesystem::remove(ca_file_, ignored);
}

run_certificates::run_certificates(run_certificates&& other) noexcept
    : identity_{std::move(other.identity_)}, bad_{std::move(other.bad_)}, ca_file_{std::move(other.ca_file_)}, remove_ca_file_{other.remove_ca_file_} {
    other.remove_ca_file_ = false;
}

std::string temporary_ca_path(const std::string& label) {
    const char* tmp = std::getenv("TMPDIR");
    const std::filesystem::path dir = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
    return (dir / ("faultline-" + std::to_string(::getpid()) + "-" + label + "-ca.pem")).string();
}

}  // namespace faultline::tls
