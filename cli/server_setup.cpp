#include "server_setup.hpp"

#include "commands.hpp"

#include <csignal>
#include <iostream>
#include <random>
#include <system_error>

namespace faultline::cli {

harness::serve_config load_rules(const std::string& path) {
    auto loaded = path.empty() ? harness::parse_serve_config("", "(no rules)") : harness::load_serve_config(path);
    if (!loaded.ok()) {
        for (const auto& e : loaded.errors) std::cerr << e.to_string() << '\n';
        throw CLI::RuntimeError(exit_bad_input);
    }
    return std::move(*loaded.config);
}

std::uint64_t choose_seed(std::optional<std::uint64_t> flag, const harness::serve_config& config) {
    if (!flag && config.settings.seed) return *config.settings.seed;
    return choose_seed(flag);
}

std::uint64_t choose_seed(std::optional<std::uint64_t> flag) {
    if (flag) return *flag;
    std::random_device device;
    return (std::uint64_t{device()} << 32U) ^ device();
}

std::unique_ptr<harness::server_context> open_server_context(harness::serve_config& config, std::uint64_t seed,
                                                             const std::string& journal_path,
                                                             const faults::engine_limits& limits) {
    harness::journal_options journal;
    journal.max_records = config.model.journal_max_records;
    journal.path = journal_path;
    try {
        return std::make_unique<harness::server_context>(config.model, std::move(config.rules), seed, journal, limits);
    } catch (const std::system_error& e) {
        std::cerr << journal_path << ": cannot open the journal file: " << e.what() << '\n';
        throw CLI::RuntimeError(exit_bad_input);
    }
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
