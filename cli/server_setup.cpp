#include "server_setup.hpp"

#include "commands.hpp"

#include "faultline/server/listener.hpp"
#include "faultline/server/proxy_config.hpp"

#include <boost/asio/error.hpp>
#include <boost/asio/ip/address.hpp>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <system_error>

namespace faultline::cli {

server::serve_config load_rules(const std::string& path) {
    auto loaded = path.empty() ? server::parse_serve_config("", "(no rules)") : server::load_serve_config(path);
    if (!loaded.ok()) {
        for (const auto& e : loaded.errors) std::cerr << e.to_string() << '\n';
        throw CLI::RuntimeError(exit_bad_input);
    }
    return std::move(*loaded.config);
}

std::uint64_t choose_seed(std::optional<std::uint64_t> flag, const server::serve_config& config) {
    if (!flag && config.settings.seed) return *config.settings.seed;
    return choose_seed(flag);
}

std::uint64_t choose_seed(std::optional<std::uint64_t> flag) {
    if (flag) return *flag;
    std::random_device device;
    return (std::uint64_t{device()} << 32U) ^ device();
}

std::unique_ptr<server::server_context> open_server_context(server::serve_config& config, std::uint64_t seed,
                                                             const std::string& journal_path,
                                                             const faults::engine_limits& limits) {
    server::journal_options journal;
    journal.max_records = config.model.journal_max_records;
    journal.path = journal_path;
    try {
        return std::make_unique<server::server_context>(config.model, std::move(config.rules), seed, journal, limits);
    } catch (const std::system_error& e) {
        std::cerr << journal_path << ": cannot open the journal file: " << e.what() << '\n';
        throw CLI::RuntimeError(exit_bad_input);
    }
}

namespace {

constexpr const char* token_variable = "FAULTLINE_CONTROL_TOKEN";

std::string non_empty(std::string token, const std::string& where, std::string_view command) {
    const auto end = token.find_last_not_of(" \t\r\n");
    token.erase(end == std::string::npos ? 0 : end + 1);
    if (token.empty()) {
        std::cerr << "faultline " << command << ": " << where << " is empty; an empty token would switch the control "
                  << "API's authentication off (--no-control-token does that, if it is what you want)\n";
        throw CLI::RuntimeError(exit_bad_input);
    }
    return token;
}

}  // namespace

void add_control_token_options(CLI::App& cmd, control_token_options& options) {
    auto* token = cmd.add_option("--control-token", options.token,
                                 "Token the control API requires (default: FAULTLINE_CONTROL_TOKEN, else a random "
                                 "one, printed at start); visible in ps: prefer --control-token-file");
    auto* token_file = cmd.add_option("--control-token-file", options.file,
                                      "Read the control API's token from this file (trailing whitespace dropped)")
                           ->excludes(token);
    cmd.add_flag("--no-control-token", options.none,
                 "Serve the control API without a token (loopback Host/Origin checks still apply)")
        ->excludes(token)
        ->excludes(token_file);
}

chosen_token choose_control_token(const control_token_options& options, std::string_view command) {
    if (options.none) return {std::string{}, ""};
    if (options.token) {
        std::cerr << "faultline " << command << ": note: a token on the command line is visible to every local user "
                  << "(ps); --control-token-file or " << token_variable << " keep it out of sight\n";
        return {non_empty(*options.token, "--control-token", command), ""};
    }
    if (!options.file.empty()) {
        std::ifstream in{options.file};
        if (!in) {
            std::cerr << "faultline " << command << ": --control-token-file " << options.file << ": cannot read it\n";
            throw CLI::RuntimeError(exit_bad_input);
        }
        std::string token{std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
        return {non_empty(std::move(token), "--control-token-file " + options.file, command), "--control-token-file"};
    }
    if (const char* from_environment = std::getenv(token_variable)) {
        return {non_empty(from_environment, token_variable, command), token_variable};
    }
    return {std::nullopt, ""};
}

std::string control_banner(const std::string& url, const std::string& token, const chosen_token& chosen) {
    std::string out = "control API: " + url;
    if (token.empty()) return out + " (no token)";
    if (!chosen.source.empty()) return out + " (Authorization: Bearer, the token from " + chosen.source + ")";
    return out + " (Authorization: Bearer " + token + ")";
}

listen_option parse_listen_option(const std::string& text, std::string_view option, std::string_view command,
                                  bool allow_non_loopback) {
    listen_option out;
    boost::system::error_code ec;
    // A bare address first: "::1" would otherwise read as address ":" and port 1.
    boost::asio::ip::make_address(text, ec);
    if (!ec) {
        out.address = text;
    } else if (const auto parsed = server::parse_host_port(text)) {
        out.address = parsed->address;
        out.port = parsed->port;
    } else {
        out.address = text;
    }
    boost::asio::ip::address address;
    ec = server::parse_listen_address(out.address, allow_non_loopback, address);
    if (ec == boost::asio::error::access_denied) {
        std::cerr << "faultline " << command << ": " << option << " '" << text
                  << "' is not loopback: pass --allow-non-loopback to listen there\n";
        throw CLI::RuntimeError(exit_bad_input);
    }
    if (ec) {
        std::cerr << "faultline " << command << ": " << option << " '" << text
                  << "': expected ADDRESS or ADDRESS:PORT with an IP address, e.g. 127.0.0.1:8080 or 0.0.0.0\n";
        throw CLI::RuntimeError(exit_bad_input);
    }
    return out;
}

control_choice choose_control(const std::string& control_listen, const control_token_options& token,
                              bool allow_non_loopback, std::string_view command) {
    control_choice out;
    if (!control_listen.empty()) {
        const listen_option listen = parse_listen_option(control_listen, "--control-listen", command, allow_non_loopback);
        out.address = listen.address;
        out.port = listen.port;
    }
    out.token = choose_control_token(token, command);
    if (!server::is_loopback_address(out.address) && out.token.token && out.token.token->empty()) {
        std::cerr << "faultline " << command << ": --control-listen " << control_listen
                  << " is not loopback: the control API then needs a token (drop --no-control-token)\n";
        throw CLI::RuntimeError(exit_bad_input);
    }
    return out;
}

termination_signals::termination_signals() : signals_{io_, SIGINT, SIGTERM} { wait(); }

void termination_signals::rearm() {
    io_.restart();
    wait();
}

void termination_signals::wait() {
    signals_.async_wait([this](const boost::system::error_code& ec, int signal) {
        if (!ec) received_ = signal;
    });
}

}  // namespace faultline::cli
