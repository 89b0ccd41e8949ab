// Private to the server: the backend `serve` and `run` put behind the connection — the idempotency
// layer first, then the service model, or the next tier for a relay (server_context::next_tier).
// Nothing is fetched ahead: the commit happens when the fault plan says (a `before` delay commits
// after its wait).
#pragma once

#include "backend.hpp"

#include "faultline/server/server_context.hpp"

namespace faultline::server::detail {

class service_backend final : public backend {
public:
    explicit service_backend(server_context& context) : context_{context} {}
    std::unique_ptr<backend_channel> open_channel(std::size_t worker, listener_executor executor) override;
    bool stamps_replies() const override { return true; }

private:
    server_context& context_;
};

}  // namespace faultline::server::detail
