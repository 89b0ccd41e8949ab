// Drivers: the client under test in a scenario run. The runner starts the fault server, builds a
// `driver_context` (where the server listens, the seed, the clock, the time limit) and calls
// `driver::run`, which blocks until the client is done or the time limit is reached. Two drivers:
// - `builtin` (builtin_driver.hpp): N virtual clients in this process, each an Asio coroutine using
//   faultline's own retry HTTP client with the scenario's policy (or a deliberately bad preset).
//   It keeps one `client_record` per operation.
// - `command` (command_driver.hpp): any program, run once or once per operation, with the server's
//   address in FAULTLINE_URL. Its exit status and output are kept; the checks then work from the
//   server's journal alone.
//
// Operation identity: every request the builtin driver sends carries an `Idempotency-Key` (when the
// policy gives the operation one) and always a `Faultline-Op` header naming the operation
// (`operation_header` below; value "c<client>-n<n>", stable across its attempts). The server's
// identity precedence is Idempotency-Key, then a scenario-named header, so the runner configures the
// server's identity header as `Faultline-Op` for builtin runs; then journal_record::operation and
// client_record::operation hold the same string for every operation.
//
// The `[client]` table of a scenario is turned into a driver by `parse_client`; the full reference
// is docs/scenarios.md ("[client]").
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "faultline/core/clock.hpp"
#include "faultline/core/config_error.hpp"
#include "faultline/record/run_record.hpp"
#include "faultline/retry/policy.hpp"

namespace faultline::harness {

// The header naming a builtin-driver operation on every attempt (see above).
inline constexpr std::string_view operation_header = "Faultline-Op";

// What a driver needs to know about the run. The clock outlives the call to `run`.
struct driver_context {
    std::string host = "127.0.0.1";  // the fault server's address (loopback)
    std::uint16_t port = 0;
    std::string base_url;            // "http://127.0.0.1:<port>", no trailing slash
    std::uint64_t seed = 0;          // the run's seed: jitter draws and idempotency keys derive from it
    faultline::clock& clk;           // time for timers and record timestamps
    time_point run_start;            // record timestamps are ns since this point
    duration time_limit;             // the driver stops (cancels, kills) at run_start + time_limit
};

// What a driver produced. `error` is a harness failure (the run's exit code 3), not a client
// failure: a client whose operations fail, or a command exiting non-zero, is a normal result.
struct driver_result {
    std::vector<client_record> clients;      // builtin: one per started operation, in start order
    std::optional<command_result> command;   // command driver only
    bool timed_out = false;                  // the time limit cut the client short
    std::string error;                       // non-empty: the driver itself failed
};

// One client under test. `run` may be called more than once (each call is a fresh run: budgets and
// breakers are created per call), but not concurrently. Not thread-safe otherwise.
class driver {
public:
    virtual ~driver() = default;

    // Blocks until the workload is done or ctx.run_start + ctx.time_limit; never throws.
    virtual driver_result run(const driver_context& ctx) = 0;
    // "builtin" or "command".
    virtual std::string_view name() const = 0;
    // The retry policy the client declares (builtin only; nullptr for command), so checks such as
    // `backoff` and `max_attempts` can read its envelope. Budget and breaker pointers in it are empty:
    // those objects exist only during a run.
    virtual const retry::retry_policy* declared_policy() const { return nullptr; }
};

// How a command is run (see command_driver.hpp for the process handling).
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

// A command driver for `argv` (argv[0] looked up in PATH). Placeholders {url}, {op}, {client} in the
// arguments are substituted per process. argv must not be empty.
std::unique_ptr<driver> make_command_driver(std::vector<std::string> argv, command_options options = {});

// What the CLI can override in the [client] table.
struct client_overrides {
    // `faultline run FILE -- cmd args…`: when non-empty the client is this command, whatever
    // `driver` says. With driver = "command" the table's other keys (mode, operations, concurrency, …)
    // still apply and its own `command` is ignored; a builtin table is still validated, then replaced
    // by this command run once.
    std::vector<std::string> command;
};

// Turns a scenario's [client] table into a driver. An empty table gives the default builtin client
// (preset "good"). Every problem is appended to `errors` as file:line:column (toml++ source regions;
// unknown keys list the allowed ones) and then nullptr is returned: nothing half-built.
std::unique_ptr<driver> parse_client(const toml::table& client, const std::string& file,
                                     config_errors& errors, const client_overrides& overrides = {});

}  // namespace faultline::harness
