#include "faultline/faults/kind.hpp"

#include <algorithm>

#include "faultline/config/duration.hpp"
#include "text.hpp"

namespace faultline::faults {

held_slot::held_slot(held_slot&& other) noexcept : counter_{std::move(other.counter_)} {}

held_slot& held_slot::operator=(held_slot&& other) noexcept {
    if (this != &other) {
        release();
        counter_ = std::move(other.counter_);
    }
    return *this;
}

held_slot::~held_slot() { release(); }

void held_slot::release() {
    if (counter_) {
        counter_->fetch_sub(1, std::memory_order_acq_rel);
        counter_.reset();
    }
}

capacity::capacity(std::int64_t limit)
    : limit_{limit}, counter_{std::make_shared<std::atomic<std::int64_t>>(0)} {}

std::optional<held_slot> capacity::try_acquire() {
    std::int64_t current = counter_->load(std::memory_order_relaxed);
    // Compare-exchange rather than add-then-check, so the count never exceeds the limit even
    // transiently (in_use() is reported as "active faults").
    while (current < limit_) {
        if (counter_->compare_exchange_weak(current, current + 1, std::memory_order_acq_rel)) {
            return held_slot{counter_};
        }
    }
    return std::nullopt;
}

std::string_view toml_type_name(const toml::node& node) {
    switch (node.type()) {
        case toml::node_type::table: return "a table";
        case toml::node_type::array: return "an array";
        case toml::node_type::string: return "a string";
        case toml::node_type::integer: return "an integer";
        case toml::node_type::floating_point: return "a float";
        case toml::node_type::boolean: return "a boolean";
        case toml::node_type::date: return "a date";
        case toml::node_type::time: return "a time";
        case toml::node_type::date_time: return "a date-time";
        case toml::node_type::none: break;
    }
    return "nothing";
}

namespace {

std::string format_number(double v) {
    std::string text = std::to_string(v);
    // std::to_string prints six decimals; trim the zeros so messages read "0.5", not "0.500000".
    while (text.size() > 1 && text.back() == '0') {
        text.pop_back();
    }
    if (!text.empty() && text.back() == '.') {
        text.pop_back();
    }
    return text;
}

}  // namespace

kind_config::kind_config(const toml::table& table, std::string file, std::string context,
                         std::initializer_list<std::string_view> reserved, config_errors& errors)
    : table_{table}, file_{std::move(file)}, context_{std::move(context)}, errors_{errors}, errors_at_start_{errors.size()} {
    for (std::string_view key : reserved) {
        allowed_.emplace_back(key);
    }
}

source_position kind_config::position_of(const toml::node& node) const {
    const auto& begin = node.source().begin;
    return {file_, begin.line, begin.column};
}

void kind_config::add_error(source_position where, std::string message) {
    errors_.push_back({std::move(where), std::move(message)});
}

const toml::node* kind_config::lookup(std::string_view key, need n) {
    if (std::find(allowed_.begin(), allowed_.end(), key) == allowed_.end()) {
        allowed_.emplace_back(key);
    }
    const toml::node* node = table_.get(key);
    if (node == nullptr && n == need::required) {
        add_error(position_of(table_),
                  context_ + ": missing required key \"" + std::string{key} + "\"");
    }
    return node;
}

void kind_config::fail(std::string_view key, std::string message) {
    const toml::node* node = table_.get(key);
    add_error(position_of(node != nullptr ? *node : static_cast<const toml::node&>(table_)),
              context_ + ": key \"" + std::string{key} + "\": " + message);
}

std::optional<std::int64_t> kind_config::integer(std::string_view key, need n, std::int64_t min, std::int64_t max) {
    const toml::node* node = lookup(key, n);
    if (node == nullptr) {
        return std::nullopt;
    }
    const auto* value = node->as_integer();
    if (value == nullptr) {
        fail(key, "must be an integer, not " + std::string(toml_type_name(*node)));
        return std::nullopt;
    }
    const std::int64_t v = value->get();
    if (v < min || v > max) {
        fail(key, "must be between " + std::to_string(min) + " and " + std::to_string(max) + " (got " +
                      std::to_string(v) + ")");
        return std::nullopt;
    }
    return v;
}

std::optional<double> kind_config::number(std::string_view key, need n, double min, double max) {
    const toml::node* node = lookup(key, n);
    if (node == nullptr) {
        return std::nullopt;
    }
    std::optional<double> v;
    if (const auto* f = node->as_floating_point()) {
        v = f->get();
    } else if (const auto* i = node->as_integer()) {
        v = static_cast<double>(i->get());
    } else {
        fail(key, "must be a number, not " + std::string(toml_type_name(*node)));
        return std::nullopt;
    }
    // Written so that NaN fails too.
    if (!(*v >= min && *v <= max)) {
        fail(key, "must be between " + format_number(min) + " and " + format_number(max) + " (got " +
                      format_number(*v) + ")");
        return std::nullopt;
    }
    return v;
}

std::optional<std::string> kind_config::string(std::string_view key, need n) {
    const toml::node* node = lookup(key, n);
    if (node == nullptr) {
        return std::nullopt;
    }
    const auto* value = node->as_string();
    if (value == nullptr) {
        fail(key, "must be a string, not " + std::string(toml_type_name(*node)));
        return std::nullopt;
    }
    return value->get();
}

std::optional<std::chrono::nanoseconds> kind_config::duration(std::string_view key, need n, std::chrono::nanoseconds min,
                                                              std::chrono::nanoseconds max) {
    const toml::node* node = lookup(key, n);
    if (node == nullptr) {
        return std::nullopt;
    }
    const auto* value = node->as_string();
    if (value == nullptr) {
        fail(key, "must be a duration string such as \"250ms\" or \"2s\", not " + std::string(toml_type_name(*node)));
        return std::nullopt;
    }
    const config::parsed_duration parsed = config::parse_duration(value->get());
    if (!parsed) {
        fail(key, parsed.error);
        return std::nullopt;
    }
    if (*parsed.value < min || *parsed.value > max) {
        std::string range = "at least " + config::format_duration(min);
        if (max != std::chrono::nanoseconds::max()) {
            range += " and at most " + config::format_duration(max);
        }
        fail(key, "must be " + range + " (got \"" + value->get() + "\")");
        return std::nullopt;
    }
    return parsed.value;
}

std::optional<std::string> kind_config::choice(std::string_view key, need n,
                                               std::initializer_list<std::string_view> allowed) {
    const toml::node* node = lookup(key, n);
    if (node == nullptr) {
        return std::nullopt;
    }
    std::vector<std::string> names(allowed.begin(), allowed.end());
    const auto* value = node->as_string();
    if (value == nullptr) {
        fail(key, "must be one of " + detail::quoted_list(names) + ", not " + std::string(toml_type_name(*node)));
        return std::nullopt;
    }
    if (std::find(names.begin(), names.end(), value->get()) == names.end()) {
        fail(key, "\"" + value->get() + "\" is not one of " + detail::quoted_list(names));
        return std::nullopt;
    }
    return value->get();
}

std::optional<header_list> kind_config::string_table(std::string_view key, need n) {
    const toml::node* node = lookup(key, n);
    if (node == nullptr) {
        return std::nullopt;
    }
    const auto* table = node->as_table();
    if (table == nullptr) {
        fail(key, "must be a table of strings such as { \"X-A\" = \"1\" }, not " + std::string(toml_type_name(*node)));
        return std::nullopt;
    }
    header_list out;
    bool good = true;
    for (const auto& [name, value] : *table) {
        if (const auto* text = value.as_string()) {
            out.emplace_back(std::string{name.str()}, text->get());
        } else {
            add_error(position_of(value), context_ + ": key \"" + std::string{key} + "." +
                                              std::string{name.str()} + "\": must be a string, not " +
                                              std::string(toml_type_name(value)));
            good = false;
        }
    }
    if (!good) {
        return std::nullopt;
    }
    return out;
}

std::optional<std::vector<std::string>> kind_config::string_list(std::string_view key, need n) {
    const toml::node* node = lookup(key, n);
    if (node == nullptr) {
        return std::nullopt;
    }
    if (const auto* one = node->as_string()) {
        return std::vector<std::string>{one->get()};
    }
    const auto* array = node->as_array();
    if (array == nullptr) {
        fail(key, "must be a string or an array of strings, not " + std::string(toml_type_name(*node)));
        return std::nullopt;
    }
    std::vector<std::string> out;
    for (const toml::node& item : *array) {
        const auto* text = item.as_string();
        if (text == nullptr) {
            add_error(position_of(item), context_ + ": key \"" + std::string{key} +
                                             "\": every item must be a string, not " + std::string(toml_type_name(item)));
            return std::nullopt;
        }
        out.push_back(text->get());
    }
    return out;
}

std::optional<std::vector<std::int64_t>> kind_config::integer_list(std::string_view key, need n, std::int64_t min,
                                                                   std::int64_t max) {
    const toml::node* node = lookup(key, n);
    if (node == nullptr) {
        return std::nullopt;
    }
    const auto* array = node->as_array();
    if (array == nullptr) {
        fail(key, "must be an array of integers such as [1, 2], not " + std::string(toml_type_name(*node)));
        return std::nullopt;
    }
    std::vector<std::int64_t> out;
    for (const toml::node& item : *array) {
        const auto* value = item.as_integer();
        if (value == nullptr || value->get() < min || value->get() > max) {
            add_error(position_of(item), context_ + ": key \"" + std::string{key} +
                                             "\": every item must be an integer between " + std::to_string(min) +
                                             " and " + std::to_string(max));
            return std::nullopt;
        }
        out.push_back(value->get());
    }
    return out;
}

void kind_config::finish() {
    for (const auto& [key, value] : table_) {
        if (std::find(allowed_.begin(), allowed_.end(), key.str()) == allowed_.end()) {
            const auto& begin = key.source().begin;
            const bool known = begin.line != 0;
            add_error(known ? source_position{file_, begin.line, begin.column} : position_of(value),
                      context_ + ": unknown key \"" + std::string{key.str()} +
                          "\" (allowed: " + detail::quoted_list(allowed_) + ")");
        }
    }
}

}  // namespace faultline::faults
