// grpc_status: answer a gRPC call with a status instead of the service's reply — trailers-only
// (HEADERS with :status 200, grpc-status, grpc-message and, when set, grpc-retry-pushback-ms, gRPC
// A6's pushback: a wait in ms, or negative: do not retry). Phase "after" lets the service commit
// first: UNAVAILABLE after the commit is gRPC's lost response. A request that is no gRPC call
// (content-type not application/grpc…) gets the HTTP status grpc-gateway maps the code to, with
// Retry-After for a positive pushback, so one rule serves both.
#include "faultline/core/grpc_status.hpp"
#include "faultline/faults/kind.hpp"

#include <string>
#include <vector>

namespace faultline::faults {
namespace {

bool is_grpc_call(const request_view& request) {
    const auto type = request.headers.find("content-type");
    return type && type->starts_with("application/grpc");
}

class grpc_status_kind final : public fault_kind {
public:
    static std::shared_ptr<const fault_kind> make(config::table_reader& keys) {
        auto kind = std::make_shared<grpc_status_kind>();
        std::vector<std::string> names;
        for (const grpc_status s : grpc_status_names.values()) names.emplace_back(to_string(s));
        const auto code = keys.choice("code", names, config::need::required);
        if (code) kind->code_ = *grpc_status_names.from(*code);
        kind->message_ = grpc_message_encoded(keys.string("message").value_or(""));
        kind->pushback_ms_ = keys.integer("pushback_ms", -1, 24LL * 3600 * 1000);
        kind->phase_ = keys.choice("phase", {"before", "after"}) == "after" ? commit_phase::after : commit_phase::before;
        return kind;
    }

    kind_outcome on_attempt(const attempt_context& attempt, random_source&) const override {
        respond_action response;
        if (is_grpc_call(attempt.request)) {
            response.status = 200;
            response.headers.emplace_back("content-type", "application/grpc");
            response.headers.emplace_back("grpc-status", std::to_string(static_cast<int>(code_)));
            if (!message_.empty()) response.headers.emplace_back("grpc-message", message_);
            if (pushback_ms_) response.headers.emplace_back("grpc-retry-pushback-ms", std::to_string(*pushback_ms_));
        } else {
            response.status = http_status_for(code_);
            response.headers.emplace_back("content-type", "application/json");
            response.body = "{\"error\":\"" + std::string{to_string(code_)} + "\"}";
            // Whole seconds, rounded up: the client waits at least the pushback.
            if (pushback_ms_ && *pushback_ms_ >= 0) {
                response.headers.emplace_back("Retry-After", std::to_string((*pushback_ms_ + 999) / 1000));
            }
        }
        return {fault_plan{std::move(response), phase_}, {}};
    }

private:
    grpc_status code_ = grpc_status::unavailable;
    std::string message_;
    std::optional<std::int64_t> pushback_ms_;
    commit_phase phase_ = commit_phase::before;
};

const kind_registration registered{"grpc_status",
                                   "gRPC: a trailers-only status (code, message, pushback_ms); "
                                   "HTTP: the status grpc-gateway maps it to",
                                   &grpc_status_kind::make};

}  // namespace
}  // namespace faultline::faults
