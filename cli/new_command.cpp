// `faultline new [PATH]`: writes a commented starter scenario — the nasty fault (the reply lost after
// the payment committed) plus a 503 with Retry-After, the built-in good client, and the checks that
// prove no double charge — which validates and passes as written, so a first run is green and each
// comment says what to change. Never overwrites a file unless --force; "-" writes to stdout.
#include "commands.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>

namespace faultline::cli {

namespace {

constexpr std::string_view starter = R"(# A faultline scenario: the faults the server injects, the client that runs against it, and the
# checks its journal must pass. `faultline validate FILE` checks the file, `faultline run FILE` runs it.
# Every key: docs/scenarios.md; the fault kinds and checks: `faultline list`.
name = "payments-under-faults"
description = """
A payment commits, then its reply is lost; later payments meet a 503 with Retry-After. A good client
retries with one Idempotency-Key per payment and waits as told: one charge per payment."""
seed = 1              # the same seed replays the same run (fault probabilities, client jitter)
time_limit = "20s"    # the run ends here whatever the client does

[server]
idempotency = "keys"  # the service answers a repeated Idempotency-Key from the stored result

# The nasty fault: the payment is committed, then the connection is reset before the reply.
# A client that retries without a key charges twice; `no_double_effects` shows it.
[[fault]]
name = "lose-first-reply"
kind = "lost_response"
then = "reset"
[fault.match]
method = "POST"
path = "/payments"
[fault.when]
attempts = [1]        # each payment's first attempt

# The server is busy now and then: 503 with Retry-After (whole seconds), before any effect.
[[fault]]
name = "busy"
kind = "status"
status = 503
retry_after = "1s"
[fault.match]
method = "POST"
path = "/payments"
[fault.when]
probability = 0.1

# The client under test. The built-in one runs faultline's retry library with a preset
# (good | naive | no_jitter | no_budget | no_keys | ignores_retry_after | ignores_deadline):
# try `preset = "naive"` to watch the checks below fail with their evidence.
[client]
preset = "good"
clients = 4           # concurrent clients
operations = 5        # payments each
[[client.request]]
method = "POST"
path = "/payments"
body = '{"amount":100,"order":"{op}"}'

# Your own client instead: any command, pointed at the server's {url} (docs/scenarios.md, "The
# command driver"). Replace the [client] table above with:
# [client]
# driver = "command"
# command = ["python3", "pay.py", "{url}/payments"]

# What must hold, judged from what crossed the wire.
[[expect]]
check = "no_double_effects"   # no payment charged twice

[[expect]]
check = "idempotency_keys"    # every retry of a payment carries the same key

[[expect]]
check = "retry_after"         # no retry before the Retry-After the server gave

[[expect]]
check = "max_attempts"        # at most 4 attempts per payment (the good preset's limit)
max = 4

[[expect]]
check = "success_rate"        # every payment succeeded in the end
min = 1.0
)";

struct new_args {
    std::string path = "scenario.toml";
    bool force = false;
};

[[noreturn]] void fail(int code) { throw CLI::RuntimeError(code); }

void write_starter(const new_args& args) {
    if (args.path == "-") {
        std::cout << starter;
        return;
    }
    std::error_code ec;
    if (!args.force && std::filesystem::exists(args.path, ec)) {
        std::cerr << "faultline new: " << args.path << " exists; choose another path or add --force to overwrite it\n";
        fail(exit_bad_input);
    }
    std::ofstream out{args.path, std::ios::trunc};
    out << starter;
    out.close();
    if (!out) {
        std::cerr << "faultline new: cannot write " << args.path << '\n';
        fail(exit_bad_input);
    }
    std::cout << "wrote " << args.path << ": run it with `faultline run " << args.path
              << "`, then edit the faults, client and checks its comments describe\n";
}

}  // namespace

void add_new_command(CLI::App& app) {
    auto args = std::make_shared<new_args>();
    CLI::App* cmd = app.add_subcommand("new", "Write a commented starter scenario that runs and passes as written");
    cmd->add_option("path", args->path, "Where to write it (default scenario.toml; - for stdout)");
    cmd->add_flag("--force", args->force, "Overwrite the file if it exists");
    cmd->callback([args] { write_starter(*args); });
}

}  // namespace faultline::cli
