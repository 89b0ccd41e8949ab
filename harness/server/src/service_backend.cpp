#include "service_backend.hpp"

#include "http_core.hpp"

#include "faultline/server/idempotency.hpp"
#include "faultline/server/relay.hpp"

#include <string>
#include <string_view>
#include <utility>

namespace faultline::server::detail {

namespace {

// Holds nothing of its own: every attempt commits at the point the plan says.
class service_channel final : public backend_channel {
public:
    explicit service_channel(server_context& context) : context_{context} {}

    bool fetches_first(const faults::fault_plan*) const override { return false; }
    void fetch(exchange&, std::shared_ptr<fetch_waiter>) override {}

    // The idempotency layer first, then the service (or the next tier).
    service_response commit(exchange& c) override {
        record::journal_record& record = c.record;
        const std::string_view method = record.method;
        const std::string_view target = record.target;
        const std::string& body = c.request.body();
        auto begun = context_.idempotency.begin(record.idempotency_key, context_.model.classify(method, target),
                                                request_fingerprint(method, target, body));
        if (begun.decision != idempotency_decision::proceed) {
            record.effect = begun.response.effect;
            return std::move(begun.response);
        }
        // Neither the body nor the identity's text is read again once the service has them.
        service_request call{std::string{method},
                             std::string{target},
                             std::move(c.request.body()),
                             std::move(c.identity.value),
                             record.attempt,
                             record.seq,
                             c.connection_id,
                             c.core->since_start_ns()};
        service_response reply =
            context_.next_tier != nullptr ? context_.next_tier->forward(call) : context_.model.handle(call);
        context_.idempotency.complete(record.idempotency_key, reply);
        record.effect = reply.effect;
        if (reply.unmatched && reply.unmatched->first) journal_unmatched(c, *reply.unmatched);
        return reply;
    }

private:
    // Once per unmatched method and path: the journal says which declared endpoint was meant.
    void journal_unmatched(const exchange& c, const unmatched_route& route) {
        const std::string_view target = c.record.target;
        record::server_event event;
        event.kind = record::server_event_kind::unmatched_route;
        event.at_ns = c.core->since_start_ns();
        event.detail = std::string{c.record.method} + " " + std::string{target.substr(0, target.find_first_of("?#"))} +
                       (route.nearest.empty() ? "; no endpoint declared" : "; nearest " + route.nearest);
        event.peer = peer_of(*c.socket);
        context_.records.append_event(std::move(event));
    }

    server_context& context_;
};

}  // namespace

std::unique_ptr<backend_channel> service_backend::open_channel(std::size_t, listener_executor) {
    return std::make_unique<service_channel>(context_);
}

}  // namespace faultline::server::detail
