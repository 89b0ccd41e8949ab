// Many named proxies in one process, and the control API over them (proxy_set.hpp). The control port
// is an HTTP core with no service port and no backend, served by the set's handler.
#include "faultline/server/proxy_set.hpp"

#include "http_core.hpp"

#include "faultline/config/document.hpp"
#include "faultline/faults/rules_toml.hpp"
#include "faultline/server/model_config.hpp"

#include <boost/asio/error.hpp>
#include <boost/json/array.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <limits>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>

namespace faultline::server {

namespace http = boost::beast::http;
namespace json = boost::json;
using boost::system::error_code;
using config::need;

boost::json::object proxy_definition::describe(std::uint16_t port, const std::string& url) const {
    return {{"name", name},
            {"mode", mode},
            {"listen", url_host(listen.address) + ":" + std::to_string(port)},
            {"url", url},
            {"upstream", upstream_text}};
}

// ---- the http mode ----

http_named_proxy::http_named_proxy(std::unique_ptr<server_context> context, proxy_options options)
    : context_{std::move(context)}, proxy_{*context_, std::move(options)}, api_{*context_, proxy_.control_options()} {}

http_named_proxy::~http_named_proxy() { proxy_.stop(); }

error_code http_named_proxy::start() { return proxy_.start(); }
void http_named_proxy::stop() { proxy_.stop(); }
std::uint16_t http_named_proxy::port() const { return proxy_.port(); }
std::string http_named_proxy::url() const { return proxy_.url(); }

control_response http_named_proxy::control(const control_request& req, std::string_view target,
                                           std::string_view peer) {
    proxy_.settle();
    return api_.answer(req, target, peer);
}

proxy_mode http_named_proxy::mode() {
    return {"http", [](const proxy_definition& definition, config::table_reader& keys) -> std::shared_ptr<named_proxy> {
                using std::chrono::milliseconds;
                proxy_options options;
                set_endpoints(options, definition);
                options.tls = definition.tls;
                options.tls_faults = definition.tls_faults;
                // As `faultline proxy --upstream`'s own: a created proxy's journal is judged by the same
                // timing checks, which leave out what its own late spells explain.
                options.watch_lateness = true;
                // TLS to an https:// upstream, verified against `upstream_ca` (else the system's trust
                // store) unless `upstream_insecure`, as `faultline proxy --upstream https://…` does.
                const auto ca = keys.string("upstream_ca");
                const bool insecure = keys.boolean("upstream_insecure").value_or(false);
                if (definition.upstream_https) {
                    options.upstream_tls = tls::client_options{ca.value_or(""), !insecure};
                } else if (ca || insecure) {
                    keys.fail(ca ? "upstream_ca" : "upstream_insecure", "needs upstream = \"https://HOST:PORT\"");
                }
                const auto timeout = [&keys](std::string_view key, milliseconds fallback) {
                    const auto value = keys.duration(key, milliseconds{1}, std::chrono::hours{1});
                    return value ? std::chrono::duration_cast<milliseconds>(*value) : fallback;
                };
                options.connect_timeout = timeout("connect_timeout", options.connect_timeout);
                options.upstream_timeout = timeout("upstream_timeout", options.upstream_timeout);
                // [server] as in a rules file: the routes that say what commits (without them no attempt
                // commits, and no_double_effects has nothing to judge), the limits, the journal's size.
                model_config model;
                if (const toml::table* server = keys.table("server")) {
                    if (auto parsed = parse_model_config(*server, keys.file(), keys.errors())) model = std::move(*parsed);
                }
                std::vector<faults::rule> rules;
                if (const toml::node* faults = keys.source().get("fault")) {
                    keys.allow("fault");
                    faults::rules_result parsed =
                        faults::parse_rules(*faults, keys.file(), {model.limits.max_fault_wait});
                    keys.errors().insert(keys.errors().end(), parsed.errors.begin(), parsed.errors.end());
                    rules = std::move(parsed.rules);
                }
                if (!keys.ok()) return nullptr;
                journal_options journal;
                journal.path = definition.journal;
                try {
                    journal.max_records = model.journal_max_records;
                    auto context = std::make_unique<server_context>(model, std::move(rules), definition.seed,
                                                                    std::move(journal));
                    return std::make_shared<http_named_proxy>(std::move(context), std::move(options));
                } catch (const std::system_error& e) {
                    keys.fail("journal", std::string{"cannot open the journal file: "} + e.what());
                } catch (const std::invalid_argument& e) {
                    keys.fail("fault", e.what());
                }
                return nullptr;
            }};
}

// ---- the set ----

namespace {

json::object description_of(const proxy_definition& definition, const named_proxy& proxy) {
    return definition.describe(proxy.port(), proxy.url());
}

create_result failed(create_failure why, std::vector<std::string> errors) {
    return {nullptr, why, std::move(errors)};
}

create_result invalid(const config_errors& errors) {
    std::vector<std::string> messages;
    for (const config_error& e : errors) messages.push_back(e.to_string());
    return failed(create_failure::invalid, std::move(messages));
}

http::status status_of(create_failure failure) {
    switch (failure) {
    case create_failure::invalid: return http::status::bad_request;
    case create_failure::duplicate_name:
    case create_failure::address_in_use: return http::status::conflict;
    case create_failure::cannot_start: break;
    }
    return http::status::internal_server_error;
}

}  // namespace

struct proxy_set::state {
    struct entry {
        proxy_definition definition;
        std::shared_ptr<named_proxy> proxy;
    };

    state(proxy_set_options opts, std::vector<proxy_mode> extra)
        : options{std::move(opts)},
          token{options.control_token ? *options.control_token : make_control_token()},
          access{token, !is_loopback_address(options.control_address)},
          control_context{model_config{}, {}, options.seed} {
        modes.push_back(http_named_proxy::mode());
        for (proxy_mode& m : extra) modes.push_back(std::move(m));
        // No backend: the core serves only its control port.
        control = std::make_shared<detail::http_core>(
            control_context, steady_clock_source::instance(), detail::http_settings{1, options.drain_timeout, 1024 * 1024, {}, detail::make_listener_tls(options.tls, std::nullopt)},
            nullptr);
    }

    const proxy_mode* find_mode(std::string_view name) const {
        const auto it = std::find_if(modes.begin(), modes.end(), [name](const proxy_mode& m) { return m.name == name; });
        return it == modes.end() ? nullptr : &*it;
    }

    // Callers hold `mutex`.
    std::vector<entry>::iterator find_entry(std::string_view name) {
        return std::find_if(proxies.begin(), proxies.end(), [name](const entry& e) { return e.definition.name == name; });
    }

    // The stopping thread: stops what was deleted, one proxy at a time, off the control thread.
    void stop_deleted() {
        std::unique_lock lock{stopping_mutex};
        while (true) {
            stopping_wake.wait(lock, [this] { return closing || !to_stop.empty(); });
            if (to_stop.empty()) return;  // closing, and nothing is left to stop
            std::shared_ptr<named_proxy> proxy = std::move(to_stop.front());
            to_stop.pop_front();
            lock.unlock();
            proxy->stop();
            proxy.reset();
            lock.lock();
        }
    }

    const proxy_set_options options;
    std::vector<proxy_mode> modes;
    const std::string token;
    const control_access access;
    // What the control port's connections read their limits from; it journals nothing of its own.
    server_context control_context;
    std::shared_ptr<detail::http_core> control;

    mutable std::mutex mutex;
    std::vector<entry> proxies;  // creation order
    std::string default_name;    // "" = none

    std::mutex stopping_mutex;
    std::condition_variable stopping_wake;
    std::deque<std::shared_ptr<named_proxy>> to_stop;
    bool closing = false;
    std::thread stopper;

    std::mutex lifecycle;
    bool started = false;
    bool stopped = false;
};

proxy_set::proxy_set(proxy_set_options options, std::vector<proxy_mode> extra_modes)
    : state_{std::make_shared<state>(std::move(options), std::move(extra_modes))} {
    state_->stopper = std::thread{[s = state_.get()] { s->stop_deleted(); }};
}

proxy_set::~proxy_set() { stop(); }

error_code proxy_set::start() {
    state& s = *state_;
    const std::lock_guard lock{s.lifecycle};
    if (s.started) return boost::asio::error::already_started;
    port_options control;
    control.address = s.options.control_address;
    control.port = s.options.control_port;
    control.allow_non_loopback = s.options.allow_non_loopback;
    // The set outlives its control port: stop() stops it first.
    if (const error_code ec = s.control->open_control_port(
            control, [this](const control_request& req, std::string_view peer) { return handle(req, peer); })) {
        return ec;
    }
    s.started = true;
    s.control->start();
    return {};
}

void proxy_set::stop() {
    state& s = *state_;
    {
        const std::lock_guard lock{s.lifecycle};
        if (s.stopped) return;
        s.stopped = true;
    }
    s.control->stop();
    {
        const std::lock_guard lock{s.stopping_mutex};
        s.closing = true;
    }
    s.stopping_wake.notify_one();
    s.stopper.join();
    std::vector<state::entry> left;
    {
        const std::lock_guard lock{s.mutex};
        left.swap(s.proxies);
    }
    for (state::entry& e : left) e.proxy->stop();
}

create_result proxy_set::create(const toml::table& table, const std::string& source) {
    state& s = *state_;
    config_errors errors;
    config::table_reader keys{table, source, "[[proxy]]", errors};
    proxy_definition definition;
    definition.allow_non_loopback = s.options.allow_non_loopback;
    definition.name = keys.string("name", need::required).value_or("");
    if (!definition.name.empty()) {
        if (const std::string problem = faults::rule_name_problem(definition.name); !problem.empty()) {
            keys.fail("name", problem);
        }
    }
    std::vector<std::string> mode_names;
    for (const proxy_mode& m : s.modes) mode_names.push_back(m.name);
    definition.mode = keys.choice("mode", mode_names).value_or("http");
    if (const auto listen = keys.string("listen")) {
        if (const auto parsed = parse_host_port(*listen)) {
            definition.listen = *parsed;
            if (!definition.allow_non_loopback && !is_loopback_address(parsed->address)) {
                keys.fail("listen", "'" + *listen +
                                        "' is not loopback; start faultline proxy with --allow-non-loopback to "
                                        "listen there");
            }
        } else {
            keys.fail("listen", "expected ADDRESS:PORT (an IP address), e.g. 127.0.0.1:0, got '" + *listen + "'");
        }
    }
    if (const auto upstream = keys.string("upstream", need::required)) {
        definition.upstream_text = *upstream;
        std::string_view host_and_port = *upstream;
        definition.upstream_https = host_and_port.starts_with("https://");
        if (definition.upstream_https) host_and_port.remove_prefix(8);
        if (const auto parsed = parse_host_port(host_and_port); parsed && parsed->port != 0) {
            definition.upstream = *parsed;
        } else {
            keys.fail("upstream", "expected [https://]HOST:PORT with a port 1..65535, e.g. 127.0.0.1:9000, got '" +
                                      *upstream + "'");
        }
        if (definition.upstream_https && definition.mode != "http") {
            keys.fail("upstream", "https:// is for an http proxy (a tcp proxy forwards bytes as they are)");
        }
    }
    if (keys.boolean("tls").value_or(false)) {
        if (definition.mode != "http") {
            keys.fail("tls", "only an http proxy speaks TLS");
        } else if (!s.options.tls) {
            keys.fail("tls", "this faultline proxy has no TLS identity: start it with --tls (or --tls-cert and --tls-key)");
        } else {
            definition.tls = s.options.tls;
            definition.tls_faults = s.options.tls_faults;
        }
    }
    definition.journal = keys.string("journal").value_or("");
    const auto seed = keys.integer("seed", 0, std::numeric_limits<std::int64_t>::max());
    definition.seed = seed ? static_cast<std::uint64_t>(*seed) : s.options.seed;
    std::shared_ptr<named_proxy> proxy;
    if (keys.ok()) proxy = s.find_mode(definition.mode)->make(definition, keys);
    keys.finish();
    if (!errors.empty() || !proxy) return invalid(errors);
    return add(std::move(definition), std::move(proxy), false);
}

create_result proxy_set::create_all(std::string_view config_text, const std::string& file) {
    const config::document document = config::parse_document(config_text, file);
    if (!document.table) return invalid(document.errors);
    config_errors errors;
    config::table_reader top{*document.table, file, "proxy config", errors};
    const toml::array* tables = top.array_of_tables("proxy");
    top.finish();
    if (!errors.empty()) return invalid(errors);
    create_result last;
    if (tables == nullptr) return last;
    for (const toml::node& item : *tables) {
        last = create(*item.as_table(), file);
        if (!last.ok()) return last;
    }
    return last;
}

create_result proxy_set::add(proxy_definition definition, std::shared_ptr<named_proxy> proxy, bool is_default) {
    state& s = *state_;
    // Held while the proxy starts (a bind, its threads): two creations of one name cannot both win.
    const std::lock_guard lock{s.mutex};
    if (s.find_entry(definition.name) != s.proxies.end()) {
        return failed(create_failure::duplicate_name, {"a proxy named '" + definition.name + "' exists already"});
    }
    if (const error_code ec = proxy->start()) {
        const std::string listen = url_host(definition.listen.address) + ":" + std::to_string(definition.listen.port);
        if (ec == boost::asio::error::address_in_use) {
            return failed(create_failure::address_in_use, {"cannot listen on " + listen + ": " + ec.message()});
        }
        if (ec.category() == boost::asio::error::get_netdb_category() ||
            ec.category() == boost::asio::error::get_addrinfo_category()) {
            return failed(create_failure::invalid,
                          {"upstream '" + definition.upstream_text + "' does not resolve: " + ec.message()});
        }
        return failed(create_failure::cannot_start, {"cannot listen on " + listen + ": " + ec.message()});
    }
    if (is_default) s.default_name = definition.name;
    s.proxies.push_back({std::move(definition), proxy});
    return {proxy, std::nullopt, {}};
}

bool proxy_set::remove(std::string_view name) {
    state& s = *state_;
    std::shared_ptr<named_proxy> removed;
    {
        const std::lock_guard lock{s.mutex};
        const auto it = s.find_entry(name);
        if (it == s.proxies.end()) return false;
        removed = std::move(it->proxy);
        s.proxies.erase(it);
        if (s.default_name == name) s.default_name.clear();
    }
    {
        const std::lock_guard lock{s.stopping_mutex};
        s.to_stop.push_back(std::move(removed));
    }
    s.stopping_wake.notify_one();
    return true;
}

std::shared_ptr<named_proxy> proxy_set::find(std::string_view name) const {
    const std::lock_guard lock{state_->mutex};
    const auto it = state_->find_entry(name);
    return it == state_->proxies.end() ? nullptr : it->proxy;
}

json::array proxy_set::describe() const {
    const std::lock_guard lock{state_->mutex};
    json::array out;
    for (const state::entry& e : state_->proxies) out.push_back(description_of(e.definition, *e.proxy));
    return out;
}

std::uint16_t proxy_set::control_port() const {
    return state_->control->listen.port(state_->control->control_port.value_or(0));
}
std::string proxy_set::control_url() const {
    return std::string{state_->options.tls ? "https://" : "http://"} + url_host(state_->options.control_address) + ":" + std::to_string(control_port()) +
           std::string{control_prefix};
}
const std::string& proxy_set::control_token() const { return state_->token; }

control_response proxy_set::handle(const control_request& req, std::string_view peer) {
    if (auto refused = state_->access.refuse(req)) return std::move(*refused);
    try {
        return route(req, peer);
    } catch (const std::exception& e) {
        return control_error(req, http::status::internal_server_error, std::string{"control API failure: "} + e.what());
    }
}

// ---- the control API over the set ----

control_response proxy_set::create_from_body(const control_request& req) {
    std::string problem;
    const std::optional<toml::table> table =
        control_body_table(req, "one proxy: a [[proxy]] table's keys, name, upstream, …", problem);
    if (!table) return control_error(req, http::status::bad_request, std::move(problem));
    // A journal file is the operator's to name (--config): over the API it would let any holder of
    // the token truncate a file of theirs choosing. A created proxy's journal is read with GET …/journal.
    if (table->contains("journal")) {
        return control_error(req, http::status::bad_request,
                             "journal: a journal file is named in --config only; read a created proxy's journal "
                             "with GET /__faultline/proxies/{name}/journal");
    }
    const create_result created = create(*table, "request body");
    if (!created.ok()) {
        json::array messages;
        for (const std::string& m : created.errors) messages.emplace_back(m);
        const std::string summary = created.errors.empty() ? std::string{"proxy not created"} : created.errors.front();
        return control_reply(req, status_of(*created.failure),
                             json::serialize(json::object{{"error", summary}, {"errors", std::move(messages)}}));
    }
    const std::lock_guard lock{state_->mutex};
    const auto it = std::find_if(state_->proxies.begin(), state_->proxies.end(),
                                 [&](const state::entry& e) { return e.proxy == created.proxy; });
    return control_reply(req, http::status::created, json::serialize(description_of(it->definition, *it->proxy)));
}

control_response proxy_set::route(const control_request& req, std::string_view peer) {
    const std::string_view target{req.target().data(), req.target().size()};
    if (!is_control_target(target)) return control_error(req, http::status::not_found, "not a control API path");
    const std::string_view under = target.substr(control_prefix.size());
    const std::string_view path = under.substr(0, under.find('?'));
    const http::verb method = req.method();
    constexpr std::string_view proxies = "proxies";

    if (path == proxies) {
        if (method == http::verb::get) {
            return control_reply(req, http::status::ok, json::serialize(json::object{{"proxies", describe()}}));
        }
        if (method == http::verb::post) return create_from_body(req);
        return control_method_not_allowed(req, "GET, POST");
    }
    if (path.starts_with("proxies/")) {
        const std::string_view rest = under.substr(proxies.size() + 1);
        const std::size_t slash = rest.find('/');
        const std::string_view name = rest.substr(0, std::min(slash, rest.find('?')));
        std::shared_ptr<named_proxy> proxy;
        json::object description;
        {
            const std::lock_guard lock{state_->mutex};
            if (const auto it = state_->find_entry(name); it != state_->proxies.end()) {
                proxy = it->proxy;
                description = description_of(it->definition, *it->proxy);
            }
        }
        if (!proxy) return control_error(req, http::status::not_found, "no proxy named '" + std::string{name} + "'");
        if (slash != std::string_view::npos) {
            return proxy->control(req, std::string{control_prefix} + std::string{rest.substr(slash + 1)}, peer);
        }
        if (method == http::verb::get) return control_reply(req, http::status::ok, json::serialize(description));
        if (method != http::verb::delete_) return control_method_not_allowed(req, "GET, DELETE");
        remove(name);
        return control_reply(req, http::status::ok, json::serialize(json::object{{"deleted", name}}));
    }
    std::shared_ptr<named_proxy> fallback;
    {
        const std::lock_guard lock{state_->mutex};
        if (const auto it = state_->find_entry(state_->default_name); it != state_->proxies.end()) fallback = it->proxy;
    }
    if (fallback) return fallback->control(req, target, peer);
    if (path == "health") {
        if (method != http::verb::get) return control_method_not_allowed(req, "GET");
        const std::size_t count = [this] {
            const std::lock_guard lock{state_->mutex};
            return state_->proxies.size();
        }();
        return control_reply(req, http::status::ok, json::serialize(json::object{{"status", "ok"}, {"proxies", count}}));
    }
    return control_error(req, http::status::not_found,
                         "unknown control path '" + std::string{target} +
                             "'; known: health, proxies, proxies/{name}, proxies/{name}/{its own API's path}");
}

}  // namespace faultline::server
