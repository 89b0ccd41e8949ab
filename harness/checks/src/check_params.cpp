#include <limits>

#include "faultline/config/duration.hpp"
#include "faultline/checks/check.hpp"
#include "support.hpp"


namespace faultline::harness {

using checks::format_number;

namespace {

std::string_view type_name(const toml::node& node) {
    switch (node.type()) {
        case toml::node_type::string: return "a string";
        case toml::node_type::integer: return "an integer";
        case toml::node_type::floating_point: return "a float";
        case toml::node_type::boolean: return "a boolean";
        case toml::node_type::array: return "an array";
        case toml::node_type::table: return "a table";
        default: return "a date/time";
    }
}

std::string join(const std::set<std::string, std::less<>>& names) {
    std::string out;
    for (const auto& n : names) {
        if (!out.empty()) out += ", ";
        out += n;
    }
    return out;
}

}  // namespace

check_params::check_params(const toml::table& table, std::string check_name, std::string file, config_errors& errors)
    : table_(table), check_name_(std::move(check_name)), file_(std::move(file)), errors_(errors) {}

const toml::node* check_params::find(std::string_view key) {
    allowed_.emplace(key);
    return table_.get(key);
}

bool check_params::has(std::string_view key) const { return table_.contains(key); }

void check_params::allow(std::string_view key) { allowed_.emplace(key); }

source_position check_params::position_of(const toml::node* node) const {
    const toml::source_region& region = node != nullptr ? node->source() : table_.source();
    return source_position{file_, region.begin.line, region.begin.column};
}

void check_params::error(std::string_view key, const std::string& message) {
    errors_.push_back(config_error{position_of(table_.get(key)),
                                   "check \"" + check_name_ + "\": " + std::string(key) + ": " + message});
}

void check_params::type_error(std::string_view key, const toml::node& node, std::string_view expected) {
    error(key, "expected " + std::string(expected) + ", got " + std::string(type_name(node)));
}

bool check_params::boolean(std::string_view key, bool fallback) {
    const toml::node* node = find(key);
    if (node == nullptr) return fallback;
    if (const auto* b = node->as_boolean()) return b->get();
    type_error(key, *node, "a boolean");
    return fallback;
}

std::int64_t check_params::integer(std::string_view key, std::int64_t fallback, std::int64_t min, std::int64_t max) {
    const toml::node* node = find(key);
    if (node == nullptr) return fallback;
    const auto* i = node->as_integer();
    if (i == nullptr) {
        type_error(key, *node, "an integer");
        return fallback;
    }
    if (i->get() < min || i->get() > max) {
        error(key, "must be in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " +
                       std::to_string(i->get()));
        return fallback;
    }
    return i->get();
}

double check_params::number(std::string_view key, double fallback, double min, double max) {
    const toml::node* node = find(key);
    if (node == nullptr) return fallback;
    double value = 0;
    if (const auto* f = node->as_floating_point()) value = f->get();
    else if (const auto* i = node->as_integer()) value = static_cast<double>(i->get());
    else {
        type_error(key, *node, "a number");
        return fallback;
    }
    if (!(value >= min && value <= max)) {
        const std::string range = max == std::numeric_limits<double>::max()
                                      ? ">= " + format_number(min)
                                      : "in [" + format_number(min) + ", " + format_number(max) + "]";
        error(key, "must be " + range + ", got " + format_number(value));
        return fallback;
    }
    return value;
}

std::optional<std::chrono::nanoseconds> check_params::optional_duration(std::string_view key) {
    const toml::node* node = find(key);
    if (node == nullptr) return std::nullopt;
    const auto* s = node->as_string();
    if (s == nullptr) {
        type_error(key, *node, "a duration string with a unit (\"250ms\", \"2s\")");
        return std::nullopt;
    }
    config::parsed_duration d = config::parse_duration(s->get());
    if (!d) error(key, "bad duration \"" + s->get() + "\": " + d.error);
    return d.value;
}

std::chrono::nanoseconds check_params::duration(std::string_view key, std::chrono::nanoseconds fallback) {
    return optional_duration(key).value_or(fallback);
}

std::chrono::nanoseconds check_params::positive_duration(std::string_view key, std::chrono::nanoseconds fallback) {
    const std::chrono::nanoseconds value = duration(key, fallback);
    if (value > std::chrono::nanoseconds{0}) return value;
    error(key, "must be longer than 0");
    return fallback;
}

std::chrono::nanoseconds check_params::required_duration(std::string_view key) {
    if (!has(key)) {
        allow(key);
        error(key, "required (a duration string such as \"100ms\")");
        return std::chrono::nanoseconds{0};
    }
    return duration(key, std::chrono::nanoseconds{0});
}

std::string check_params::choice(std::string_view key, std::string_view fallback,
                                 std::initializer_list<std::string_view> allowed) {
    const toml::node* node = find(key);
    if (node == nullptr) return std::string(fallback);
    const auto* s = node->as_string();
    if (s == nullptr) {
        type_error(key, *node, "a string");
        return std::string(fallback);
    }
    std::string names;
    for (std::string_view a : allowed) {
        if (a == s->get()) return s->get();
        if (!names.empty()) names += ", ";
        names += a;
    }
    error(key, "unknown value \"" + s->get() + "\"; allowed: " + names);
    return std::string(fallback);
}

std::vector<std::int64_t> check_params::integers(std::string_view key, std::vector<std::int64_t> fallback,
                                                 std::int64_t min, std::int64_t max) {
    const toml::node* node = find(key);
    if (node == nullptr) return fallback;
    const auto* array = node->as_array();
    if (array == nullptr) {
        type_error(key, *node, "an array of integers");
        return fallback;
    }
    std::vector<std::int64_t> out;
    for (const toml::node& element : *array) {
        const auto* i = element.as_integer();
        if (i == nullptr || i->get() < min || i->get() > max) {
            errors_.push_back(config_error{position_of(&element), "check \"" + check_name_ + "\": " +
                                                                      std::string(key) + ": elements must be integers in [" +
                                                                      std::to_string(min) + ", " +
                                                                      std::to_string(max) + "]"});
            return fallback;
        }
        out.push_back(i->get());
    }
    return out;
}

std::vector<std::string> check_params::strings(std::string_view key, std::vector<std::string> fallback) {
    const toml::node* node = find(key);
    if (node == nullptr) return fallback;
    const auto* array = node->as_array();
    if (array == nullptr) {
        type_error(key, *node, "an array of strings");
        return fallback;
    }
    std::vector<std::string> out;
    for (const toml::node& element : *array) {
        const auto* s = element.as_string();
        if (s == nullptr) {
            errors_.push_back(config_error{position_of(&element), "check \"" + check_name_ + "\": " +
                                                                      std::string(key) + ": elements must be strings"});
            return fallback;
        }
        out.push_back(s->get());
    }
    return out;
}

void check_params::reject_unknown_keys() {
    for (const auto& [key, node] : table_) {
        if (allowed_.count(key.str()) != 0) continue;
        const toml::source_region& region = key.source();
        errors_.push_back(config_error{source_position{file_, region.begin.line, region.begin.column},
                                       "check \"" + check_name_ + "\": unknown key \"" + std::string(key.str()) +
                                           "\"; allowed: " + join(allowed_)});
    }
}

}  // namespace faultline::harness
