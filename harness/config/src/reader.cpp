#include "faultline/config/reader.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "faultline/config/duration.hpp"
#include "faultline/config/schema.hpp"

namespace faultline::config {

namespace {

// Whole numbers in full ("1000000000"), others in the shortest text that reads back ("0.5", "1e-09").
std::string format_number(double v) {
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (v == std::trunc(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<std::int64_t>(v));
    char buf[32];
    const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
    return std::string(buf, end);
}

template <class Range>
std::string join(const Range& items) {
    std::string out;
    for (const auto& item : items) {
        if (!out.empty()) out += ", ";
        out += item;
    }
    return out;
}

// What an accessor tells the schema recorder (schema.hpp) about its key.
key_spec spec_of(key_spec::shape type) {
    key_spec spec;
    spec.type = type;
    return spec;
}

key_spec ranged(key_spec::shape type, double min, double max, bool exclusive_minimum = false) {
    key_spec spec = spec_of(type);
    spec.minimum = min;
    spec.maximum = max;
    spec.exclusive_minimum = exclusive_minimum;
    return spec;
}

bool contains(const std::vector<std::string>& items, std::string_view key) {
    return std::find(items.begin(), items.end(), key) != items.end();
}

}  // namespace

std::string_view type_name(const toml::node& node) {
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

source_position position_of(const toml::node& node, const std::string& file) {
    const auto& region = node.source();
    return {region.path ? *region.path : file, region.begin.line, region.begin.column};
}

table_reader::table_reader(const toml::table& table, std::string file, std::string context, config_errors& errors)
    : table_{table}, file_{std::move(file)}, context_{std::move(context)}, errors_{errors},
      errors_at_start_{errors.size()} {}

table_reader table_reader::child(const toml::table& table, std::string context) const {
    return table_reader{table, file_, std::move(context), errors_};
}

std::string table_reader::prefix() const { return context_.empty() ? std::string{} : context_ + ": "; }

void table_reader::add(const toml::source_region& where, std::string message) {
    errors_.push_back({{where.path ? *where.path : file_, where.begin.line, where.begin.column}, std::move(message)});
}

void table_reader::error_at(const toml::node& node, std::string_view key, std::string_view message) {
    add(node.source(), prefix() + std::string{key} + ": " + std::string{message});
}

void table_reader::fail(std::string_view key, std::string_view message) {
    const toml::node* node = table_.get(key);
    error_at(node != nullptr ? *node : static_cast<const toml::node&>(table_), key, message);
}

void table_reader::fail_at(const toml::node& value, std::string_view path, std::string_view message) {
    error_at(value, path, message);
}

void table_reader::fail_table(std::string_view message) { add(table_.source(), prefix() + std::string{message}); }

void table_reader::allow(std::string_view key) {
    schema_recorder::note(table_, key, {});
    if (!contains(allowed_, key)) allowed_.emplace_back(key);
}

bool table_reader::has(std::string_view key) {
    schema_recorder::note(table_, key, {});
    allow(key);
    return table_.contains(key);
}

void table_reader::reject(std::string_view key, std::string_view message) {
    if (!contains(rejected_, key)) rejected_.emplace_back(key);
    if (table_.contains(key)) fail(key, message);
}

const toml::node* table_reader::lookup(std::string_view key, need n, key_spec spec) {
    spec.required = n == need::required;
    schema_recorder::note(table_, key, spec);
    allow(key);
    const toml::node* node = table_.get(key);
    if (node == nullptr && n == need::required) {
        fail_table("missing required key \"" + std::string{key} + "\"");
    }
    return node;
}

std::nullopt_t table_reader::wrong_type(std::string_view key, const toml::node& node, std::string_view expected) {
    error_at(node, key, "expected " + std::string{expected} + ", got " + std::string{type_name(node)});
    return std::nullopt;
}

std::optional<bool> table_reader::boolean(std::string_view key, need n) {
    const toml::node* node = lookup(key, n, spec_of(key_spec::shape::boolean));
    if (node == nullptr) return std::nullopt;
    if (const auto* b = node->as_boolean()) return b->get();
    return wrong_type(key, *node, "true or false");
}

std::optional<std::int64_t> table_reader::integer(std::string_view key, std::int64_t min, std::int64_t max, need n) {
    const toml::node* node = lookup(key, n,
                                    ranged(key_spec::shape::integer, static_cast<double>(min), static_cast<double>(max)));
    if (node == nullptr) return std::nullopt;
    const auto* value = node->as_integer();
    if (value == nullptr) return wrong_type(key, *node, "an integer");
    const std::int64_t v = value->get();
    if (v < min || v > max) {
        const std::string range = max == std::numeric_limits<std::int64_t>::max()
                                      ? "at least " + std::to_string(min)
                                      : "in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
        error_at(*node, key, "must be " + range + ", got " + std::to_string(v));
        return std::nullopt;
    }
    return v;
}

namespace {

std::optional<double> as_number(const toml::node& node) {
    if (const auto* f = node.as_floating_point()) return f->get();
    if (const auto* i = node.as_integer()) return static_cast<double>(i->get());
    return std::nullopt;
}

}  // namespace

std::optional<double> table_reader::number(std::string_view key, double min, double max, need n) {
    const toml::node* node = lookup(key, n, ranged(key_spec::shape::number, min, max));
    if (node == nullptr) return std::nullopt;
    const std::optional<double> v = as_number(*node);
    if (!v) return wrong_type(key, *node, "a number");
    if (!(*v >= min && *v <= max)) {  // written so that NaN fails too
        const std::string range = std::isinf(max) ? "at least " + format_number(min)
                                                  : "in [" + format_number(min) + ", " + format_number(max) + "]";
        error_at(*node, key, "must be " + range + ", got " + format_number(*v));
        return std::nullopt;
    }
    return v;
}

std::optional<double> table_reader::number_above(std::string_view key, double min, double max, need n) {
    const toml::node* node = lookup(key, n, ranged(key_spec::shape::number, min, max, true));
    if (node == nullptr) return std::nullopt;
    const std::optional<double> v = as_number(*node);
    if (!v) return wrong_type(key, *node, "a number");
    if (!(*v > min && *v <= max)) {
        const std::string range = std::isinf(max) ? "greater than " + format_number(min)
                                                  : "in (" + format_number(min) + ", " + format_number(max) + "]";
        error_at(*node, key, "must be " + range + ", got " + format_number(*v));
        return std::nullopt;
    }
    return v;
}

std::optional<std::string> table_reader::string(std::string_view key, need n) {
    const toml::node* node = lookup(key, n, spec_of(key_spec::shape::string));
    if (node == nullptr) return std::nullopt;
    if (const auto* s = node->as_string()) return s->get();
    return wrong_type(key, *node, "a string");
}

template <class Names>
std::optional<std::string> table_reader::choice_of(std::string_view key, const Names& allowed, need n) {
    key_spec spec = spec_of(key_spec::shape::choice);
    for (const auto& name : allowed) spec.choices.emplace_back(name);
    const toml::node* node = lookup(key, n, std::move(spec));
    if (node == nullptr) return std::nullopt;
    const auto* s = node->as_string();
    if (s == nullptr) return wrong_type(key, *node, "a string");
    if (std::find(allowed.begin(), allowed.end(), s->get()) == allowed.end()) {
        error_at(*node, key, "unknown value \"" + s->get() + "\"; allowed: " + join(allowed));
        return std::nullopt;
    }
    return s->get();
}

std::optional<std::string> table_reader::choice(std::string_view key, std::initializer_list<std::string_view> allowed,
                                                need n) {
    return choice_of(key, allowed, n);
}

std::optional<std::string> table_reader::choice(std::string_view key, const std::vector<std::string>& allowed,
                                                need n) {
    return choice_of(key, allowed, n);
}

namespace {

std::string duration_range(std::chrono::nanoseconds min, std::chrono::nanoseconds max) {
    if (max == std::chrono::nanoseconds::max()) {
        return min == std::chrono::nanoseconds{1} ? "longer than 0" : "at least " + format_duration(min);
    }
    return "in [" + format_duration(min) + ", " + format_duration(max) + "]";
}

}  // namespace

std::optional<std::chrono::nanoseconds> table_reader::duration(std::string_view key, std::chrono::nanoseconds min,
                                                               std::chrono::nanoseconds max, need n) {
    const toml::node* node = lookup(key, n, spec_of(key_spec::shape::duration));
    if (node == nullptr) return std::nullopt;
    const auto* s = node->as_string();
    if (s == nullptr) return wrong_type(key, *node, "a duration such as \"250ms\"");
    const parsed_duration parsed = parse_duration(s->get());
    if (!parsed) {
        error_at(*node, key, parsed.error);  // names the text: bad duration "5": missing unit …
        return std::nullopt;
    }
    if (*parsed.value < min || *parsed.value > max) {
        error_at(*node, key, "must be " + duration_range(min, max) + ", got \"" + s->get() + "\"");
        return std::nullopt;
    }
    return parsed.value;
}

std::optional<std::optional<std::chrono::nanoseconds>> table_reader::duration_or_none(std::string_view key,
                                                                                       std::chrono::nanoseconds min,
                                                                                       std::chrono::nanoseconds max) {
    schema_recorder::note(table_, key, spec_of(key_spec::shape::duration_or_none));
    const toml::node* node = table_.get(key);
    if (node != nullptr && node->value<std::string_view>() == "none") {
        allow(key);
        return std::optional<std::chrono::nanoseconds>{};
    }
    const auto d = duration(key, min, max);
    if (!d) return std::nullopt;
    return std::optional<std::chrono::nanoseconds>{*d};
}

const toml::table* table_reader::table(std::string_view key, need n) {
    const toml::node* node = lookup(key, n, spec_of(key_spec::shape::table));
    if (node == nullptr) return nullptr;
    const auto* t = node->as_table();
    if (t == nullptr) wrong_type(key, *node, "a table");
    return t;
}

const toml::array* table_reader::array_of_tables(std::string_view key, need n) {
    const toml::node* node = lookup(key, n, spec_of(key_spec::shape::array_of_tables));
    if (node == nullptr) return nullptr;
    const auto* a = node->as_array();
    // toml++ does not count an empty array as an array of tables; `key = []` declares none.
    if (a == nullptr || !(a->empty() || a->is_array_of_tables())) {
        wrong_type(key, *node, "an array of tables");
        return nullptr;
    }
    return a;
}

const toml::array* table_reader::array(std::string_view key, need n) {
    const toml::node* node = lookup(key, n, spec_of(key_spec::shape::array));
    if (node == nullptr) return nullptr;
    const auto* a = node->as_array();
    if (a == nullptr) wrong_type(key, *node, "an array");
    return a;
}

std::optional<std::vector<std::string>> table_reader::strings(std::string_view key, need n) {
    const toml::node* node = lookup(key, n, spec_of(key_spec::shape::strings));
    if (node == nullptr) return std::nullopt;
    const auto* array = node->as_array();
    if (array == nullptr) return wrong_type(key, *node, "an array of strings");
    std::vector<std::string> out;
    for (const toml::node& item : *array) {
        const auto* s = item.as_string();
        if (s == nullptr) {
            error_at(item, key, "every item must be a string, got " + std::string{type_name(item)});
            return std::nullopt;
        }
        out.push_back(s->get());
    }
    return out;
}

std::optional<std::vector<std::string>> table_reader::string_or_strings(std::string_view key, need n) {
    key_spec spec = spec_of(key_spec::shape::string_or_strings);
    spec.required = n == need::required;
    schema_recorder::note(table_, key, spec);
    const toml::node* node = table_.get(key);
    if (node != nullptr && node->is_string()) {
        allow(key);
        return std::vector<std::string>{node->as_string()->get()};
    }
    if (node != nullptr && !node->is_array()) {
        allow(key);
        return wrong_type(key, *node, "a string or an array of strings");
    }
    return strings(key, n);
}

std::optional<std::vector<std::int64_t>> table_reader::integers(std::string_view key, std::int64_t min,
                                                                std::int64_t max, need n) {
    const toml::node* node = lookup(key, n,
                                    ranged(key_spec::shape::integers, static_cast<double>(min), static_cast<double>(max)));
    if (node == nullptr) return std::nullopt;
    const auto* array = node->as_array();
    if (array == nullptr) return wrong_type(key, *node, "an array of integers");
    std::vector<std::int64_t> out;
    for (const toml::node& item : *array) {
        const auto* value = item.as_integer();
        if (value == nullptr || value->get() < min || value->get() > max) {
            error_at(item, key,
                     "every item must be an integer in [" + std::to_string(min) + ", " + std::to_string(max) +
                         "], got " + (value != nullptr ? std::to_string(value->get()) : std::string{type_name(item)}));
            return std::nullopt;
        }
        out.push_back(value->get());
    }
    return out;
}

std::optional<std::vector<std::pair<std::string, std::string>>> table_reader::string_table(std::string_view key,
                                                                                           need n) {
    const toml::node* node = lookup(key, n, spec_of(key_spec::shape::string_table));
    if (node == nullptr) return std::nullopt;
    const auto* table = node->as_table();
    if (table == nullptr) return wrong_type(key, *node, "a table of strings such as { \"X-A\" = \"1\" }");
    std::vector<std::pair<std::string, std::string>> out;
    bool good = true;
    for (const auto& [name, value] : *table) {
        if (const auto* s = value.as_string()) {
            out.emplace_back(std::string{name.str()}, s->get());
        } else {
            error_at(value, std::string{key} + "." + std::string{name.str()},
                     "expected a string, got " + std::string{type_name(value)});
            good = false;
        }
    }
    if (!good) return std::nullopt;
    return out;
}

void table_reader::finish() {
    std::vector<std::string> sorted = allowed_;
    std::sort(sorted.begin(), sorted.end());
    for (const auto& [key, value] : table_) {
        if (contains(allowed_, key.str()) || contains(rejected_, key.str())) continue;
        const bool key_known = key.source().begin.line != 0;
        add(key_known ? key.source() : value.source(),
            prefix() + "unknown key \"" + std::string{key.str()} + "\"; allowed: " + join(sorted));
    }
}

}  // namespace faultline::config
