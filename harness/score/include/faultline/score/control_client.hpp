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
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
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

// The control's command line for the command driver: `executable` (this faultline) in control mode,
// its URL naming the control's operation ({url} and {op} are the driver's placeholders).
std::vector<std::string> control_command(const std::string& executable, const control_options& options);

}  // namespace faultline::score
