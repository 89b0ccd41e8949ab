// One `faultline proxy` process running many named proxies (Toxiproxy's workflow: create a proxy,
// add and remove faults per test, delete it). Each proxy has a name, a listen address (loopback, an
// ephemeral port by default), an upstream, a mode (`http`: proxy.hpp, faults per attempt; `tcp`:
// harness/tcp, toxics per connection, registered by whoever links it), its own rules or toxics and
// its own journal. Proxies come from a config file's `[[proxy]]` tables, from the single-proxy
// flags, or at runtime through the set's control API, which is the one control API of serve
// (control_api.hpp: same access rules, same answers) with the proxies above it:
//   GET    /__faultline/proxies                 {"proxies":[{name, mode, listen, url, upstream}, …]}
//   POST   /__faultline/proxies                 create one from a JSON object with a [[proxy]]
//                                               table's keys; 201 with its description
//   GET    /__faultline/proxies/{name}          its description
//   DELETE /__faultline/proxies/{name}          stop and forget it
//   *      /__faultline/proxies/{name}/{path}   its own control API: for http, serve's (rules, reset,
//                                               journal, ledger, stats, health); for tcp, toxics,
//                                               reset, journal, stats, health
//   *      /__faultline/{path}                  the default proxy's own API, when the set has one
//                                               (the proxy the single-proxy flags made); else health
// Errors are {"error": …}: 400 bad JSON, an invalid definition (bad upstream, a non-loopback listen
// without allow_non_loopback, unknown keys), 404 no proxy by that name, 409 a duplicate name or a
// port in use.
//
// A [[proxy]] table (TOML in a config file, the same keys as a JSON object over the API):
//   name = "api"                  # required; A-Z a-z 0-9 . _ : - (a path segment of the API)
//   upstream = "127.0.0.1:9000"   # required; ADDRESS:PORT, a host name resolved at creation
//   listen = "127.0.0.1:0"        # default: loopback, an ephemeral port
//   mode = "http"                 # http (default) | tcp
//   journal = "api.jsonl"         # stream its journal to this file too (default: memory only);
//                                 # a config file's only, refused over the API
//   seed = 7                      # its decisions' seed (default: the set's)
//   ...                           # the mode's own keys: http: [[proxy.fault]] tables, connect_timeout,
//                                 # upstream_timeout; tcp: [[proxy.toxic]] tables, connect_timeout
//
// Deleting a proxy takes it out of the set at once (its name is free again) and stops it on the
// set's own stopping thread: its listener stops accepting, its connections drain within its drain
// time, its journal is flushed. So a DELETE never holds the control port for a drain; the port is
// free again once that stop is done. Thread-safe: the control API runs on the set's control thread,
// the owner's calls on any other.
#pragma once

#include "faultline/config/reader.hpp"
#include "faultline/core/config_error.hpp"
#include "faultline/server/control_api.hpp"
#include "faultline/server/proxy.hpp"
#include "faultline/server/proxy_config.hpp"

#include <boost/json/object.hpp>
#include <boost/system/error_code.hpp>

#include <toml++/toml.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace faultline::server {

// What every proxy of a set is, whatever its mode: read by the set from a [[proxy]] table.
struct proxy_definition {
    std::string name;
    std::string mode = "http";
    host_port listen{"127.0.0.1", 0};
    std::string upstream_text;  // as written, "host:port" or "https://host:port"
    host_port upstream;
    bool upstream_https = false;  // `upstream = "https://…"` (http mode): TLS to the upstream, verified
    std::string journal;  // a file its journal streams to ("" = memory only)
    std::uint64_t seed = 0;
    bool allow_non_loopback = false;  // the set's
    // `tls = true` (http mode): the set's TLS identity, which the proxy serves (proxy_set_options).
    std::optional<tls::key_and_certificate> tls;
    std::optional<tls::bad_certificates> tls_faults;

    // {"name", "mode", "listen", "url", "upstream"} of the proxy running on `port` at `url`: what the
    // control API and the ready file say of it.
    boost::json::object describe(std::uint16_t port, const std::string& url) const;
};

// What every mode's options take from a definition alike: where to listen (and whether beyond
// loopback), the upstream, the name as the journal's instance. `Options`: proxy_options,
// tcp::tcp_proxy_options.
template <class Options>
void set_endpoints(Options& options, const proxy_definition& definition) {
    options.address = definition.listen.address;
    options.port = definition.listen.port;
    options.allow_non_loopback = definition.allow_non_loopback;
    options.upstream_address = definition.upstream.address;
    options.upstream_port = definition.upstream.port;
    options.instance = definition.name;
}

// One running proxy of a set. Stopped by stop() (idempotent) or its destructor, from a thread that is
// not its own.
class named_proxy {
public:
    virtual ~named_proxy() = default;
    // Resolves the upstream, binds, starts. Errors as proxy::start().
    virtual boost::system::error_code start() = 0;
    // Stops accepting, drains, flushes the journal; blocks for the drain.
    virtual void stop() = 0;
    virtual std::uint16_t port() const = 0;
    virtual std::string url() const = 0;  // "http://127.0.0.1:P", "tcp://127.0.0.1:P"
    // Its own control API for `target`, a path under control_prefix (with its query); access is
    // already checked. Never throws.
    virtual control_response control(const control_request& req, std::string_view target, std::string_view peer) = 0;
};

// A mode of proxy: the `mode` key's value and how to build one (not started) from its definition and
// the mode's own keys, read from `keys` (a reader over the [[proxy]] table: problems go to its errors,
// and the set reports every key no one read). Null when it recorded a problem.
struct proxy_mode {
    std::string name;
    std::function<std::shared_ptr<named_proxy>(const proxy_definition&, config::table_reader& keys)> make;
};

// The `http` mode: proxy.hpp with its own server_context (its [[proxy.fault]] rules, its journal).
// Its API answers once the proxy's workers have settled (proxy::settle), so a journal asked for right
// after a reply holds that reply's attempt, as when the control port shared the proxy's thread.
class http_named_proxy final : public named_proxy {
public:
    // The context must hold the rules; options say where to listen and forward.
    http_named_proxy(std::unique_ptr<server_context> context, proxy_options options);
    ~http_named_proxy() override;

    static proxy_mode mode();

    boost::system::error_code start() override;
    void stop() override;
    std::uint16_t port() const override;
    std::string url() const override;
    control_response control(const control_request& req, std::string_view target, std::string_view peer) override;

    server_context& context() { return *context_; }
    const proxy& running() const { return proxy_; }

private:
    std::unique_ptr<server_context> context_;
    proxy proxy_;
    control_api api_;
};

struct proxy_set_options {
    bool allow_non_loopback = false;  // proxies may listen beyond loopback (a sidecar)
    std::uint64_t seed = 0;           // a proxy's seed unless its table names one
    // The control port: 0 = ephemeral; loopback unless asked (then any Host, with the token).
    std::uint16_t control_port = 0;
    std::string control_address = "127.0.0.1";
    std::optional<std::string> control_token;  // nullopt = a fresh random one, "" = none
    std::chrono::milliseconds drain_timeout{1000};  // the control port's
    // The process's TLS (`faultline proxy --tls`): the control port speaks it, and so does every http
    // proxy whose table says `tls = true` (without it such a table is invalid).
    std::optional<tls::key_and_certificate> tls;
    std::optional<tls::bad_certificates> tls_faults;
};

// Why a proxy was not created, and the HTTP status the control API answers it with.
enum class create_failure {
    invalid,         // 400: a bad definition, a bad upstream, a listen address not allowed
    duplicate_name,  // 409
    address_in_use,  // 409: its listen port is taken
    cannot_start,    // 500: listening failed otherwise
};

struct create_result {
    std::shared_ptr<named_proxy> proxy;  // null on failure
    std::optional<create_failure> failure;
    std::vector<std::string> errors;  // what was wrong, one message each
    bool ok() const { return proxy != nullptr; }
};

// The running set: its control port and its proxies. start() once; stop() (idempotent, also the
// destructor's) stops the control port, then every proxy.
class proxy_set {
public:
    // The `http` mode is built in; `extra_modes` adds others (tcp::proxy_mode()).
    explicit proxy_set(proxy_set_options options, std::vector<proxy_mode> extra_modes = {});
    ~proxy_set();
    proxy_set(const proxy_set&) = delete;
    proxy_set& operator=(const proxy_set&) = delete;

    // Opens and starts the control port. Errors: a bad or non-loopback address not allowed, bind.
    boost::system::error_code start();
    void stop();

    // Creates and starts a proxy from a [[proxy]] table (`source` names where it came from in errors).
    create_result create(const toml::table& definition, const std::string& source);
    // Every [[proxy]] table of a config file's text, in order; stops at the first failure, whose
    // result it returns (the proxies made before it stay). A document with other top-level keys is invalid.
    create_result create_all(std::string_view config_text, const std::string& file);
    // Adds and starts a proxy built by the caller (the single-proxy flags); `is_default` makes its API
    // answer /__faultline/{path} as well.
    create_result add(proxy_definition definition, std::shared_ptr<named_proxy> proxy, bool is_default);
    // Takes the proxy out of the set and stops it on the stopping thread. False when there is none.
    bool remove(std::string_view name);

    std::shared_ptr<named_proxy> find(std::string_view name) const;
    // Each proxy's description (definition, listen "address:port", url), in creation order.
    boost::json::array describe() const;

    std::uint16_t control_port() const;
    std::string control_url() const;  // "http://ADDRESS:PORT/__faultline/"
    const std::string& control_token() const;

    // The control port's answer to `req` (access checked first); what the control port runs.
    control_response handle(const control_request& req, std::string_view peer = {});

    struct state;

private:
    control_response route(const control_request& req, std::string_view peer);
    control_response create_from_body(const control_request& req);

    std::shared_ptr<state> state_;
};

}  // namespace faultline::server
