#include "faultline/server/server.hpp"

#include "http_core.hpp"
#include "service_backend.hpp"

#include <memory>
#include <mutex>
#include <utility>

namespace faultline::server {

using boost::system::error_code;
using detail::http_core;

// The HTTP core with the service backend behind it, and how it listens.
struct server::core {
    core(server_context& context, server_options opts, faultline::clock& time)
        : options{std::move(opts)},
          control_token{options.control_token ? *options.control_token : make_control_token()},
          http{std::make_shared<http_core>(
              context, time,
              detail::http_settings{options.threads, options.drain_timeout, options.body_limit, {},
                                           detail::make_listener_tls(options.tls, options.tls_faults),
                                           options.watch_lateness},
              std::make_unique<detail::service_backend>(context))} {}

    const server_options options;
    const std::string control_token;  // "" = none required
    const std::shared_ptr<http_core> http;
    std::mutex lifecycle;
    bool started = false;
    std::string unopened_listener;
};

server::server(server_context& context, server_options options, faultline::clock& time)
    : core_{std::make_shared<core>(context, std::move(options), time)} {}

server::~server() { stop(); }

error_code server::start() {
    core& c = *core_;
    const std::lock_guard lock{c.lifecycle};
    if (c.started) return boost::asio::error::already_started;
    port_options service;
    service.address = c.options.address;
    service.port = c.options.port;
    service.allow_non_loopback = c.options.allow_non_loopback;
    service.max_connections = c.http->context.limits.max_connections;
    service.descriptor_reserve = detail::descriptor_reserve;
    const auto named = [](std::string_view listener, const port_options& port) {
        return std::string{listener} + ' ' + url_host(port.address) + ':' + std::to_string(port.port);
    };
    if (const error_code ec = c.http->open_service_port(service)) {
        c.unopened_listener = named("service", service);
        return ec;
    }
    if (c.options.control_port) {
        port_options control = service;
        control.address = c.options.control_address;
        control.port = *c.options.control_port;
        if (const error_code ec = c.http->open_control_port(control, c.control_token)) {
            c.unopened_listener = named("control API", control);
            return ec;
        }
    }
    c.started = true;
    c.http->start();
    return {};
}

void server::stop() {
    // Called on a worker the listener only begins the stop; then the journal is not flushed yet.
    if (core_->http->stop()) core_->http->context.records.flush();
}

std::uint16_t server::port() const { return core_->http->listen.port(core_->http->service_port); }
std::optional<std::uint16_t> server::control_port() const {
    if (!core_->http->control_port) return std::nullopt;
    return core_->http->listen.port(*core_->http->control_port);
}
const std::string& server::unopened_listener() const { return core_->unopened_listener; }
const std::string& server::control_token() const { return core_->control_token; }
std::size_t server::max_connections() const { return core_->http->listen.max_connections(core_->http->service_port); }
std::string server::url() const { return scheme() + url_host(core_->options.address) + ":" + std::to_string(port()); }
std::string server::control_url() const {
    const auto control = control_port();
    if (!control) return {};
    return scheme() + url_host(core_->options.control_address) + ":" + std::to_string(*control) + std::string{control_prefix};
}
std::string server::scheme() const { return core_->options.tls ? "https://" : "http://"; }
server_counters server::counters() const { return core_->http->read_counters(); }
faultline::time_point server::run_start() const { return core_->http->run_start; }

}  // namespace faultline::server
