// The `command` driver: any program as the client under test. It is started with posix_spawn in a
// process group of its own (so the whole tree it forks can be signalled), stdin from /dev/null,
// stdout and stderr on pipes that are read concurrently with poll(2), so a chatty client can never
// block on a full pipe. The environment gets FAULTLINE_URL (the server's base URL), FAULTLINE_KEY
// (the process's idempotency key: operation_key(seed, op), a UUIDv4 stable for a given seed), when the
// server speaks TLS FAULTLINE_CA (the run CA's PEM file) and, per operation, FAULTLINE_OP and
// FAULTLINE_CLIENT; the placeholders {url}, {key}, {ca}, {op}, {client} (and {n}) in the arguments
// are substituted ({ca} without TLS is a driver error). At the time limit each running process group gets SIGTERM,
// then SIGKILL after the grace period; the process is reported as killed; an interrupt
// (driver_context::interrupt, Ctrl-C) stops them the same way. When a process exits, any process it
// left behind in its group is killed too, and so is any it left outside its group (a daemon that
// called setsid): faultline is a child subreaper, so those are reparented to it, found through /proc
// and get SIGTERM, then SIGKILL after the grace period (src/process_tree.hpp). Nothing a client
// started outlives its run.
//
// Modes: `once` runs the command one time (operation 0, client 0). `per_operation` runs it
// `operations` times, at most `concurrency` at once; operation `op` runs as client
// op % concurrency, its n = op / concurrency; with a control (command_options::control_argv), the
// control's processes are started interleaved with them.
//
// Results (command_result): exit_status is the first non-zero status in operation order (0 if all
// succeeded); a process ended by a signal counts as 128 + the signal number, as in a shell.
// stdout_text / stderr_text hold the output of every process, in the order they finished, up to
// `output_limit` bytes each (the rest is read and dropped, and a line saying how much was dropped is
// appended). `killed` is true if any process was signalled at the time limit. `processes` has one
// process_record per process (pid, start and exit in ns since the run start — the journal's clock —,
// exit status, signal, killed), in operation order.
//
// The client's declared facts (declared_client: its own deadline, max_attempts and backoff curve)
// are kept for the run record only; the driver does not enforce them, the checks hold the client to
// them.
//
// Registered as driver "command"; its [client] keys are command, mode, operations, concurrency,
// kill_grace, output_limit and the declared deadline, max_attempts and backoff (docs/scenarios.md,
// "The command driver"). A command given on the
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

namespace faultline::drivers {

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
    // per_operation only: a control run beside the client (`faultline score`'s timing probes, whose
    // timing verdicts are judged against the noise the control shows): `control_argv`, started
    // `control_processes` times, interleaved with the client's processes (client 0, control 0,
    // client 1, …) so that they start the same way and in the same herd. Control processes are
    // operations `operations`, `operations + 1`, … (their {op}), run all at once besides the
    // client's `concurrency`, and are recorded like the client's (process_record::op tells them apart).
    std::vector<std::string> control_argv;
    std::uint64_t control_processes = 0;
};

struct command_config {
    std::vector<std::string> argv;  // never empty
    command_options options;
    record::declared_client declared;
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
    std::uint64_t killed = 0;       // processes signalled at the time limit or on an interrupt
    std::uint64_t orphans_killed = 0;  // processes left behind outside a process group (setsid), killed
};

// Owns its argv, options and declared facts. `run` blocks the calling thread; not thread-safe (one
// run at a time).
class command_driver final : public driver {
public:
    // Throws std::invalid_argument if argv is empty or argv[0] is empty.
    command_driver(std::vector<std::string> argv, command_options options, record::declared_client declared = {});

    driver_result run(const driver_context& ctx) override;
    std::string_view name() const override { return "command"; }
    record::declared_client declared() const override { return declared_; }

    const std::vector<std::string>& argv() const { return argv_; }
    const command_options& options() const { return options_; }
    const command_stats& last_stats() const { return stats_; }

private:
    std::vector<std::string> argv_;
    command_options options_;
    record::declared_client declared_;
    command_stats stats_;
};

// A command driver for `argv` (argv[0] looked up in PATH). Placeholders {url}, {key}, {ca}, {op}, {client}
// in the arguments are substituted per process. Throws std::invalid_argument if argv or argv[0] is
// empty.
std::unique_ptr<driver> make_command_driver(std::vector<std::string> argv, command_options options = {},
                                            record::declared_client declared = {});

}  // namespace faultline::drivers
