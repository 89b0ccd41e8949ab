// status: answer with a chosen status, body and headers instead of the service's response, with an
// optional Retry-After (delta-seconds or HTTP-date). Phase "before" skips the service; "after" lets
// it commit first, then replaces the reply.
#include "faultline/faults/kind.hpp"
#include "../retry_after.hpp"

namespace faultline::faults {
namespace {

class status final : public fault_kind {
public:
    static std::shared_ptr<const fault_kind> make(config::table_reader& keys) {
        auto kind = std::make_shared<status>();
        kind->response_.status = static_cast<int>(keys.integer("status", 100, 599).value_or(503));
        kind->response_.body = keys.string("body").value_or("");
        kind->response_.headers = keys.string_table("headers").value_or(header_list{});
        kind->retry_after_ = keys.duration("retry_after");
        if (kind->retry_after_ && kind->retry_after_->count() % std::chrono::nanoseconds{std::chrono::seconds{1}}.count() != 0) {
            keys.fail("retry_after", "must be whole seconds (Retry-After carries seconds)");
        }
        if (kind->retry_after_) {
            const auto format = keys.choice("retry_after_format", {"seconds", "http_date"});
            kind->format_ = format == "http_date" ? detail::retry_after_format::http_date
                                                  : detail::retry_after_format::seconds;
        }
        kind->phase_ = keys.choice("phase", {"before", "after"}) == "after" ? commit_phase::after
                                                                                             : commit_phase::before;
        return kind;
    }

    kind_outcome on_attempt(const attempt_context& attempt, random_source&) const override {
        respond_action response = response_;
        if (retry_after_) {
            response.headers.emplace_back(
                "Retry-After",
                detail::retry_after_value(std::chrono::duration_cast<std::chrono::seconds>(*retry_after_), format_,
                                          attempt.wall_now));
        }
        return {fault_plan{std::move(response), phase_}, {}};
    }

private:
    respond_action response_;
    std::optional<std::chrono::nanoseconds> retry_after_;
    detail::retry_after_format format_ = detail::retry_after_format::seconds;
    commit_phase phase_ = commit_phase::before;
};

const kind_registration registered{"status", "answer with a chosen status, body, headers and Retry-After",
                                   &status::make};

}  // namespace
}  // namespace faultline::faults
