#include "faultline/server/relay.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/beast/http/verb.hpp>

#include <future>
#include <thread>
#include <utility>

#include "faultline/core/random.hpp"
#include "faultline/retry/http_client.hpp"
#include "http_fields.hpp"

namespace faultline::server {

namespace asio = boost::asio;
namespace http = boost::beast::http;

struct relay::state {
    explicit state(relay_options o)
        : options{std::move(o)}, random{options.seed},
          client{io.get_executor(), options.host, options.port, options.policy,
                 retry::http_client_options{.clk = nullptr, .random = &random}} {}

    relay_options options;
    asio::io_context io;
    asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
    seeded_random random;  // touched only on the client's strand
    retry::http_client client;
    std::thread worker;
};

relay::relay(relay_options options) : state_{std::make_unique<state>(std::move(options))} {
    state_->worker = std::thread{[s = state_.get()] { s->io.run(); }};
}

relay::~relay() {
    state_->work.reset();
    state_->io.stop();
    state_->worker.join();
}

service_response relay::forward(const service_request& request) {
    const http::verb method = http::string_to_verb(request.method);
    if (method == http::verb::unknown) {
        return problem(501, "Not Implemented", "the relay forwards standard methods only, not " + request.method);
    }
    retry::http_request out;
    out.method = method;
    out.target = request.target;
    out.body = request.body;
    out.headers.set(state_->options.identity_header, request.operation);
    retry::request_options call;
    if (state_->options.assume_idempotent) call.safety = retry::request_safety::idempotent;

    std::future<retry::http_result> pending = state_->client.async_request(std::move(out), std::move(call), asio::use_future);
    const retry::http_result result = pending.get();
    if (result.status == 0) {
        return problem(502, "Bad Gateway",
                       "no reply from the next tier after " + std::to_string(result.attempts) + " attempt(s), " +
                           std::string{retry::to_string(result.final_decision)});
    }
    service_response reply;
    reply.status = result.status;
    reply.body = result.body;
    for (const http::field name : {http::field::content_type, http::field::retry_after}) {
        const auto it = result.headers.find(name);
        if (it != result.headers.end()) {
            reply.headers.push_back({std::string{detail::to_std(it->name_string())},
                                     std::string{detail::to_std(it->value())}});
        }
    }
    return reply;
}

}  // namespace faultline::server
