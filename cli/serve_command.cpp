// `faultline serve`: the fault-injecting server for any client in any language. Loads the rules
// file, starts the server on 127.0.0.1, prints its URL and the control API's (a second port, behind a
// token that is random unless --control-token sets it or --no-control-token drops it), and runs
// until SIGINT or SIGTERM, then stops cleanly and flushes the journal. The journal opens with a
// wall-clock anchor (a `started` event), as the proxy's does, for merged journals.
#include "commands.hpp"
#include "server_setup.hpp"

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
    std::optional<std::uint64_t> seed;
    std::optional<std::size_t> threads;
    std::string journal;
    std::optional<std::string> control_token;
    bool no_control_token = false;
};

[[noreturn]] void fail(int code) { throw CLI::RuntimeError(code); }

void run_serve(const serve_args& args) {
    harness::serve_config config = load_rules(args.rules);

    harness::server_options options;
    faults::engine_limits limits;
    config.settings.apply(options, limits);
    if (args.port) options.port = *args.port;
    if (args.control_port) options.control_port = *args.control_port;
    // The control API always has its own listener: the service port never serves it.
    if (!options.control_port) options.control_port = 0;
    if (args.control_token) options.control_token = *args.control_token;
    if (args.no_control_token) options.control_token = std::string{};
    if (args.threads) options.threads = *args.threads;
    const std::uint64_t seed = choose_seed(args.seed, config);
    const auto context = open_server_context(config, seed, args.journal, limits);
    termination_signals signals;

    harness::server server{*context, options};
    // The journal's first line: its wall-clock anchor, so `faultline check a.jsonl b.jsonl` can put
    // several instances on one timeline. Written before the server listens, so nothing precedes it.
    faultline::clock& time = faultline::steady_clock_source::instance();
    context->records.append_event(
        harness::wall_clock_anchor(
            std::chrono::duration_cast<std::chrono::nanoseconds>(time.now() - server.run_start()).count(),
            time.wall_now(), ""));
    if (const auto ec = server.start()) {
        std::cerr << "faultline serve: cannot listen on " << options.address << ':' << options.port << ": "
                  << ec.message() << '\n';
        fail(exit_harness_error);
    }
    std::cout << "faultline serving on " << server.url() << " (seed " << seed << ")\n"
              << "control API: " << server.control_url();
    if (server.control_token().empty()) {
        std::cout << " (no token)\n";
    } else {
        std::cout << " (Authorization: Bearer " << server.control_token() << ")\n";
    }
    std::cout << std::flush;
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
    cmd->add_option("--rules", args->rules, "TOML file with [[fault]] rules and an optional [server] table")
        ->required();
    cmd->add_option("--port", args->port, "Port to listen on (default: [server] port, else ephemeral)");
    cmd->add_option("--control-port", args->control_port,
                    "Port of the control API (default: [server] control_port, else ephemeral)");
    auto* token = cmd->add_option("--control-token", args->control_token,
                                  "Token the control API requires (default: a random one, printed at start)");
    cmd->add_flag("--no-control-token", args->no_control_token,
                  "Serve the control API without a token (loopback Host/Origin checks still apply)")
        ->excludes(token);
    cmd->add_option("--seed", args->seed, "Seed of the fault decisions (default: [server] seed, else random)");
    cmd->add_option("--journal", args->journal, "Stream the journal to this file as JSON Lines");
    cmd->add_option("--threads", args->threads, "Worker threads (default: [server] threads, else 1)")
        ->check(CLI::Range(1, 256));
    cmd->callback([args] { run_serve(*args); });
}

}  // namespace faultline::cli
