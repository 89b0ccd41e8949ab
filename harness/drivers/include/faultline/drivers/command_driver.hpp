// The `command` driver: any program as the client under test. It is started with posix_spawn in a
// process group of its own (so the whole tree it forks can be signalled), stdin from /dev/null,
// stdout and stderr on pipes that are read concurrently with poll(2), so a chatty client can never
// block on a full pipe. The environment gets FAULTLINE_URL (the server's base URL) and, per
// operation, FAULTLINE_OP and FAULTLINE_CLIENT; the placeholders {url}, {op}, {client} (and {n})
// in the arguments are substituted. At the time limit each running process group gets SIGTERM,
// then SIGKILL after the grace period; the process is reported as killed. When a process exits, any
// process it left behind in its group is killed too.
//
// Modes: `once` runs the command one time (operation 0, client 0). `per_operation` runs it
// `operations` times, at most `concurrency` at once; operation `op` runs as client
// op % concurrency, its n = op / concurrency.
//
// Results (command_result): exit_status is the first non-zero status in operation order (0 if all
// succeeded); a process ended by a signal counts as 128 + the signal number, as in a shell.
// stdout_text / stderr_text hold the output of every process, in the order they finished, up to
// `output_limit` bytes each (the rest is read and dropped, and a line saying how much was dropped is
// appended). `killed` is true if any process was signalled at the time limit.
//
// Registered as driver "command"; its [client] keys are command, mode, operations, concurrency,
// kill_grace and output_limit (docs/scenarios.md, "The command driver"). A command given on the
// command line (client_overrides::command) replaces the table's `command`.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "faultline/config/reader.hpp"
#include "faultline/drivers/driver.hpp"

namespace faultline::harness {

// How a command is run.
enum class command_mode { once, per_operation };

std::string_view to_string(command_mode mode);

struct command_options {
    command_mode mode = command_mode::once;
    std::uint64_t operations = 1;  // per_operation: processes started in all
    std::uint32_t concurrency = 1; // per_operation: at most this many processes at once
    // At the time limit a process gets SIGTERM, then SIGKILL after this grace period.
    std::chrono::milliseconds kill_grace{500};
    // Bytes kept of stdout and of stderr (each, over all processes); the rest is read and dropped.
    std::size_t output_limit = 1024 * 1024;
};

struct command_config {
    std::vector<std::string> argv;  // never empty
    command_options options;
};

// Reads the command driver's keys of a [client] table (all but `driver`; the caller finishes the
// reader); `overrides.command`, when non-empty, is the argv and the table's `command` is ignored.
// Records every problem through the reader and returns nullopt if there was any.
std::optional<command_config> parse_command_config(config::table_reader& client, const client_overrides& overrides);

// Counts from the last run, for reports and tests.
struct command_stats {
    std::uint64_t started = 0;      // processes started
    std::uint64_t finished = 0;     // processes reaped (every started process is reaped)
    std::uint32_t peak_running = 0; // most processes running at the same time
    std::uint64_t killed = 0;       // processes signalled at the time limit
};

// Owns its argv and options. `run` blocks the calling thread; not thread-safe (one run at a time).
class command_driver final : public driver {
public:
    // Throws std::invalid_argument if argv is empty or argv[0] is empty.
    command_driver(std::vector<std::string> argv, command_options options);

    driver_result run(const driver_context& ctx) override;
    std::string_view name() const override { return "command"; }

    const std::vector<std::string>& argv() const { return argv_; }
    const command_options& options() const { return options_; }
    const command_stats& last_stats() const { return stats_; }

private:
    std::vector<std::string> argv_;
    command_options options_;
    command_stats stats_;
};

// A command driver for `argv` (argv[0] looked up in PATH). Placeholders {url}, {op}, {client} in the
// arguments are substituted per process. Throws std::invalid_argument if argv or argv[0] is empty.
std::unique_ptr<driver> make_command_driver(std::vector<std::string> argv, command_options options = {});

}  // namespace faultline::harness
