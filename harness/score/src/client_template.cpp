#include "faultline/score/client_template.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <string_view>

namespace faultline::score {

namespace {

constexpr std::array<std::string_view, 5> probe_placeholders{"body", "deadline", "method", "path", "timeout"};
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

std::string template_problem(std::span<const std::string> argv, const declared_settings& declared) {
    if (argv.empty() || argv.front().empty()) return "the client template after `--` needs a program";
    bool names_server = false;
    for (const std::string& arg : argv) {
        std::string problem;
        for_each_placeholder(arg, [&](std::string_view name, std::size_t) {
            if (!problem.empty()) return;
            if (!known(name)) {
                problem = "unknown placeholder {" + std::string(name) +
                          "} in the client template; known: {body} {client} {deadline} {key} {method} {n} {op} "
                          "{path} {timeout} {url}";
            } else if (name == "deadline" && !declared.deadline) {
                problem = "the client template uses {deadline}, but no deadline was declared (--deadline)";
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
            } else if (name == "deadline" && declared.deadline) {
                value = seconds_text(*declared.deadline);
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
