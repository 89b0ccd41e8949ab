// Drivers: the client under test in a scenario run. The runner starts the fault server, builds a
// `driver_context` (where the server listens, the seed, the clock, the time limit) and calls
// `driver::run`, which blocks until the client is done, the time limit is reached or the run is
// interrupted (interrupt.hpp).
//
// This header is the part every driver shares. It knows no driver's types or keys (it names two
// drivers by their registered names only: the default, and the one a command-line command runs
// under): the `driver` interface, the registry entry `driver_info` each driver file registers itself with
// (`core::registration<driver_info>`, one per file; the library is linked whole-archive), and
// `parse_client`, which reads the `[client]` table's common key `driver` and hands the rest of the
// table to that driver's factory. The drivers themselves: builtin_driver.hpp (virtual clients in
// this process), command_driver.hpp (any program). The full reference is docs/scenarios.md
// ("[client]").
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "faultline/config/reader.hpp"
#include "faultline/core/clock.hpp"
#include "faultline/core/config_error.hpp"
#include "faultline/core/registry.hpp"
#include "faultline/drivers/interrupt.hpp"
#include "faultline/record/run_record.hpp"
#include "faultline/retry/idempotency.hpp"
#include "faultline/retry/policy.hpp"

namespace faultline::drivers {

// What a driver needs to know about the run. The clock outlives the call to `run`.
struct driver_context {
    std::string host = "127.0.0.1";  // the fault server's address (loopback)
    std::uint16_t port = 0;
    std::string base_url;            // "http://127.0.0.1:<port>" (https with TLS), no trailing slash
    std::uint64_t seed = 0;          // the run's seed: jitter draws and idempotency keys derive from it
    faultline::clock& clk;           // time for timers and record timestamps
    time_point run_start;            // record timestamps are ns since this point
    duration time_limit;             // the driver stops (cancels, kills) at run_start + time_limit
    // When set and requested (Ctrl-C), the driver stops as at the time limit and reports it in
    // driver_result::interrupted. Outlives the call to `run`.
    const run_interrupt* interrupt = nullptr;
    std::string ca_file{};  // the run CA's PEM file when the server speaks TLS (base_url is https), else ""
};

// What a driver produced. `error` is a harness failure (the run's exit code 3), not a client
// failure: a client whose operations fail, or a command exiting non-zero, is a normal result.
struct driver_result {
    std::deque<record::client_record> clients;       // builtin: one per started operation, in start order
    std::optional<record::command_result> command;   // command driver only
    bool timed_out = false;                  // the time limit cut the client short
    std::optional<record::run_interruption> interrupted;  // a run_interrupt cut the client short
    std::string error;                       // non-empty: the driver itself failed
};

// One client under test. `run` may be called more than once (each call is a fresh run: budgets and
// breakers are created per call), but not concurrently. Not thread-safe otherwise.
class driver {
public:
    virtual ~driver() = default;

    // Blocks until the workload is done or ctx.run_start + ctx.time_limit; never throws.
    virtual driver_result run(const driver_context& ctx) = 0;
    // The name it is registered under ("builtin", "command", …).
    virtual std::string_view name() const = 0;
    // What the client declares about itself, copied into the run record for the checks (the command
    // driver's [client] keys deadline, max_attempts, backoff; the builtin client's policy). Empty:
    // nothing declared.
    virtual record::declared_client declared() const { return {}; }
    // The request header naming the operation on every attempt, when the driver sends one: the
    // runner makes it the server's identity header, so journal_record::operation and
    // client_record::operation agree (an Idempotency-Key still takes precedence on the server).
    // Empty: the scenario's [server] identity settings stand.
    virtual std::string_view identity_header() const { return {}; }
};

// What the CLI can override in the [client] table.
struct client_overrides {
    // `faultline run FILE -- cmd args…`: when non-empty the client is this command, whatever
    // `driver` says. With driver = "command" the table's other keys (mode, operations, concurrency, …)
    // still apply and its own `command` is ignored; a builtin table is still validated, then replaced
    // by this command run once.
    std::vector<std::string> command;
};

// What a driver file registers, as its last line:
//   const core::registration<driver_info> registered{"<name>", "<one-line summary>", <name>_keys, &make_<name>};
// `keys` are the [client] keys the driver reads (besides `driver`); a key of another driver in a
// table is then reported as "only applies to driver = \"<other>\"" rather than as unknown.
// `make` reads those keys through the reader (context "[client]"; `driver` is already read and
// `finish` is called afterwards) and returns the driver, or nullptr after recording its errors.
struct driver_info {
    using factory = std::unique_ptr<driver> (*)(config::table_reader& client, const client_overrides& overrides);

    std::string name;
    std::string summary;
    std::span<const std::string_view> keys;
    factory make = nullptr;
};

using driver_registry = core::registry<driver_info>;

// The [client] table's `driver` when it has none.
inline constexpr std::string_view default_driver = "builtin";
// The driver a command given on the command line (client_overrides::command) runs under.
inline constexpr std::string_view override_driver = "command";

// Turns a scenario's [client] table into a driver. An empty table gives the default driver with
// its defaults (builtin, preset "good"). Every problem is appended to `errors` as file:line:column
// (toml++ source regions; unknown keys list the allowed ones) and then nullptr is returned: nothing
// half-built. With `overrides.command` set, a table whose driver is not `override_driver` is still
// read and validated, then replaced by `override_driver` built from an empty table.
std::unique_ptr<driver> parse_client(const toml::table& client, const std::string& file,
                                     config_errors& errors, const client_overrides& overrides = {});

// Values for the placeholders drivers substitute. `url`, `key` and `ca` are only substituted when
// set (the command driver; `ca` when the server speaks TLS).
struct placeholder_values {
    std::uint64_t op = 0;
    std::uint64_t client = 0;
    std::uint64_t n = 0;
    std::optional<std::string_view> url;
    std::optional<std::string_view> key;
    std::optional<std::string_view> ca{};
    std::optional<std::string_view> service_config{};  // the declared gRPC service config's file
};

// Replaces every `{op}`, `{client}`, `{n}` (and `{url}`, `{key}`, `{ca}`, `{service_config}` when
// given) in `text`. Any other
// brace is kept literally, so JSON bodies need no escaping.
std::string substitute(std::string_view text, const placeholder_values& values);

// The idempotency key of operation `op` in a run with `seed`: a UUIDv4 drawn from a stream of the
// seed that only keys use, so a replay with the same seed gives every operation the same key
// whichever driver runs it and whatever the interleaving.
retry::idempotency_key operation_key(std::uint64_t seed, std::uint64_t op);

}  // namespace faultline::drivers
