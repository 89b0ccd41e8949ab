// The control of `faultline score`'s timing probes: a client of known timing that runs as a process
// of its own beside the client under test, started the same way and in the same herd
// (command_options::control_argv). It sends one request and, after anything but a 2xx (a status,
// a reset, a refused or failed connection), waits exactly `delay` — no jitter, no growth — and sends
// it again, at most `attempts` times in all, each on a fresh connection. What reaches the server is
// that delay plus the machine's noise, so the spread of its gaps is the noise of that very run
// (checks/timing_control.hpp), against which the client's timing is judged.
//
// `faultline score --control-client URL` runs it (a hidden mode of the faultline binary, so the
// control is always at hand wherever faultline is); `control_command` builds that command line.
// A client on a heavy runtime (Node.js, Python) is judged against the same control written for its
// runtime (controls/control.mjs, control.py) and started by its own interpreter: the runtime's wake-up
// and queueing on a loaded machine, 50–300 ms a reply, are noise its timing carries too, and a
// control in C++ does not show them.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace faultline::score {

struct control_options {
    std::string url;  // "http://127.0.0.1:PORT/path"
    std::string method = "PUT";
    std::chrono::nanoseconds delay = std::chrono::seconds{1};
    std::uint32_t attempts = 4;
    std::chrono::nanoseconds timeout = std::chrono::seconds{5};  // per attempt: connect, write, read
};

// The path prefix every control request uses, so the score can tell the control's attempts apart.
inline constexpr std::string_view control_path_prefix = "/faultline-control/";

// Runs the control; returns how many attempts it made. Never throws: a failed attempt is a retry.
std::uint32_t run_control_client(const control_options& options);

enum class control_runtime : std::uint8_t { builtin, node, python };

// The runtime of a client template's program, by its file name: node, nodejs → node; python,
// python3, python3.11 → python; anything else → builtin.
control_runtime runtime_of(std::string_view program);
// "Node.js", "Python"; "" for the builtin.
std::string_view runtime_label(control_runtime runtime);

// What runs the control: this faultline in control mode (builtin), or `script` under `executable`,
// the client's own interpreter.
struct control_program {
    control_runtime runtime = control_runtime::builtin;
    std::string executable;  // "": no control
    std::string script;      // the runtime's control script (builtin: none)
};

// The control's command line for the command driver, its URL naming the control's operation ({url}
// and {op} are the driver's placeholders).
std::vector<std::string> control_command(const control_program& program, const control_options& options);

}  // namespace faultline::score
