// The fault-injecting reverse proxy (proxy.hpp): the one HTTP connection (http_connection.hpp)
// with the upstream backend (upstream_backend.hpp) behind it, on the one listener.
#include "faultline/server/proxy.hpp"

#include "http_core.hpp"
#include "upstream_backend.hpp"

#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>

#include <algorithm>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <utility>

namespace faultline::server {

using boost::system::error_code;
using detail::http_core;
using detail::upstream_backend;

namespace {

// Descriptors kept back from the connection cap besides the pooled upstream connections: the
// listener, the journal file, stdio.
constexpr std::size_t proxy_descriptor_reserve = 64;

detail::upstream_settings upstream_of(const proxy_options& options) {
    detail::upstream_settings out;
    out.host = options.upstream_address;
    out.port = options.upstream_port;
    out.connect_timeout = options.connect_timeout;
    out.upstream_timeout = options.upstream_timeout;
    out.body_limit = options.upstream_body_limit;
    out.idle_per_worker = options.idle_upstream_per_thread;
    out.workers = std::max<std::size_t>(options.threads, 1);
    out.tls = options.upstream_tls;
    return out;
}

}  // namespace

struct proxy::core {
    core(server_context& context, proxy_options opts, faultline::clock& time)
        : options{std::move(opts)},
          control_token{!options.control_port  ? std::string{}
                        : options.control_token ? *options.control_token
                                                : make_control_token()},
          http{std::make_shared<http_core>(
              context, time,
              detail::http_settings{options.threads, options.drain_timeout, options.body_limit, options.instance,
                                           detail::make_listener_tls(options.tls, options.tls_faults),
                                           options.watch_lateness},
              std::make_unique<upstream_backend>(context, upstream_of(options)))} {}

    upstream_backend& upstream() const { return static_cast<upstream_backend&>(*http->behind); }

    const proxy_options options;
    const std::string control_token;  // "" = none required
    const std::shared_ptr<http_core> http;
    std::mutex lifecycle;
    bool started = false;
};

proxy::proxy(server_context& context, proxy_options options, faultline::clock& time)
    : core_{std::make_shared<core>(context, std::move(options), time)} {}

proxy::~proxy() { stop(); }

error_code proxy::start() {
    core& c = *core_;
    const std::lock_guard lock{c.lifecycle};
    if (c.started) return boost::asio::error::already_started;
    if (const error_code ec = c.upstream().resolve()) return ec;
    port_options listen;
    listen.address = c.options.address;
    listen.port = c.options.port;
    listen.allow_non_loopback = c.options.allow_non_loopback;
    listen.max_connections = c.http->context.limits.max_connections;
    // A client connection and the upstream connection it forwards on; the pool's idle ones apart.
    listen.descriptors_per_connection = 2;
    listen.descriptor_reserve = proxy_descriptor_reserve + c.options.idle_upstream_per_thread * c.http->listen.workers();
    if (const error_code ec = c.http->open_service_port(listen)) return ec;
    if (c.options.control_port) {
        port_options control;
        control.address = c.options.control_address;
        control.port = *c.options.control_port;
        control.allow_non_loopback = c.options.allow_non_loopback;
        if (const error_code ec = c.http->open_control_port(control, c.control_token)) return ec;
    }
    // The journal's wall-clock anchor, so `faultline check` can merge it with other instances'.
    c.http->context.records.append_event(record::wall_clock_anchor(c.http->since_start_ns(), c.http->time.wall_now(),
                                                              c.options.instance, c.http->context.seed()));
    c.started = true;
    c.http->start();
    return {};
}

void proxy::stop() {
    core& c = *core_;
    if (!c.http->stop()) return;
    c.upstream().close_idle();
    c.http->context.records.flush();
}

std::uint16_t proxy::port() const { return core_->http->listen.port(core_->http->service_port); }
std::string proxy::scheme() const { return core_->options.tls ? "https://" : "http://"; }
std::string proxy::url() const { return scheme() + url_host(core_->options.address) + ":" + std::to_string(port()); }
std::optional<std::uint16_t> proxy::control_port() const {
    if (!core_->http->control_port) return std::nullopt;
    return core_->http->listen.port(*core_->http->control_port);
}
std::string proxy::control_url() const {
    const auto control = control_port();
    if (!control) return {};
    return scheme() + url_host(core_->options.control_address) + ":" + std::to_string(*control) +
           std::string{control_prefix};
}
const std::string& proxy::control_token() const { return core_->control_token; }
faultline::time_point proxy::run_start() const { return core_->http->run_start; }
std::size_t proxy::max_connections() const { return core_->http->listen.max_connections(core_->http->service_port); }
void proxy::settle(std::chrono::milliseconds bound) const {
    listener& listen = core_->http->listen;
    if (listen.stopping()) return;
    // Shared with the handlers, which may run after a wait that timed out.
    struct pending {
        std::mutex mutex;
        std::condition_variable done;
        std::size_t left;
    };
    const auto waiting = std::make_shared<pending>();
    waiting->left = listen.workers();
    for (std::size_t worker = 0; worker < listen.workers(); ++worker) {
        boost::asio::post(listen.context(worker), [waiting] {
            const std::lock_guard lock{waiting->mutex};
            if (--waiting->left == 0) waiting->done.notify_one();
        });
    }
    std::unique_lock lock{waiting->mutex};
    waiting->done.wait_for(lock, bound, [&waiting] { return waiting->left == 0; });
}

control_api::options proxy::control_options() const {
    return {{}, [core = core_] { return core->http->read_counters(); }, [core = core_] { return core->http->since_start_ns(); }};
}
proxy_counters proxy::counters() const {
    const core& c = *core_;
    return {c.http->connections.load(), c.http->refused.load(),  c.http->attempts.load(),
            c.upstream().forwarded(),    c.upstream().connects(), c.upstream().failures()};
}

}  // namespace faultline::server
