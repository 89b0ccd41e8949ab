#include "faultline/score/client_template.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <array>
#include <cstdio>
#include <string_view>

#include "faultline/config/duration.hpp"

namespace faultline::score {

namespace {

constexpr std::array<std::string_view, 10> probe_placeholders{
    "attempt_timeout", "attempt_timeout_ms", "body",    "deadline",  "deadline_ms",
    "method",          "path",               "service_config", "timeout", "timeout_ms"};
constexpr std::array<std::string_view, 5> driver_placeholders{"client", "key", "n", "op", "url"};

bool is_name_char(char c) { return (c >= 'a' && c <= 'z') || c == '_'; }

// Calls `on_name(name, position)` for every `{name}` in `text`, name made of [a-z_].
template <class F>
void for_each_placeholder(std::string_view text, F&& on_name) {
    for (std::size_t open = text.find('{'); open != std::string_view::npos; open = text.find('{', open + 1)) {
        std::size_t end = open + 1;
        while (end < text.size() && is_name_char(text[end])) ++end;
        if (end == open + 1 || end >= text.size() || text[end] != '}') continue;
        on_name(text.substr(open + 1, end - open - 1), open);
    }
}

bool known(std::string_view name) {
    return std::find(probe_placeholders.begin(), probe_placeholders.end(), name) != probe_placeholders.end() ||
           std::find(driver_placeholders.begin(), driver_placeholders.end(), name) != driver_placeholders.end();
}

}  // namespace

std::string seconds_text(std::chrono::nanoseconds d) {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
    char text[32];
    if (ms % 1000 == 0) {
        std::snprintf(text, sizeof text, "%lld", static_cast<long long>(ms / 1000));
    } else {
        std::snprintf(text, sizeof text, "%.3f", static_cast<double>(ms) / 1000.0);
        std::string trimmed = text;
        while (trimmed.back() == '0') trimmed.pop_back();
        return trimmed;
    }
    return text;
}

std::string milliseconds_text(std::chrono::nanoseconds d) {
    return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
}

std::optional<std::chrono::nanoseconds> seconds_or_duration(std::string_view text) {
    const bool plain_number = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
        return (c >= '0' && c <= '9') || c == '.';
    }) && std::count(text.begin(), text.end(), '.') <= 1 && text.front() != '.' && text.back() != '.';
    if (plain_number) {
        double seconds = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
        if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
        return std::chrono::nanoseconds{static_cast<std::int64_t>(std::llround(seconds * 1e9))};
    }
    const config::parsed_duration d = config::parse_duration(text);
    if (!d) return std::nullopt;
    return *d.value;
}

namespace {

std::optional<double> fraction_of(std::string_view text) {
    const bool percent = text.ends_with('%');
    if (percent) text.remove_suffix(1);
    double value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end != text.data() + text.size() || text.empty()) return std::nullopt;
    if (percent) value /= 100;
    if (value < 0 || value > 1) return std::nullopt;
    return value;
}

std::vector<std::string_view> split(std::string_view text, char on) {
    std::vector<std::string_view> out;
    for (std::size_t at = 0;;) {
        const std::size_t next = text.find(on, at);
        out.push_back(text.substr(at, next == std::string_view::npos ? std::string_view::npos : next - at));
        if (next == std::string_view::npos) return out;
        at = next + 1;
    }
}

std::string toml_duration(std::chrono::nanoseconds d) { return "\"" + config::format_duration(d) + "\""; }

}  // namespace

std::string declared_curve::describe() const {
    std::string out = seconds_text(base) + "s";
    if (growth == "exponential") out += " ×" + std::to_string(multiplier).substr(0, std::to_string(multiplier).find_last_not_of("0.") + 1);
    if (growth != "exponential") out += " " + growth;
    out += cap ? " → " + seconds_text(*cap) + "s" : std::string(", no cap");
    if (jitter == "proportional") {
        const std::string pct = std::to_string(static_cast<int>(std::lround(fraction * 100))) + " %";
        out += sides == "above" ? ", +0–" + pct : sides == "below" ? ", −" + pct + "–0" : ", ±" + pct;
    } else if (jitter == "additive") {
        out += ", +U(0, " + seconds_text(jitter_max) + "s)";
    } else {
        out += ", " + jitter + " jitter";
    }
    return out;
}

std::variant<declared_curve, std::string> parse_curve(std::string_view backoff, std::string_view jitter,
                                                     double multiplier) {
    declared_curve c;
    c.multiplier = multiplier;
    std::vector<std::string_view> parts = split(backoff, ':');
    if (parts.front() == "exponential" || parts.front() == "linear" || parts.front() == "constant") {
        c.growth = std::string(parts.front());
        parts.erase(parts.begin());
    }
    const std::string forms = "expected BASE:CAP, exponential:BASE[:CAP], linear:BASE[:CAP] or constant:DELAY "
                              "(CAP `none`: no cap), e.g. 1s:30s or linear:1s:10s, got " + std::string(backoff);
    if (parts.empty() || parts.size() > 2 || (c.growth == "constant" && parts.size() != 1)) return "--backoff: " + forms;
    // The legacy BASE:CAP needs its cap.
    if (c.growth == "exponential" && split(backoff, ':').front() != "exponential" && parts.size() != 2) {
        return "--backoff: " + forms;
    }
    const auto base = seconds_or_duration(parts[0]);
    if (!base || *base > std::chrono::hours{1}) return "--backoff: bad BASE \"" + std::string(parts[0]) + "\"; " + forms;
    c.base = *base;
    if (parts.size() == 2 && parts[1] != "none") {
        const auto cap = seconds_or_duration(parts[1]);
        if (!cap || *cap < c.base) {
            return "--backoff: bad CAP \"" + std::string(parts[1]) + "\" (a duration at least BASE, or none)";
        }
        c.cap = *cap;
    }
    if (c.growth == "constant") c.multiplier = 1;
    const std::vector<std::string_view> j = split(jitter, ':');
    const std::string kinds = "--jitter for --backoff: none, full, equal, decorrelated, proportional[:F] (±F), "
                              "above:F, below:F or additive:MAX (F as 50% or 0.5), got " + std::string(jitter);
    const std::string_view kind = j.front();
    if ((kind == "none" || kind == "full" || kind == "equal" || kind == "decorrelated") && j.size() == 1) {
        c.jitter = std::string(kind);
    } else if ((kind == "proportional" && j.size() <= 2) || ((kind == "above" || kind == "below") && j.size() == 2)) {
        c.jitter = "proportional";
        c.sides = kind == "proportional" ? "both" : std::string(kind);
        if (j.size() == 2) {
            const auto f = fraction_of(j[1]);
            if (!f) return kinds;
            c.fraction = *f;
        }
    } else if (kind == "additive" && j.size() == 2) {
        const auto max = seconds_or_duration(j[1]);
        if (!max) return kinds;
        c.jitter = "additive";
        c.jitter_max = *max;
    } else {
        return kinds;
    }
    return c;
}

std::string backoff_expectation(const declared_curve& c, std::chrono::nanoseconds tolerance) {
    std::string out = "check = \"backoff\"\nbase = " + toml_duration(c.base) + "\n";
    if (c.cap) out += "cap = " + toml_duration(*c.cap) + "\n";
    out += "growth = \"" + c.growth + "\"\n";
    if (c.growth == "exponential") out += "multiplier = " + std::to_string(c.multiplier) + "\n";
    out += "jitter = \"" + c.jitter + "\"\n";
    if (c.jitter == "proportional") {
        out += "jitter_fraction = " + std::to_string(c.fraction) + "\njitter_sides = \"" + c.sides + "\"\n";
    }
    if (c.jitter == "additive") out += "jitter_max = " + toml_duration(c.jitter_max) + "\n";
    out += "tolerance = " + toml_duration(tolerance) + "\n";
    return out;
}

std::string template_problem(std::span<const std::string> argv, const declared_settings& declared) {
    if (argv.empty() || argv.front().empty()) return "the client template after `--` needs a program";
    bool names_server = false;
    for (const std::string& arg : argv) {
        std::string problem;
        for_each_placeholder(arg, [&](std::string_view name, std::size_t) {
            if (!problem.empty()) return;
            if (!known(name)) {
                problem = "unknown placeholder {" + std::string(name) +
                          "} in the client template; known: {attempt_timeout} {attempt_timeout_ms} {body} {client} "
                          "{deadline} {deadline_ms} {key} {method} {n} {op} {path} {service_config} {timeout} "
                          "{timeout_ms} {url}";
            } else if ((name == "deadline" || name == "deadline_ms") && !declared.deadline) {
                problem = "the client template uses {" + std::string(name) +
                          "}, but no deadline was declared (--deadline)";
            } else if (name == "service_config" && declared.service_config_path.empty()) {
                problem = "the client template uses {service_config}, but no service config was given (--service-config)";
            }
            if (name == "url") names_server = true;
        });
        if (!problem.empty()) return problem;
        if (arg.find("FAULTLINE_URL") != std::string::npos) names_server = true;
    }
    if (!names_server) {
        return "the client template never names the server: put {url} where its URL goes "
               "(e.g. {url}{path}), or read $FAULTLINE_URL";
    }
    return "";
}

std::vector<std::string> instantiate(std::span<const std::string> argv, const request_values& request,
                                     const declared_settings& declared) {
    std::vector<std::string> out;
    out.reserve(argv.size());
    for (const std::string& arg : argv) {
        std::string filled;
        std::size_t copied = 0;
        for_each_placeholder(arg, [&](std::string_view name, std::size_t at) {
            std::string value;
            if (name == "method") {
                value = request.method;
            } else if (name == "path") {
                value = request.path;
            } else if (name == "body") {
                value = request.body;
            } else if (name == "timeout") {
                value = seconds_text(declared.timeout);
            } else if (name == "timeout_ms") {
                value = milliseconds_text(declared.timeout);
            } else if (name == "attempt_timeout") {
                value = seconds_text(declared.attempt_timeout.value_or(declared.timeout));
            } else if (name == "attempt_timeout_ms") {
                value = milliseconds_text(declared.attempt_timeout.value_or(declared.timeout));
            } else if (name == "deadline" && declared.deadline) {
                value = seconds_text(*declared.deadline);
            } else if (name == "deadline_ms" && declared.deadline) {
                value = milliseconds_text(*declared.deadline);
            } else if (name == "service_config" && !declared.service_config_path.empty()) {
                value = declared.service_config_path;
            } else {
                return;  // the driver's
            }
            filled.append(arg, copied, at - copied).append(value);
            copied = at + name.size() + 2;
        });
        filled.append(arg, copied, std::string::npos);
        out.push_back(std::move(filled));
    }
    return out;
}

}  // namespace faultline::score
