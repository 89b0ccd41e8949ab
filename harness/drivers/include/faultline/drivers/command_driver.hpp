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
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "faultline/drivers/driver.hpp"

namespace faultline::harness {

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

}  // namespace faultline::harness
