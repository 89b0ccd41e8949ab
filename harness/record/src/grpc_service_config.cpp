#include "faultline/record/grpc_service_config.hpp"

namespace faultline::record {

const std::vector<grpc_status>& grpc_method_config::continue_codes() const {
    static const std::vector<grpc_status> none;
    if (retry) return retry->retryable_status_codes;
    if (hedging) return hedging->non_fatal_status_codes;
    return none;
}

const grpc_method_config* grpc_service_config::find(std::string_view target) const {
    // "/pkg.Svc/Method": a leading slash, then the service and the method around the last one.
    if (target.size() < 2 || target.front() != '/') return nullptr;
    const std::string_view path = target.substr(1);
    const std::size_t slash = path.rfind('/');
    if (slash == std::string_view::npos) return nullptr;
    const std::string_view service = path.substr(0, slash);
    const std::string_view method = path.substr(slash + 1);

    const grpc_method_config* whole_service = nullptr;
    const grpc_method_config* fallback = nullptr;
    for (const grpc_method_config& m : methods) {
        for (const grpc_method_name& n : m.names) {
            if (n.service.empty()) {
                if (fallback == nullptr) fallback = &m;
            } else if (n.service == service) {
                if (n.method == method) return &m;
                if (n.method.empty() && whole_service == nullptr) whole_service = &m;
            }
        }
    }
    return whole_service != nullptr ? whole_service : fallback;
}

}  // namespace faultline::record
