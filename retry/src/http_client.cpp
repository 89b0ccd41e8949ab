#include "faultline/retry/http_client.hpp"

#include <algorithm>
#include <chrono>

#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/string.hpp>

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "faultline/retry/classify.hpp"
#include "faultline/retry/deadline.hpp"
#include "faultline/retry/idempotency.hpp"
#include "faultline/retry/retry_after.hpp"
#include "transport.hpp"

namespace faultline::retry {

namespace beast = boost::beast;
using transport_detail::request_message;
using transport_detail::response_message;

namespace {

retry_policy validated(retry_policy policy) {
    validate(policy);
    return policy;
}

}  // namespace

class http_client_state {
public:
    http_client_state(asio::any_io_executor executor, std::string host, std::uint16_t port, retry_policy policy,
                      http_client_options options)
        : strand_{asio::make_strand(executor)},
          policy_{std::move(policy)},
          options_{std::move(options)},
          clock_{options_.clk != nullptr ? *options_.clk : steady_clock_source::instance()},
          own_random_{default_random().next()},
          random_{options_.random != nullptr ? *options_.random : own_random_},
          connector_{std::make_shared<transport_detail::connector>(strand_, std::move(host), port, options_)},
          transport_{options_.protocol == http_protocol::http2
                         ? transport_detail::make_h2_transport(strand_, connector_, options_)
                         : transport_detail::make_http1_transport(connector_, options_)} {}

    asio::any_io_executor strand() const { return strand_; }
    // The strand itself (make_strand's), rather than a copy of the type-erased handle to it.
    asio::strand<asio::any_io_executor> strand_object() const {
        return *strand_.target<asio::strand<asio::any_io_executor>>();
    }
    std::uint64_t connections_opened() const { return connector_->opened(); }

    asio::awaitable<http_result> run(http_request request, request_options options);

private:
    // The request of one attempt, made when its connection is ready.
    class attempt_request final : public transport_detail::request_factory {
    public:
        attempt_request(const http_client_state& client, const http_request& request, const attempt_context& ctx)
            : client_{client}, request_{request}, ctx_{ctx}, planned_at_{client.clock_.now()} {}
        request_message make() const override;

    private:
        const http_client_state& client_;
        const http_request& request_;
        const attempt_context& ctx_;
        time_point planned_at_;
    };

    asio::awaitable<attempt_outcome> attempt(const http_request& request, const attempt_context& ctx,
                                             response_message& response, std::string& failure_reason);
    // `deadline_ms` is the Faultline-Deadline-Ms value as of the moment the request is written.
    request_message build(const http_request& request, const attempt_context& ctx,
                          std::optional<std::int64_t> deadline_ms) const;
    attempt_outcome from_response(const response_message& response) const;

    asio::any_io_executor strand_;
    retry_policy policy_;
    http_client_options options_;
    clock& clock_;
    seeded_random own_random_;
    random_source& random_;
    std::shared_ptr<transport_detail::connector> connector_;
    std::unique_ptr<transport_detail::transport> transport_;
};

request_message http_client_state::attempt_request::make() const {
    // The plan's deadline value was computed before connecting; the budget left when the request
    // goes out is smaller by the time that took, and the server must not be promised more.
    std::optional<std::int64_t> deadline_ms = ctx_.deadline_ms;
    if (deadline_ms) {
        const auto spent = std::chrono::ceil<std::chrono::milliseconds>(client_.clock_.now() - planned_at_).count();
        deadline_ms = std::max<std::int64_t>(1, *deadline_ms - spent);
    }
    return client_.build(request_, ctx_, deadline_ms);
}

request_message http_client_state::build(const http_request& request, const attempt_context& ctx,
                                         std::optional<std::int64_t> deadline_ms) const {
    request_message message{request.method, request.target, 11};
    for (const auto& field : request.headers) message.insert(field.name_string(), field.value());
    if (message.find(http::field::host) == message.end()) message.set(http::field::host, connector_->host());
    message.set(attempt_header, std::to_string(ctx.attempt));
    if (deadline_ms) message.set(deadline_header, std::to_string(*deadline_ms));
    if (!ctx.idempotency_key.empty()) message.set(idempotency_key_header, ctx.idempotency_key);
    message.keep_alive(true);
    message.body() = request.body;
    message.prepare_payload();
    return message;
}

attempt_outcome http_client_state::from_response(const response_message& response) const {
    attempt_outcome out = attempt_outcome::http(static_cast<int>(response.result_int()));
    if (auto it = response.find(http::field::retry_after); it != response.end()) {
        const auto date = response.find(http::field::date);
        const beast::string_view date_value = date != response.end() ? date->value() : beast::string_view{};
        out.retry_after = parse_retry_after(it->value(), clock_.wall_now(), date_value);
    }
    if (out.status == 409) {
        if (auto it = response.find(idempotency_status_header); it != response.end()) {
            out.idempotency_key_in_use = beast::iequals(it->value(), idempotency_in_flight);
        }
    }
    return out;
}

asio::awaitable<attempt_outcome> http_client_state::attempt(const http_request& request, const attempt_context& ctx,
                                                            response_message& response, std::string& failure_reason) {
    const attempt_request factory{*this, request, ctx};
    const attempt_outcome outcome = co_await transport_->exchange(ctx, factory, response, failure_reason);
    if (outcome.kind != outcome_kind::response) co_return outcome;
    co_return from_response(response);
}

asio::awaitable<http_result> http_client_state::run(http_request request, request_options options) {
    const time_point start = clock_.now();
    http_result result;

    std::optional<idempotency_key> key;
    bool has_key = false;
    if (auto it = request.headers.find(idempotency_key_header); it != request.headers.end()) {
        has_key = true;
        // A UUID key is adopted (and re-formatted per policy.keys.format); any other value is sent as
        // given, since the request headers are copied onto every attempt.
        key = idempotency_key::parse(idempotency_key_value(it->value()));
        if (key) request.headers.erase(idempotency_key_header);
    }
    const std::string method{http::to_string(request.method)};
    request_safety safety = options.safety.value_or(safety_of(method, has_key));
    // A key of the caller's own format rides in the copied headers: the request is as safe to repeat
    // as an idempotent one, and retry_state must neither add a key nor, finding none, call it unsafe.
    if (safety == request_safety::idempotency_key && !key) safety = request_safety::idempotent;
    execution_env env{&clock_, &random_, safety, options.deadline, key};

    response_message response;
    bool have_response = false;
    std::string failure_reason;
    auto op = [&](const attempt_context& ctx) -> asio::awaitable<attempt_outcome> {
        return [](http_client_state& self, const http_request& req, attempt_context c, response_message& out,
                  bool& have, std::string& reason) -> asio::awaitable<attempt_outcome> {
            response_message fresh;
            std::string why;
            const attempt_outcome outcome = co_await self.attempt(req, c, fresh, why);
            if (outcome.kind == outcome_kind::response) {
                out = std::move(fresh);
                have = true;
            }
            reason = std::move(why);
            co_return outcome;
        }(*this, request, ctx, response, have_response, failure_reason);
    };
    auto hook = [&](const decision_event& event) {
        if (event.outcome != nullptr) {
            result.history.push_back(attempt_record{event.attempt, *event.outcome, event.verdict, event.delay});
        }
        if (options.on_decision) options.on_decision(event);
    };
    const execution_result loop = co_await async_detail::retry_loop(policy_, op, env, hook);

    result.final_decision = loop.final_decision;
    result.attempts = loop.attempts;
    result.last_outcome = loop.last_outcome;
    if (result.last_outcome.kind == outcome_kind::local_error) result.failure_reason = std::move(failure_reason);
    if (have_response) {
        result.status = static_cast<int>(response.result_int());
        result.body = std::move(response.body());
        result.headers = std::move(response.base());
    }
    result.total_time = clock_.now() - start;
    co_return result;
}

namespace http_detail {

asio::any_io_executor strand_of(const http_client_state& state) { return state.strand(); }

asio::awaitable<http_result> run_request(std::shared_ptr<http_client_state> state, http_request request,
                                         request_options options) {
    co_return co_await state->run(std::move(request), std::move(options));
}

}  // namespace http_detail

http_client::http_client(asio::any_io_executor executor, std::string host, std::uint16_t port, retry_policy policy,
                         http_client_options options)
    : state_{std::make_shared<http_client_state>(std::move(executor), std::move(host), port,
                                                 validated(std::move(policy)), options)} {}

http_client::~http_client() {
    if (!state_) return;  // moved from
    // Its connections' handlers run on the strand; releasing the state anywhere else would race
    // with them (the last holder closes the connections).
    // The strand itself is copied, not the type-erased handle: that handle's shared count is released
    // with a fence ThreadSanitizer cannot follow, and the posted release may run first on another
    // thread (a false data race report on the handle's delete).
    const asio::strand<asio::any_io_executor> strand = state_->strand_object();
    asio::post(strand, [state = std::move(state_)]() mutable { state.reset(); });
}

http_client& http_client::operator=(http_client other) noexcept {
    // The state held so far leaves with `other`, whose destructor releases it on its strand.
    std::swap(state_, other.state_);
    return *this;
}

std::uint64_t http_client::connections_opened() const { return state_->connections_opened(); }

}  // namespace faultline::retry
