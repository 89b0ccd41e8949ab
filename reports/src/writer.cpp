#include "faultline/reports/writer.hpp"

namespace faultline::reports {

namespace {

constexpr std::string_view scenario_placeholder = "{scenario}";

}  // namespace

std::string file_stem(std::string_view scenario) {
    std::string out;
    for (const char c : scenario) {
        const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                           c == '_' || c == '-';
        out += plain ? c : '_';
    }
    return out;
}

std::string expand_path(std::string_view pattern, std::string_view scenario) {
    std::string out{pattern};
    for (auto at = out.find(scenario_placeholder); at != std::string::npos;
         at = out.find(scenario_placeholder, at)) {
        const std::string stem = file_stem(scenario);
        out.replace(at, scenario_placeholder.size(), stem);
        at += stem.size();
    }
    return out;
}

}  // namespace faultline::reports
