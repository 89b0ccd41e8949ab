// What the long-running server commands (`serve`, `proxy`) share between parsing their flags and
// listening: the rules file, the seed, the server context with its journal, the control API's token
// and listen options, and the wait for SIGINT or SIGTERM. Failures print why and throw CLI::RuntimeError with the exit code (commands.hpp).
#pragma once

#include "faultline/server/serve_config.hpp"
#include "faultline/server/server.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <CLI/App.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace faultline::cli {

// The rules file ([[fault]] rules and [server]); an empty path is an empty rule set. Bad rules: exit 2.
server::serve_config load_rules(const std::string& path);

// --seed, else the rules file's [server] seed, else a random one (printed by the command).
std::uint64_t choose_seed(std::optional<std::uint64_t> flag, const server::serve_config& config);
// --seed, else a random one (a file without a seed of its own: proxy --mode tcp's toxics).
std::uint64_t choose_seed(std::optional<std::uint64_t> flag);

// The server context, journaling to `journal_path` when it is not empty. An unopenable journal: exit 2.
std::unique_ptr<server::server_context> open_server_context(server::serve_config& config, std::uint64_t seed,
                                                             const std::string& journal_path,
                                                             const faults::engine_limits& limits);

// The control API's token options: --control-token, --control-token-file, --no-control-token (and
// the FAULTLINE_CONTROL_TOKEN environment variable).
struct control_token_options {
    std::optional<std::string> token;
    std::string file;
    bool none = false;
};
void add_control_token_options(CLI::App& cmd, control_token_options& options);

// The control token and where it came from, for the banner: a token read from a file or the
// environment is not printed back (it is not on the command line, and should not end up in a log).
struct chosen_token {
    std::optional<std::string> token;  // nullopt: a random one (the server makes it); "": none
    std::string source;                // "" when it may be printed
};
// An empty token would serve the control API to anyone, silently: refused, exit 2.
chosen_token choose_control_token(const control_token_options& options, std::string_view command);
// "control API: URL (Authorization: Bearer TOKEN)", the token left out when `chosen` came from a file
// or the environment, "(no token)" when there is none.
std::string control_banner(const std::string& url, const std::string& token, const chosen_token& chosen);

// --listen / --control-listen: ADDRESS or ADDRESS:PORT ([ADDRESS]:PORT for IPv6). Not an IP address,
// or not loopback without --allow-non-loopback: exit 2, naming the option.
struct listen_option {
    std::string address;
    std::optional<std::uint16_t> port;
};
listen_option parse_listen_option(const std::string& text, std::string_view option, std::string_view command,
                                  bool allow_non_loopback);

// Where the control API listens and the token it requires, from --control-listen ("" = loopback) and
// the token options. A control port beyond loopback without a token (--no-control-token): exit 2.
struct control_choice {
    std::string address = "127.0.0.1";
    std::optional<std::uint16_t> port;  // from --control-listen ADDRESS:PORT
    chosen_token token;
};
control_choice choose_control(const std::string& control_listen, const control_token_options& token,
                              bool allow_non_loopback, std::string_view command);

// SIGINT and SIGTERM as the way a server command ends. The handlers go in at construction, before any
// server thread exists, so no signal can find them missing; `io()` runs until one arrives (or until
// something else stops it), and `received()` says which.
class termination_signals {
public:
    termination_signals();
    boost::asio::io_context& io() { return io_; }
    int received() const { return received_; }
    // Wait again after the io_context was stopped or the wait cancelled (the io_context is restarted).
    void rearm();
    void cancel() { signals_.cancel(); }

private:
    void wait();

    boost::asio::io_context io_;
    boost::asio::signal_set signals_;
    int received_ = 0;
};

}  // namespace faultline::cli
