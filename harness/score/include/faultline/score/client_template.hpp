// The client under test as `faultline score -- <template>` gives it: a command line with
// placeholders for what varies per probe, so one template drives every situation without a wrapper
// script. Probe placeholders are filled here: {method}, {path}, {body} (the probe's request),
// {timeout} / {timeout_ms} (the timeout to give the client, in seconds / milliseconds),
// {attempt_timeout} / {attempt_timeout_ms} (its per-attempt timeout, `--attempt-timeout`, else the
// timeout), {deadline} / {deadline_ms} (the declared deadline) and {service_config} (the gRPC
// service config's path, `--service-config`). The command driver fills the per-process ones: {url}, {key}, {op},
// {client}, {n}. Text in braces that is not a plain name ({"amount":1}) is left alone.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "faultline/record/grpc_service_config.hpp"
#include "faultline/record/run_record.hpp"

namespace faultline::score {

// The backoff curve the user declares (`--backoff`, `--jitter`, `--backoff-multiplier`), as the
// `backoff` check's table reads it: t = min(cap, base × multiplier^(k−1)) (exponential), base × k
// (linear) or base (constant) before retry k, no bound without a cap, then the jitter.
struct declared_curve {
    std::string growth = "exponential";  // "linear", "constant"
    std::chrono::nanoseconds base{0};
    std::optional<std::chrono::nanoseconds> cap;  // none: no cap
    double multiplier = 2;
    std::string jitter = "none";  // "full", "equal", "decorrelated", "proportional", "additive"
    double fraction = 0.2;        // proportional
    std::string sides = "both";   // proportional: "both", "above", "below"
    std::chrono::nanoseconds jitter_max{0};  // additive

    // "1s→10s ×2 full", "1s linear, no cap, ±50 %".
    std::string describe() const;
};

// Reads `--backoff` (`BASE:CAP`, `exponential:BASE[:CAP]`, `linear:BASE[:CAP]`, `constant:DELAY`; a
// CAP of `none` or none given: no cap; durations in seconds or with units) with `--jitter` (`none`,
// `full`, `equal`, `decorrelated`, `proportional[:F]` for ±F, `above:F`, `below:F`, `additive:MAX`;
// F as `50%` or `0.5`) and `--backoff-multiplier`. Returns the curve or what is wrong.
std::variant<declared_curve, std::string> parse_curve(std::string_view backoff, std::string_view jitter,
                                                     double multiplier);
// The `backoff` check's [[expect]] table that judges the curve, with `tolerance`.
std::string backoff_expectation(const declared_curve& curve, std::chrono::nanoseconds tolerance);

// What the user declares about the client, to have it judged (`--deadline`, `--max-attempts`,
// `--jitter`, `--backoff`, `--timeout`, `--attempt-timeout`, `--strict`).
struct declared_settings {
    std::optional<std::chrono::nanoseconds> deadline;  // the client's own overall deadline
    std::optional<std::uint32_t> max_attempts;         // the client's attempt limit (first attempt included)
    bool jitters = true;                               // false: declared not to jitter (`--jitter none`)
    // The client's curve (`--backoff`, `--jitter KIND`), judged by the probes' `backoff` checks; and as
    // a fact of the run record where it can say it (exponential or constant, a jitter of its kinds).
    std::optional<declared_curve> curve;
    std::optional<record::declared_backoff> backoff;
    bool strict = false;  // `--strict`: RFC 9110's permissive cases (408, 413 with Retry-After) not retried
    std::chrono::nanoseconds timeout = std::chrono::seconds{1};  // {timeout}, {timeout_ms}
    // {attempt_timeout}, {attempt_timeout_ms}: the client's per-attempt timeout, apart from its deadline
    // (`--attempt-timeout`); the timeout when not declared.
    std::optional<std::chrono::nanoseconds> attempt_timeout;
    // `--grpc`: the client speaks gRPC, judged against its service config (`--service-config`; without
    // one, gRPC's default: no retry policy). {service_config} is the file's absolute path.
    std::shared_ptr<const record::grpc_service_config> grpc;
    std::string service_config_path;
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
// "1500" for 1500 ms: milliseconds as Node's and many libraries' timeouts take them.
std::string milliseconds_text(std::chrono::nanoseconds d);
// A duration as `--timeout` takes it: plain seconds ("5", "1.5") or with a unit ("5s", "500ms");
// nullopt when it is neither.
std::optional<std::chrono::nanoseconds> seconds_or_duration(std::string_view text);

}  // namespace faultline::score
