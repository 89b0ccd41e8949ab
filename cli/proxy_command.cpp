// `faultline proxy`: fault-injecting proxies in front of real services, many in one process
// (proxy_set.hpp), each in one of two modes:
//   http: the HTTP/1.1 reverse proxy (proxy.hpp) with faultline serve's rules ([[fault]] rules, and
//     for the flags' proxy a [server] table with its routes as the commit declarations), journaled
//     per attempt;
//   tcp: a TCP proxy for any protocol (tcp_proxy.hpp) with [[toxic]] tables (toxics_config.hpp),
//     journaled per connection.
// The proxies come from the flags (one proxy, the set's default: its API also answers /__faultline/…),
// from --config's [[proxy]] tables, or at runtime through the control API (POST /__faultline/proxies),
// which is always on, on a port of its own:
//   faultline proxy [--mode tcp] --listen 127.0.0.1:P --upstream 127.0.0.1:Q [--rules F] [--journal J]
//   faultline proxy --config proxies.toml
//   faultline proxy --ready-file ready.json      # no proxies yet: the control API only
// Runs until SIGINT or SIGTERM, then stops cleanly and flushes the journals. Exit codes: 2 for bad usage,
// rules, toxics or config (a listen address beyond loopback without --allow-non-loopback too), 3 when the
// flags' upstream is not reachable at start (unless --wait-upstream), a port cannot be listened on, or
// the journal failed.
#include "commands.hpp"
#include "server_setup.hpp"
#include "startup_files.hpp"
#include "tls_setup.hpp"

#include "faultline/config/duration.hpp"
#include "faultline/server/listener.hpp"
#include "faultline/server/proxy.hpp"
#include "faultline/server/proxy_config.hpp"
#include "faultline/server/proxy_set.hpp"
#include "faultline/tls/contexts.hpp"
#include "faultline/tcp/connection_journal.hpp"
#include "faultline/tcp/tcp_named_proxy.hpp"
#include "faultline/tcp/tcp_proxy.hpp"
#include "faultline/tcp/toxics_config.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <cstdint>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace faultline::cli {

namespace {

struct proxy_args {
    std::string mode = "http";
    std::string listen = "127.0.0.1:0";
    std::string upstream;
    std::string rules;
    std::string journal;
    std::string instance;
    std::optional<std::uint64_t> seed;
    std::optional<std::size_t> threads;
    std::string upstream_timeout = "30s";
    std::string connect_timeout = "2s";
    bool wait_upstream = false;
    bool allow_non_loopback = false;
    std::string max_hold = "10m";
    std::size_t max_connections = 10'000;
    std::optional<std::uint16_t> control_port;
    std::string control_listen;
    control_token_options token;
    startup_file_options startup;
    tls_options tls;
    std::string upstream_ca;
    bool upstream_insecure = false;
    std::string config;
    // Options that describe the flags' proxy, to reject them without --upstream, and those that
    // belong to one mode only, to reject them in the other.
    std::vector<const CLI::Option*> single_only;
    std::vector<const CLI::Option*> http_only;
    std::vector<const CLI::Option*> tcp_only;
};

[[noreturn]] void fail(int code) { throw CLI::RuntimeError(code); }

server::host_port host_port_option(const std::string& text, const char* option) {
    const auto parsed = server::parse_host_port(text);
    if (!parsed) {
        std::cerr << "faultline proxy: " << option << " '" << text << "': expected ADDRESS:PORT, e.g. 127.0.0.1:8080\n";
        fail(exit_bad_input);
    }
    return *parsed;
}

std::chrono::milliseconds duration_option(const std::string& text, const char* option) {
    const auto parsed = config::parse_duration(text);
    if (!parsed || *parsed.value < std::chrono::milliseconds{1}) {
        std::cerr << "faultline proxy: " << option << " '" << text << "': "
                  << (parsed ? std::string{"must be at least 1ms"} : parsed.error) << '\n';
        fail(exit_bad_input);
    }
    return std::chrono::duration_cast<std::chrono::milliseconds>(*parsed.value);
}

// The upstream first: a proxy in front of nothing is a setup error (exit 3), unless asked to wait for
// it (a sidecar starting beside its app), polling until it answers or a signal ends the wait (false).
bool upstream_ready(const proxy_args& args, const server::host_port& upstream,
                    std::chrono::milliseconds connect_timeout, termination_signals& signals) {
    auto probe = [&] { return server::probe_upstream(upstream.address, upstream.port, connect_timeout); };
    auto reachable = probe();
    if (reachable && args.wait_upstream) {
        std::cerr << "faultline proxy: waiting for the upstream " << args.upstream << " (" << reachable.message()
                  << ")\n";
        boost::asio::steady_timer poll{signals.io()};
        std::function<void()> again = [&] {
            poll.expires_after(std::chrono::milliseconds{100});
            poll.async_wait([&](const boost::system::error_code& ec) {
                if (ec || signals.received() != 0) return;
                reachable = probe();
                if (reachable) return again();
                signals.cancel();
            });
        };
        again();
        signals.io().run();
        if (signals.received() != 0) {
            std::cerr << "faultline proxy: stopped by signal " << signals.received() << " while waiting for the upstream\n";
            return false;
        }
        signals.rearm();
    }
    if (reachable) {
        std::cerr << "faultline proxy: the upstream " << args.upstream << " is not reachable: " << reachable.message()
                  << " (--wait-upstream waits for it)\n";
        fail(exit_harness_error);
    }
    return true;
}

// Exits 2 when an option of the other mode was given.
void reject_options_of_other_mode(const std::vector<const CLI::Option*>& options, std::string_view other_mode) {
    for (const CLI::Option* option : options) {
        if (option->count() > 0) {
            std::cerr << "faultline proxy: " << option->get_name() << " is for --mode " << other_mode << " only\n";
            fail(exit_bad_input);
        }
    }
}

// --upstream's scheme: https:// means TLS to the upstream, http:// (or none) plain HTTP.
struct upstream_flag {
    std::string host_port;
    bool tls = false;
};
upstream_flag split_upstream(const std::string& text) {
    if (text.rfind("https://", 0) == 0) return {text.substr(8), true};
    if (text.rfind("http://", 0) == 0) return {text.substr(7), false};
    return {text, false};
}

// The proxy the single-proxy flags describe: named by --instance or "default".
server::proxy_definition flags_definition(const proxy_args& args) {
    server::proxy_definition definition;
    definition.name = args.instance.empty() ? "default" : args.instance;
    definition.mode = args.mode;
    const listen_option listen = parse_listen_option(args.listen, "--listen", "proxy", args.allow_non_loopback);
    definition.listen = {listen.address, listen.port.value_or(0)};
    const upstream_flag upstream = split_upstream(args.upstream);
    if (upstream.tls && args.mode != "http") {
        std::cerr << "faultline proxy: --upstream https://… is for --mode http (tcp mode forwards bytes as they are)\n";
        fail(exit_bad_input);
    }
    definition.upstream_text = upstream.host_port;
    definition.upstream = host_port_option(upstream.host_port, "--upstream");
    definition.journal = args.journal;
    definition.allow_non_loopback = args.allow_non_loopback;
    return definition;
}

// Options of either mode from the flags' definition. The journal's instance is --instance alone:
// a proxy without one writes none, as before there were named proxies.
template <class Options>
Options flags_options(const proxy_args& args, const server::proxy_definition& definition) {
    Options options;
    server::set_endpoints(options, definition);
    options.instance = args.instance;
    options.connect_timeout = duration_option(args.connect_timeout, "--connect-timeout");
    return options;
}

// The flags' http proxy: serve's rules file ([[fault]] rules, [server] with its routes).
std::shared_ptr<server::http_named_proxy> make_http_proxy(const proxy_args& args,
                                                           const server::proxy_definition& definition,
                                                           server::serve_config config, std::uint64_t seed,
                                                           const tls_choice& tls) {
    auto options = flags_options<server::proxy_options>(args, definition);
    options.tls = tls.identity;
    if (tls.generated) options.tls_faults = tls.generated->bad();
    if (split_upstream(args.upstream).tls) {
        options.upstream_tls = tls::client_options{args.upstream_ca, !args.upstream_insecure};
        try {
            tls::client_context(*options.upstream_tls);  // an unreadable CA file is refused here
        } catch (const std::runtime_error& e) {
            std::cerr << "faultline proxy: --upstream-ca: " << e.what() << '\n';
            fail(exit_bad_input);
        }
    } else if (!args.upstream_ca.empty() || args.upstream_insecure) {
        std::cerr << "faultline proxy: --upstream-ca and --upstream-insecure need --upstream https://HOST:PORT\n";
        fail(exit_bad_input);
    }
    options.upstream_timeout = duration_option(args.upstream_timeout, "--upstream-timeout");
    server::server_options server_settings;
    faults::engine_limits limits;
    config.settings.apply(server_settings, limits);
    options.threads = args.threads ? *args.threads : server_settings.threads;
    options.body_limit = server_settings.body_limit;
    options.watch_lateness = true;
    return std::make_shared<server::http_named_proxy>(open_server_context(config, seed, args.journal, limits),
                                                       std::move(options));
}

// The flags' tcp proxy: the toxics file instead of the rules, a journal of connections.
std::shared_ptr<tcp::tcp_named_proxy> make_tcp_proxy(const proxy_args& args, const server::proxy_definition& definition,
                                                     std::uint64_t seed) {
    auto options = flags_options<tcp::tcp_proxy_options>(args, definition);
    options.max_hold = duration_option(args.max_hold, "--max-hold");
    options.max_connections = args.max_connections;
    options.seed = seed;
    tcp::toxics_result toxics = args.rules.empty() ? tcp::parse_toxics("", "(no toxics)") : tcp::load_toxics(args.rules);
    if (!toxics.ok()) {
        for (const auto& e : toxics.errors) std::cerr << e.to_string() << '\n';
        fail(exit_bad_input);
    }
    try {
        return std::make_shared<tcp::tcp_named_proxy>(std::move(*toxics.set), std::move(options), args.journal);
    } catch (const std::system_error& e) {
        std::cerr << args.journal << ": cannot open the journal file: " << e.what() << '\n';
        fail(exit_bad_input);
    }
}

// A proxy that was not made: a bad definition or a duplicate name is bad input (2), a port that
// cannot be listened on a harness error (3), as serve's.
[[noreturn]] void report_create_failure(const server::create_result& result, std::string_view what) {
    for (const std::string& e : result.errors) std::cerr << "faultline proxy: " << what << ": " << e << '\n';
    const bool bad_input = result.failure == server::create_failure::invalid ||
                           result.failure == server::create_failure::duplicate_name;
    if (result.failure == server::create_failure::address_in_use || !bad_input) fail(exit_harness_error);
    fail(exit_bad_input);
}

// --config: every [[proxy]] table of the file. An unreadable file is bad input.
void create_from_config(server::proxy_set& set, const std::string& path) {
    std::ifstream in{path};
    if (!in) {
        std::cerr << "faultline proxy: --config " << path << ": cannot be read\n";
        fail(exit_bad_input);
    }
    const std::string text{std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
    const server::create_result made = set.create_all(text, path);
    if (made.failure) report_create_failure(made, "--config " + path);
}

// Exits 2 when an option that describes the flags' proxy was given without --upstream.
void reject_options_without_upstream(const proxy_args& args) {
    if (!args.upstream.empty()) return;
    for (const CLI::Option* option : args.single_only) {
        if (option->count() > 0) {
            std::cerr << "faultline proxy: " << option->get_name()
                      << " describes the proxy the flags make: it needs --upstream\n";
            fail(exit_bad_input);
        }
    }
}

// What `faultline proxy` prints when it stops, per mode of the flags' proxy.
void report_http_stop(const server::http_named_proxy& proxy, const proxy_args& args) {
    const auto counters = proxy.running().counters();
    std::cerr << "after " << counters.attempts << " attempts (" << counters.forwarded << " forwarded, "
              << counters.upstream_failures << " upstream failures) on " << counters.connections << " connections";
    if (!args.journal.empty()) std::cerr << "; journal: " << args.journal;
    std::cerr << '\n';
}

void report_tcp_stop(const tcp::tcp_named_proxy& proxy, const proxy_args& args) {
    const auto counters = proxy.running().counters();
    std::cerr << "after " << counters.connections << " connections (" << counters.toxic_connections
              << " with toxics, " << counters.upstream_failures << " upstream failures), " << counters.bytes_up
              << " bytes up, " << counters.bytes_down << " down";
    if (!args.journal.empty()) std::cerr << "; journal: " << args.journal;
    std::cerr << '\n';
}

void run_proxy(proxy_args& args) {
    reject_options_without_upstream(args);
    if (!args.upstream.empty()) reject_options_of_other_mode(args.mode == "tcp" ? args.http_only : args.tcp_only,
                                                             args.mode == "tcp" ? "http" : "tcp");
    // The control API, as serve's: a port of its own, loopback unless asked (then with a token).
    const control_choice control = choose_control(args.control_listen, args.token, args.allow_non_loopback, "proxy");
    std::optional<server::proxy_definition> definition;
    if (!args.upstream.empty()) definition = flags_definition(args);

    // The flags' http proxy takes its seed from its rules file's [server] table, as serve does.
    server::serve_config rules;
    if (definition && args.mode == "http") rules = load_rules(args.rules);
    const std::uint64_t seed = definition && args.mode == "http" ? choose_seed(args.seed, rules) : choose_seed(args.seed);

    server::proxy_set_options options;
    options.allow_non_loopback = args.allow_non_loopback;
    options.seed = seed;
    options.control_address = control.address;
    options.control_port = control.port ? *control.port : args.control_port.value_or(0);
    options.control_token = control.token.token;
    // --tls: the control port, the flags' http proxy and every [[proxy]] table with `tls = true`.
    const bool wants_tls = args.tls.generate || !args.tls.certificate_file.empty();
    if (wants_tls && definition && args.mode != "http") {
        std::cerr << "faultline proxy: --tls and --tls-cert are for http proxies, not --mode tcp\n";
        fail(exit_bad_input);
    }
    const tls_choice tls = choose_tls(args.tls, definition ? definition->listen.address : control.address, "proxy");
    options.tls = tls.identity;
    if (tls.generated) options.tls_faults = tls.generated->bad();
    server::proxy_set set{options, {tcp::tcp_named_proxy::mode()}};

    std::shared_ptr<server::http_named_proxy> http_proxy;
    std::shared_ptr<tcp::tcp_named_proxy> tcp_proxy;
    if (definition) {
        if (args.mode == "http") {
            http_proxy = make_http_proxy(args, *definition, std::move(rules), seed, tls);
        } else {
            tcp_proxy = make_tcp_proxy(args, *definition, seed);
        }
    }
    termination_signals signals;
    if (definition) {
        const auto upstream = *definition;
        if (!upstream_ready(args, upstream.upstream, duration_option(args.connect_timeout, "--connect-timeout"), signals)) {
            return;
        }
    }
    if (const auto ec = set.start()) {
        std::cerr << "faultline proxy: cannot listen for the control API on " << options.control_address << ": "
                  << ec.message() << '\n';
        fail(exit_harness_error);
    }
    std::shared_ptr<server::named_proxy> flags_proxy =
        http_proxy ? std::shared_ptr<server::named_proxy>{http_proxy} : std::shared_ptr<server::named_proxy>{tcp_proxy};
    if (flags_proxy) {
        const server::create_result added = set.add(*definition, flags_proxy, true);
        if (!added.ok()) report_create_failure(added, "--listen " + args.listen);
    }
    if (!args.config.empty()) create_from_config(set, args.config);

    startup_files announced{args.startup, "proxy"};
    ready_state ready;
    ready.pid = ::getpid();
    ready.seed = seed;
    ready.proxies = set.describe();
    // The flags' proxy comes first when there is one; with no proxy at start, "" and 0.
    if (!ready.proxies->empty()) {
        const auto first = set.find(ready.proxies->front().at("name").as_string());
        ready.url = first->url();
        ready.port = first->port();
    }
    ready.control_url = set.control_url();
    ready.control_port = set.control_port();
    if (!set.control_token().empty()) ready.token = set.control_token();
    if (!tls.ca_file.empty()) ready.ca = tls.ca_file;
    announced.publish(ready);
    std::ostream& banner = announced.stdout_taken() ? std::cerr : std::cout;
    if (http_proxy) {
        const upstream_flag upstream = split_upstream(args.upstream);
        banner << "faultline proxy on " << http_proxy->url() << " -> " << (upstream.tls ? "https://" : "http://")
               << upstream.host_port << " (seed " << seed
               << ")\n";
        if (tls.identity) banner << tls_banner(tls) << '\n';
    } else if (tcp_proxy) {
        banner << "faultline proxy on " << tcp_proxy->url() << " -> tcp://" << args.upstream << " ("
               << tcp_proxy->running().toxics()->toxics.size() << " toxics, seed " << seed << ")\n";
    } else if (tls.identity) {
        banner << tls_banner(tls) << '\n';
    }
    for (const auto& described : set.describe()) {
        const auto& proxy = described.as_object();
        if (flags_proxy && proxy.at("name").as_string() == definition->name) continue;
        banner << "faultline proxy " << proxy.at("name").as_string().c_str() << " on "
               << proxy.at("url").as_string().c_str() << " -> " << proxy.at("upstream").as_string().c_str() << '\n';
    }
    if (ready.proxies->empty()) banner << "faultline proxy: no proxy yet: POST " << set.control_url() << "proxies makes one\n";
    banner << control_banner(set.control_url(), set.control_token(), control.token) << '\n' << std::flush;

    signals.io().run();
    set.stop();

    std::cerr << "faultline proxy: stopped by signal " << signals.received();
    if (http_proxy) {
        std::cerr << ' ';
        report_http_stop(*http_proxy, args);
        if (http_proxy->context().records.failed()) {
            std::cerr << "faultline proxy: the journal failed: " << http_proxy->context().records.error() << '\n';
            fail(exit_harness_error);
        }
    } else if (tcp_proxy) {
        std::cerr << ' ';
        report_tcp_stop(*tcp_proxy, args);
        if (const std::string error = tcp_proxy->journal_error(); !error.empty()) {
            std::cerr << "faultline proxy: the journal failed: " << error << '\n';
            fail(exit_harness_error);
        }
    } else {
        std::cerr << '\n';
    }
}

}  // namespace

void add_proxy_command(CLI::App& app) {
    auto args = std::make_shared<proxy_args>();
    CLI::App* cmd = app.add_subcommand(
        "proxy",
        "Run fault-injecting proxies in front of real services: HTTP reverse proxies (faults per attempt) or TCP "
        "proxies with toxics (any protocol), made from the flags (one proxy: --upstream …), from --config's "
        "[[proxy]] tables, or at runtime through the control API (POST /__faultline/proxies); stop with SIGINT or "
        "SIGTERM");
    const auto single = [&args](CLI::Option* option) {
        args->single_only.push_back(option);
        return option;
    };
    single(cmd->add_option("--mode", args->mode,
                           "The flags' proxy: http (default): HTTP/1.1 reverse proxy, faults per attempt; tcp: byte "
                           "pipe with toxics per connection")
               ->check(CLI::IsMember({"http", "tcp"})));
    single(cmd->add_option("--listen", args->listen,
                           "ADDRESS:PORT the flags' proxy listens on (default 127.0.0.1:0, an ephemeral port; beyond "
                           "loopback only with --allow-non-loopback)"));
    cmd->add_option("--upstream", args->upstream,
                    "[https://]HOST:PORT of the service the flags' proxy forwards to (https://: over TLS, verified; "
                    "without it, no proxy is made from the flags)");
    args->http_only.push_back(single(cmd->add_option("--upstream-ca", args->upstream_ca,
                                                     "http: the CA file that verifies an https:// upstream (default: "
                                                     "the system's trust store)")
                                         ->check(CLI::ExistingFile)));
    args->http_only.push_back(single(cmd->add_flag("--upstream-insecure", args->upstream_insecure,
                                                   "http: do not verify an https:// upstream's certificate (a test "
                                                   "service with a self-signed one)")));
    cmd->add_option("--config", args->config,
                    "TOML file of [[proxy]] tables, one proxy each: name, upstream, listen (default 127.0.0.1:0), "
                    "mode (http|tcp), journal, seed, and the mode's own keys ([[proxy.fault]] rules and "
                    "connect_timeout / upstream_timeout for http; [[proxy.toxic]] tables, connect_timeout, max_hold, "
                    "max_connections for tcp). More are made and deleted at runtime through the control API")
        ->check(CLI::ExistingFile);
    single(cmd->add_option("--rules", args->rules,
                           "http: TOML file with [[fault]] rules and an optional [server] table (its routes declare "
                           "what commits); tcp: TOML file with [[toxic]] tables"));
    single(cmd->add_option("--journal", args->journal, "Stream the flags' proxy's journal to this file as JSON Lines"));
    single(cmd->add_option("--instance", args->instance,
                           "Name of the flags' proxy (default \"default\"), written into every journal record"));
    cmd->add_option("--seed", args->seed,
                    "Seed of the fault / toxic decisions (default: http: the rules' [server] seed; else random)");
    args->http_only.push_back(single(
        cmd->add_option("--threads", args->threads, "http: worker threads (default: [server] threads, else 1)")
            ->check(CLI::Range(1, 256))));
    args->http_only.push_back(single(cmd->add_option("--upstream-timeout", args->upstream_timeout,
                                                     "http: forwarded -> complete upstream reply, else 504 (default 30s)")));
    single(cmd->add_option("--connect-timeout", args->connect_timeout,
                           "Upstream connect, else 502 (tcp: the client is reset) (default 2s)"));
    args->tcp_only.push_back(single(cmd->add_option("--max-hold", args->max_hold,
                                                    "tcp: the longest a timeout toxic with timeout 0 holds a connection "
                                                    "(default 10m)")));
    args->tcp_only.push_back(single(cmd->add_option("--max-connections", args->max_connections,
                                                    "tcp: open connections at most; more are reset on accept (default "
                                                    "10000)")
                                        ->check(CLI::Range(1, 1'000'000))));
    auto* control_port =
        cmd->add_option("--control-port", args->control_port, "Port of the control API (default: ephemeral)");
    cmd->add_option("--control-listen", args->control_listen,
                    "ADDRESS[:PORT] of the control API (default 127.0.0.1; another address needs "
                    "--allow-non-loopback and a token)")
        ->excludes(control_port);
    add_control_token_options(*cmd, args->token);
    add_startup_file_options(*cmd, args->startup);
    add_tls_options(*cmd, args->tls);
    single(cmd->add_flag("--wait-upstream", args->wait_upstream,
                         "Wait for an unreachable upstream of the flags' proxy instead of exiting 3"));
    cmd->add_flag("--allow-non-loopback", args->allow_non_loopback,
                  "Allow proxies (--listen, a [[proxy]] table's or a created proxy's listen) and the control API "
                  "on addresses other than loopback (a sidecar's pod address); refused otherwise (exit 2, 400 over "
                  "the API)");
    cmd->callback([args] { run_proxy(*args); });
}

}  // namespace faultline::cli
