// `faultline serve`: the fault-injecting server for any client in any language. Loads the rules
// file, starts the server on 127.0.0.1, prints its URL and the control API's (a second port, behind a
// token: random unless --control-token-file, the FAULTLINE_CONTROL_TOKEN environment variable or
// --control-token sets it, or --no-control-token drops it; an empty one is refused, since it would
// switch authentication off unasked), and runs until SIGINT or SIGTERM, then stops cleanly and
// flushes the journal. The journal opens with a wall-clock anchor (a `started` event), as the
// proxy's does, for merged journals.
#include "commands.hpp"
#include "server_setup.hpp"

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
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
    std::string control_token_file;
    bool no_control_token = false;
};

[[noreturn]] void fail(int code) { throw CLI::RuntimeError(code); }

constexpr const char* token_variable = "FAULTLINE_CONTROL_TOKEN";

// The control token and where it came from, for the banner: a token read from a file or the
// environment is not printed back (it is not on the command line, and should not end up in a log).
struct chosen_token {
    std::optional<std::string> token;  // nullopt: a random one (the server makes it)
    std::string source;                // "" when it may be printed
};

// An empty token would serve the control API to anyone, silently: refused, exit 2.
std::string non_empty(std::string token, const std::string& where) {
    const auto end = token.find_last_not_of(" \t\r\n");
    token.erase(end == std::string::npos ? 0 : end + 1);
    if (token.empty()) {
        std::cerr << "faultline serve: " << where << " is empty; an empty token would switch the control API's "
                  << "authentication off (--no-control-token does that, if it is what you want)\n";
        fail(exit_bad_input);
    }
    return token;
}

chosen_token choose_control_token(const serve_args& args) {
    if (args.no_control_token) return {std::string{}, ""};
    if (args.control_token) {
        std::cerr << "faultline serve: note: a token on the command line is visible to every local user (ps); "
                  << "--control-token-file or " << token_variable << " keep it out of sight\n";
        return {non_empty(*args.control_token, "--control-token"), ""};
    }
    if (!args.control_token_file.empty()) {
        std::ifstream in{args.control_token_file};
        if (!in) {
            std::cerr << "faultline serve: --control-token-file " << args.control_token_file << ": cannot read it\n";
            fail(exit_bad_input);
        }
        std::string token{std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
        return {non_empty(std::move(token), "--control-token-file " + args.control_token_file), "--control-token-file"};
    }
    if (const char* from_environment = std::getenv(token_variable)) {
        return {non_empty(from_environment, token_variable), token_variable};
    }
    return {std::nullopt, ""};
}

void run_serve(const serve_args& args) {
    harness::serve_config config = load_rules(args.rules);

    harness::server_options options;
    faults::engine_limits limits;
    config.settings.apply(options, limits);
    if (args.port) options.port = *args.port;
    if (args.control_port) options.control_port = *args.control_port;
    // The control API always has its own listener: the service port never serves it.
    if (!options.control_port) options.control_port = 0;
    const chosen_token token = choose_control_token(args);
    if (token.token) options.control_token = *token.token;
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
            time.wall_now(), "", seed));
    if (const auto ec = server.start()) {
        std::cerr << "faultline serve: cannot listen on " << options.address << ':' << options.port << ": "
                  << ec.message() << '\n';
        fail(exit_harness_error);
    }
    std::cout << "faultline serving on " << server.url() << " (seed " << seed << ")\n"
              << "control API: " << server.control_url();
    if (server.control_token().empty()) {
        std::cout << " (no token)\n";
    } else if (!token.source.empty()) {
        std::cout << " (Authorization: Bearer, the token from " << token.source << ")\n";
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
                                  "Token the control API requires (default: FAULTLINE_CONTROL_TOKEN, else a random "
                                  "one, printed at start); visible in ps: prefer --control-token-file");
    auto* token_file = cmd->add_option("--control-token-file", args->control_token_file,
                                       "Read the control API's token from this file (trailing whitespace dropped)")
                           ->excludes(token);
    cmd->add_flag("--no-control-token", args->no_control_token,
                  "Serve the control API without a token (loopback Host/Origin checks still apply)")
        ->excludes(token)
        ->excludes(token_file);
    cmd->add_option("--seed", args->seed, "Seed of the fault decisions (default: [server] seed, else random)");
    cmd->add_option("--journal", args->journal, "Stream the journal to this file as JSON Lines");
    cmd->add_option("--threads", args->threads, "Worker threads (default: [server] threads, else 1)")
        ->check(CLI::Range(1, 256));
    cmd->callback([args] { run_serve(*args); });
}

}  // namespace faultline::cli
