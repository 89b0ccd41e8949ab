// The client under test as `faultline score -- <template>` gives it: a command line with
// placeholders for what varies per probe, so one template drives every situation without a wrapper
// script. Probe placeholders are filled here: {method}, {path}, {body} (the probe's request),
// {timeout} (the per-attempt timeout to give the client, in seconds) and {deadline} (the declared
// deadline, in seconds). The command driver fills the per-process ones: {url}, {key}, {op},
// {client}, {n}. Text in braces that is not a plain name ({"amount":1}) is left alone.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "faultline/record/run_record.hpp"

namespace faultline::score {

// What the user declares about the client, to have it judged (`--deadline`, `--max-attempts`,
// `--jitter`, `--timeout`).
struct declared_settings {
    std::optional<std::chrono::nanoseconds> deadline;  // the client's own overall deadline
    std::optional<std::uint32_t> max_attempts;         // the client's attempt limit (first attempt included)
    bool jitters = true;                               // false: declared not to jitter (`--jitter none`)
    std::optional<harness::declared_backoff> backoff;  // the client's curve (`--backoff`, `--jitter KIND`)
    std::chrono::nanoseconds timeout = std::chrono::seconds{1};  // {timeout}
};

// One probe's request (its first [[client.request]]).
struct request_values {
    std::string method;
    std::string path;
    std::string body;
};

// Why the template cannot be used ("" when it can): it is empty, names an unknown placeholder,
// uses {deadline} without a declared deadline, or never names the server ({url} or FAULTLINE_URL).
std::string template_problem(std::span<const std::string> argv, const declared_settings& declared);

// The template with the probe placeholders filled; the driver's are left in place.
std::vector<std::string> instantiate(std::span<const std::string> argv, const request_values& request,
                                     const declared_settings& declared);

// "1.5" for 1500 ms: seconds as curl's --max-time and wget's --timeout take them.
std::string seconds_text(std::chrono::nanoseconds d);

}  // namespace faultline::score
