// `faultline serve`: the fault-injecting server for any client in any language. Loads the rules
// file, starts the server on 127.0.0.1 (or --listen, beyond loopback only with --allow-non-loopback),
// prints its URL and the control API's (a second port, loopback unless --control-listen, behind a
// token: random unless --control-token-file, the FAULTLINE_CONTROL_TOKEN environment variable or
// --control-token sets it, or --no-control-token drops it; an empty one is refused, since it would
// switch authentication off unasked), writes the ready / env files (startup_files.hpp), and runs
// until SIGINT or SIGTERM, then stops cleanly and flushes the journal. With --tls (or --tls-cert and
// --tls-key) both ports speak TLS (tls_setup.hpp). The journal opens with a
// wall-clock anchor (a `started` event), as the proxy's does, for merged journals.
#include "commands.hpp"
#include "server_setup.hpp"
#include "startup_files.hpp"
#include "tls_setup.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <iostream>
#include <optional>
#include <string>

namespace faultline::cli {

namespace {

struct serve_args {
    std::string rules;
    std::optional<std::uint16_t> port;
    std::optional<std::uint16_t> control_port;
    std::string listen;
    std::string control_listen;
    bool allow_non_loopback = false;
    std::optional<std::uint64_t> seed;
    std::optional<std::size_t> threads;
    std::string journal;
    control_token_options token;
    startup_file_options startup;
    tls_options tls;
};

[[noreturn]] void fail(int code) { throw CLI::RuntimeError(code); }

void run_serve(const serve_args& args) {
    server::serve_config config = load_rules(args.rules);

    server::server_options options;
    faults::engine_limits limits;
    config.settings.apply(options, limits);
    options.allow_non_loopback = args.allow_non_loopback;
    options.watch_lateness = true;
    if (!args.listen.empty()) {
        const listen_option listen = parse_listen_option(args.listen, "--listen", "serve", args.allow_non_loopback);
        options.address = listen.address;
        if (listen.port) options.port = *listen.port;
    }
    if (args.port) options.port = *args.port;
    if (args.control_port) options.control_port = *args.control_port;
    const control_choice control = choose_control(args.control_listen, args.token, args.allow_non_loopback, "serve");
    options.control_address = control.address;
    if (control.port) options.control_port = *control.port;
    // The control API always has its own listener: the service port never serves it.
    if (!options.control_port) options.control_port = 0;
    const chosen_token& token = control.token;
    if (token.token) options.control_token = *token.token;
    if (args.threads) options.threads = *args.threads;
    const tls_choice tls = choose_tls(args.tls, options.address, "serve");
    options.tls = tls.identity;
    if (tls.generated) options.tls_faults = tls.generated->bad();
    const std::uint64_t seed = choose_seed(args.seed, config);
    const auto context = open_server_context(config, seed, args.journal, limits);
    termination_signals signals;

    server::server server{*context, options};
    // The journal's first line: its wall-clock anchor, so `faultline check a.jsonl b.jsonl` can put
    // several instances on one timeline. Written before the server listens, so nothing precedes it.
    faultline::clock& time = faultline::steady_clock_source::instance();
    context->records.append_event(
        record::wall_clock_anchor(
            std::chrono::duration_cast<std::chrono::nanoseconds>(time.now() - server.run_start()).count(),
            time.wall_now(), "", seed));
    if (const auto ec = server.start()) {
        std::cerr << "faultline serve: cannot open the " << server.unopened_listener() << ": " << ec.message() << '\n';
        fail(exit_harness_error);
    }
    startup_files announced{args.startup, "serve"};
    ready_state ready;
    ready.pid = ::getpid();
    ready.seed = seed;
    ready.url = server.url();
    ready.port = server.port();
    ready.control_url = server.control_url();
    ready.control_port = server.control_port();
    if (!server.control_token().empty()) ready.token = server.control_token();
    if (!tls.ca_file.empty()) ready.ca = tls.ca_file;
    announced.publish(ready);
    std::ostream& banner = announced.stdout_taken() ? std::cerr : std::cout;
    banner << "faultline serving on " << server.url() << " (seed " << seed << ")\n"
           << control_banner(server.control_url(), server.control_token(), token) << '\n';
    if (tls.identity) banner << tls_banner(tls) << '\n';
    banner << std::flush;
    if (server.max_connections() < context->limits.max_connections) {
        std::cerr << "faultline serve: max_connections lowered from " << context->limits.max_connections << " to "
                  << server.max_connections() << " to fit the descriptor limit (ulimit -n)\n";
    }

    signals.io().run();
    server.stop();

    const auto counters = server.counters();
    std::cerr << "faultline serve: stopped by signal " << signals.received() << " after " << counters.attempts
              << " attempts on " << counters.connections << " connections";
    if (!args.journal.empty()) std::cerr << "; journal: " << args.journal;
    std::cerr << '\n';
    if (context->records.failed()) {
        std::cerr << "faultline serve: the journal failed: " << context->records.error() << '\n';
        fail(exit_harness_error);
    }
}

}  // namespace

void add_serve_command(CLI::App& app) {
    auto args = std::make_shared<serve_args>();
    CLI::App* cmd = app.add_subcommand(
        "serve", "Run the fault-injecting server on 127.0.0.1 for any client; stop with SIGINT or SIGTERM");
    cmd->add_option("--rules", args->rules,
                    "TOML file with [[fault]] rules and an optional [server] table (default: no rules; add them "
                    "through the control API)");
    auto* port = cmd->add_option("--port", args->port, "Port to listen on (default: [server] port, else ephemeral)");
    cmd->add_option("--listen", args->listen,
                    "ADDRESS[:PORT] to listen on (default 127.0.0.1; another address needs --allow-non-loopback)")
        ->excludes(port);
    auto* control_port = cmd->add_option("--control-port", args->control_port,
                                         "Port of the control API (default: [server] control_port, else ephemeral)");
    cmd->add_option("--control-listen", args->control_listen,
                    "ADDRESS[:PORT] of the control API (default 127.0.0.1; another address needs "
                    "--allow-non-loopback and a token)")
        ->excludes(control_port);
    cmd->add_flag("--allow-non-loopback", args->allow_non_loopback,
                  "Allow --listen / --control-listen on an address other than loopback (0.0.0.0 in a container)");
    add_control_token_options(*cmd, args->token);
    add_startup_file_options(*cmd, args->startup);
    add_tls_options(*cmd, args->tls);
    cmd->add_option("--seed", args->seed, "Seed of the fault decisions (default: [server] seed, else random)");
    cmd->add_option("--journal", args->journal, "Stream the journal to this file as JSON Lines");
    cmd->add_option("--threads", args->threads, "Worker threads (default: [server] threads, else 1)")
        ->check(CLI::Range(1, 256));
    cmd->callback([args] { run_serve(*args); });
}

}  // namespace faultline::cli
