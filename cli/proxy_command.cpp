// `faultline proxy`: the fault-injecting proxy in front of a real service, in one of two modes:
//   --mode http (default): the HTTP/1.1 reverse proxy (proxy.hpp) with faultline serve's rules file
//     ([[fault]] rules, [server] with its routes as the commit declarations), journaled per attempt;
//   --mode tcp: a TCP proxy for any protocol (tcp_proxy.hpp) whose --rules file holds [[toxic]]
//     tables (toxics_config.hpp), journaled per connection.
//   faultline proxy [--mode tcp] --listen 127.0.0.1:P --upstream 127.0.0.1:Q [--rules F] [--journal J]
// Runs until SIGINT or SIGTERM, then stops cleanly and flushes the journal. Exit codes: 2 for bad usage,
// rules or toxics, 3 when the upstream is not reachable at start (unless --wait-upstream), the proxy
// cannot listen, or the journal failed.
#include "commands.hpp"
#include "server_setup.hpp"
#include "startup_files.hpp"

#include "faultline/config/duration.hpp"
#include "faultline/server/listener.hpp"
#include "faultline/server/proxy.hpp"
#include "faultline/server/proxy_config.hpp"
#include "faultline/tcp/connection_journal.hpp"
#include "faultline/tcp/tcp_proxy.hpp"
#include "faultline/tcp/toxics_config.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <unistd.h>

#include <chrono>
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
    // Options that belong to one mode only, to reject them in the other.
    std::vector<const CLI::Option*> http_only;
    std::vector<const CLI::Option*> tcp_only;
};

[[noreturn]] void fail(int code) { throw CLI::RuntimeError(code); }

harness::host_port host_port_option(const std::string& text, const char* option) {
    const auto parsed = harness::parse_host_port(text);
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
bool upstream_ready(const proxy_args& args, const harness::host_port& upstream,
                    std::chrono::milliseconds connect_timeout, termination_signals& signals) {
    auto probe = [&] { return harness::probe_upstream(upstream.address, upstream.port, connect_timeout); };
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

void report_listen_failure(const proxy_args& args, const boost::system::error_code& ec) {
    std::cerr << "faultline proxy: cannot listen on " << args.listen << ": " << ec.message();
    if (ec == boost::asio::error::access_denied) std::cerr << " (not loopback: pass --allow-non-loopback)";
    std::cerr << '\n';
    fail(exit_harness_error);
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

// What both modes' options hold alike: where to listen, where the upstream is, how long a connect
// may take, the instance name. `Options`: harness::proxy_options or tcp::tcp_proxy_options.
template <class Options>
void set_endpoints(Options& options, const proxy_args& args, const harness::host_port& listen,
                   const harness::host_port& upstream) {
    options.address = listen.address;
    options.port = listen.port;
    options.allow_non_loopback = args.allow_non_loopback;
    options.upstream_address = upstream.address;
    options.upstream_port = upstream.port;
    options.connect_timeout = duration_option(args.connect_timeout, "--connect-timeout");
    options.instance = args.instance;
}

// What the ready file says of a started proxy: the one proxy, named by --instance or "default".
ready_state ready_proxy(const proxy_args& args, const harness::host_port& listen, const std::string& url,
                        std::uint16_t port, std::uint64_t seed) {
    ready_state ready;
    ready.pid = ::getpid();
    ready.seed = seed;
    ready.url = url;
    ready.port = port;
    ready.proxies = boost::json::array{boost::json::object{
        {"name", args.instance.empty() ? "default" : args.instance},
        {"mode", args.mode},
        {"listen", harness::url_host(listen.address) + ":" + std::to_string(port)},
        {"url", url},
        {"upstream", args.upstream}}};
    return ready;
}

void run_http_proxy(const proxy_args& args) {
    reject_options_of_other_mode(args.tcp_only, "tcp");
    const harness::host_port listen = host_port_option(args.listen, "--listen");
    const harness::host_port upstream = host_port_option(args.upstream, "--upstream");
    harness::proxy_options options;
    set_endpoints(options, args, listen, upstream);
    options.upstream_timeout = duration_option(args.upstream_timeout, "--upstream-timeout");
    // The control API, as serve's: a port of its own, loopback unless asked (then with a token).
    const control_choice control = choose_control(args.control_listen, args.token, args.allow_non_loopback, "proxy");
    options.control_address = control.address;
    options.control_port = control.port ? *control.port : args.control_port.value_or(0);
    const chosen_token& token = control.token;
    options.control_token = token.token;

    // No rules file: a plain forwarding proxy that journals every attempt.
    harness::serve_config config = load_rules(args.rules);
    harness::server_options unused_server_options;
    faults::engine_limits limits;
    config.settings.apply(unused_server_options, limits);
    options.threads = args.threads ? *args.threads : unused_server_options.threads;
    options.body_limit = unused_server_options.body_limit;
    const std::uint64_t seed = choose_seed(args.seed, config);
    const auto context = open_server_context(config, seed, args.journal, limits);
    termination_signals signals;

    if (!upstream_ready(args, upstream, options.connect_timeout, signals)) return;

    harness::proxy proxy{*context, options};
    if (const auto ec = proxy.start()) report_listen_failure(args, ec);
    startup_files announced{args.startup, "proxy"};
    ready_state ready = ready_proxy(args, listen, proxy.url(), proxy.port(), seed);
    ready.control_url = proxy.control_url();
    ready.control_port = proxy.control_port();
    if (!proxy.control_token().empty()) ready.token = proxy.control_token();
    announced.publish(ready);
    std::ostream& banner = announced.stdout_taken() ? std::cerr : std::cout;
    banner << "faultline proxy on " << proxy.url() << " -> http://" << args.upstream << " (seed " << seed << ")\n"
           << control_banner(proxy.control_url(), proxy.control_token(), token) << '\n'
           << std::flush;

    signals.io().run();
    proxy.stop();

    const auto counters = proxy.counters();
    std::cerr << "faultline proxy: stopped by signal " << signals.received() << " after " << counters.attempts << " attempts ("
              << counters.forwarded << " forwarded, " << counters.upstream_failures << " upstream failures) on "
              << counters.connections << " connections";
    if (!args.journal.empty()) std::cerr << "; journal: " << args.journal;
    std::cerr << '\n';
    if (context->records.failed()) {
        std::cerr << "faultline proxy: the journal failed: " << context->records.error() << '\n';
        fail(exit_harness_error);
    }
}

// --mode tcp: the toxics file instead of the rules, a journal of connections instead of attempts.
void run_tcp_proxy(const proxy_args& args) {
    reject_options_of_other_mode(args.http_only, "http");
    const harness::host_port listen = host_port_option(args.listen, "--listen");
    const harness::host_port upstream = host_port_option(args.upstream, "--upstream");
    tcp::tcp_proxy_options options;
    set_endpoints(options, args, listen, upstream);
    options.max_hold = duration_option(args.max_hold, "--max-hold");
    options.max_connections = args.max_connections;

    tcp::toxics_result toxics = args.rules.empty() ? tcp::parse_toxics("", "(no toxics)") : tcp::load_toxics(args.rules);
    if (!toxics.ok()) {
        for (const auto& e : toxics.errors) std::cerr << e.to_string() << '\n';
        fail(exit_bad_input);
    }
    options.seed = choose_seed(args.seed);

    // The journal is opened before the proxy listens, its anchor on the proxy's clock; connections
    // are journaled from the proxy's thread as they end.
    std::unique_ptr<tcp::connection_journal> journal;
    tcp::tcp_proxy proxy{std::make_shared<const tcp::toxic_set>(std::move(*toxics.set)), options, [&journal](const tcp::connection_record& record) {
                             if (journal) journal->append(record);
                         }};
    if (!args.journal.empty()) {
        const auto& clock = steady_clock_source::instance();
        try {
            journal = std::make_unique<tcp::connection_journal>(
                args.journal, std::chrono::duration_cast<std::chrono::nanoseconds>(clock.now() - proxy.run_start()).count(),
                clock.wall_now(), args.instance);
        } catch (const std::system_error& e) {
            std::cerr << args.journal << ": cannot open the journal file: " << e.what() << '\n';
            fail(exit_bad_input);
        }
    }
    termination_signals signals;
    if (!upstream_ready(args, upstream, options.connect_timeout, signals)) return;

    if (const auto ec = proxy.start()) report_listen_failure(args, ec);
    const std::string url = "tcp://" + harness::url_host(listen.address) + ':' + std::to_string(proxy.port());
    startup_files announced{args.startup, "proxy"};
    announced.publish(ready_proxy(args, listen, url, proxy.port(), options.seed));
    std::ostream& banner = announced.stdout_taken() ? std::cerr : std::cout;
    banner << "faultline proxy on " << url << " -> tcp://" << args.upstream << " (" << proxy.toxics()->toxics.size()
           << " toxics, seed " << options.seed << ")\n"
           << std::flush;

    signals.io().run();
    proxy.stop();

    const auto counters = proxy.counters();
    std::cerr << "faultline proxy: stopped by signal " << signals.received() << " after " << counters.connections
              << " connections (" << counters.toxic_connections << " with toxics, " << counters.upstream_failures
              << " upstream failures), " << counters.bytes_up << " bytes up, " << counters.bytes_down << " down";
    if (!args.journal.empty()) std::cerr << "; journal: " << args.journal;
    std::cerr << '\n';
    if (journal && journal->failed()) {
        std::cerr << "faultline proxy: the journal failed: " << journal->error() << '\n';
        fail(exit_harness_error);
    }
}

}  // namespace

void add_proxy_command(CLI::App& app) {
    auto args = std::make_shared<proxy_args>();
    CLI::App* cmd = app.add_subcommand(
        "proxy",
        "Run the fault-injecting proxy in front of a real service: an HTTP reverse proxy (--mode http), or a TCP "
        "proxy with toxics for any protocol (--mode tcp); stop with SIGINT or SIGTERM");
    cmd->add_option("--mode", args->mode,
                    "http (default): HTTP/1.1 reverse proxy, faults per attempt; tcp: byte pipe with toxics per "
                    "connection")
        ->check(CLI::IsMember({"http", "tcp"}));
    cmd->add_option("--listen", args->listen, "ADDRESS:PORT to listen on (default 127.0.0.1:0, an ephemeral port)");
    cmd->add_option("--upstream", args->upstream, "ADDRESS:PORT of the service to forward to")->required();
    cmd->add_option("--rules", args->rules,
                    "http: TOML file with [[fault]] rules and an optional [server] table (its routes declare what "
                    "commits); tcp: TOML file with [[toxic]] tables");
    cmd->add_option("--journal", args->journal, "Stream the journal to this file as JSON Lines");
    cmd->add_option("--instance", args->instance, "Name written into every journal record (merged journals)");
    cmd->add_option("--seed", args->seed,
                    "Seed of the fault / toxic decisions (default: http: the rules' [server] seed; else random)");
    args->http_only.push_back(cmd->add_option("--threads", args->threads, "http: worker threads (default: [server] threads, else 1)")
        ->check(CLI::Range(1, 256)));
    args->http_only.push_back(cmd->add_option("--upstream-timeout", args->upstream_timeout,
                    "http: forwarded -> complete upstream reply, else 504 (default 30s)"));
    cmd->add_option("--connect-timeout", args->connect_timeout,
                    "Upstream connect, else 502 (tcp: the client is reset) (default 2s)");
    args->tcp_only.push_back(cmd->add_option("--max-hold", args->max_hold,
                                             "tcp: the longest a timeout toxic with timeout 0 holds a connection "
                                             "(default 10m)"));
    args->tcp_only.push_back(cmd->add_option("--max-connections", args->max_connections,
                                             "tcp: open connections at most; more are reset on accept (default 10000)")
                                 ->check(CLI::Range(1, 1'000'000)));
    auto* control_port =
        cmd->add_option("--control-port", args->control_port, "http: port of the control API (default: ephemeral)");
    args->http_only.push_back(control_port);
    args->http_only.push_back(cmd->add_option("--control-listen", args->control_listen,
                                              "http: ADDRESS[:PORT] of the control API (default 127.0.0.1; another "
                                              "address needs --allow-non-loopback and a token)")
                                  ->excludes(control_port));
    add_control_token_options(*cmd, args->token);
    for (const char* name : {"--control-token", "--control-token-file", "--no-control-token"}) {
        args->http_only.push_back(cmd->get_option(name));
    }
    add_startup_file_options(*cmd, args->startup);
    cmd->add_flag("--wait-upstream", args->wait_upstream,
                  "Wait for an unreachable upstream instead of exiting 3");
    cmd->add_flag("--allow-non-loopback", args->allow_non_loopback,
                  "Allow --listen on an address other than loopback (a sidecar's pod address)");
    cmd->callback([args] {
        if (args->mode == "tcp") return run_tcp_proxy(*args);
        run_http_proxy(*args);
    });
}

}  // namespace faultline::cli
