#include "grpc_support.hpp"

#include <algorithm>
#include <variant>

#include "faultline/config/grpc_service_config.hpp"

namespace faultline::checks {

grpc_config_source grpc_config_source::read(config::table_reader& p) {
    grpc_config_source out;
    out.own_ = config::read_grpc_service_config_key(p, "service_config").config;
    return out;
}

const record::grpc_service_config* grpc_config_source::get(const record::run_record& run) const {
    if (own_) return own_.get();
    return run.declared.grpc.get();
}

record::verdict no_service_config() {
    record::verdict v;
    v.insufficient_evidence = true;
    v.summary = "no gRPC service config to judge against: name one with service_config = \"….json\", or run a client "
                "that declares its own";
    return v;
}

const record::grpc_method_config* method_of(const record::grpc_service_config& config, const record::operation_attempts& op, grpc_policy p) {
    const record::grpc_method_config* m = config.find(op.attempts.front()->target);
    if (p == grpc_policy::any) {
        if (m != nullptr && (m->retry || m->hedging)) return m;
        static const record::grpc_method_config no_policy;
        const bool grpc_call = std::any_of(op.attempts.begin(), op.attempts.end(),
                                           [](const record::journal_record* r) { return r->grpc_status.has_value(); });
        return grpc_call ? &no_policy : nullptr;
    }
    if (m == nullptr) return nullptr;
    switch (p) {
        case grpc_policy::retry: return m->retry ? m : nullptr;
        case grpc_policy::hedging: return m->hedging ? m : nullptr;
        case grpc_policy::either: return m->retry || m->hedging ? m : nullptr;
        case grpc_policy::any: break;
    }
    return nullptr;
}

std::string_view policy_name(grpc_policy p) {
    switch (p) {
        case grpc_policy::retry: return "a retryPolicy";
        case grpc_policy::hedging: return "a hedgingPolicy";
        case grpc_policy::either: return "a retryPolicy or hedgingPolicy";
        case grpc_policy::any: return "a gRPC status";
    }
    return "";
}

std::string not_judged(std::size_t operations, grpc_policy p) {
    if (operations == 0) return "";
    if (p == grpc_policy::any) {
        return "; " + std::to_string(operations) + " operations not judged (no attempt of theirs carried a gRPC status)";
    }
    return "; " + std::to_string(operations) + " operations not judged (their method has no " +
           std::string(policy_name(p)).substr(2) + ")";
}

bool refused(const record::journal_record& r) {
    return r.fault == "refused_stream" || (r.fault == "goaway" && r.effect == record::effect_kind::none);
}

grpc_end classify(const record::journal_record& r, const record::grpc_method_config& m) {
    // The order matters: a refused stream was never processed whatever else it carries, and a
    // committed call or a "do not retry" pushback forbids a retry whatever its status.
    if (refused(r)) return grpc_end::refused;
    if (r.outcome == record::wire_outcome::truncated) return grpc_end::committed;
    if (r.grpc_pushback_ms && *r.grpc_pushback_ms < 0) return grpc_end::stop;
    if (!r.grpc_status) return grpc_end::unknown;
    const auto status = static_cast<grpc_status>(*r.grpc_status);
    if (status == grpc_status::ok) return grpc_end::ok;
    const auto& codes = m.continue_codes();
    return std::find(codes.begin(), codes.end(), status) != codes.end() ? grpc_end::retryable : grpc_end::fatal;
}

std::string grpc_status_text(const record::journal_record& r) {
    if (r.grpc_status) return std::string(grpc_status_names(static_cast<grpc_status>(*r.grpc_status)));
    return "no status (" + attempt_result(r) + ")";
}

std::string codes_text(const std::vector<grpc_status>& codes) {
    std::string out = "[";
    for (const grpc_status c : codes) {
        if (out.size() > 1) out += ", ";
        out += grpc_status_names(c);
    }
    return out + "]";
}

std::string method_codes_text(const record::grpc_method_config& m) {
    if (!m.retry && !m.hedging) return "retry policy: it has none, so gRPC retries nothing but refused streams";
    return (m.retry ? "retryableStatusCodes " : "nonFatalStatusCodes ") + codes_text(m.continue_codes());
}

std::uint32_t max_attempts_of(const record::grpc_method_config& m) {
    const std::uint32_t n = m.retry ? m.retry->max_attempts : m.hedging ? m.hedging->max_attempts : 1;
    return std::min(n, record::grpc_max_attempts_cap);
}

std::chrono::nanoseconds read_tolerance(config::table_reader& p) {
    return p.duration("tolerance").value_or(grpc_default_tolerance);
}

}  // namespace faultline::checks
