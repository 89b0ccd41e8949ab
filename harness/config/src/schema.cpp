#include "faultline/config/schema.hpp"

#include <boost/json/array.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <sstream>

namespace faultline::config {

namespace {

// The recorder of this thread's parse, if any: the readers are created deep inside every format's
// parser, which should not carry a recorder through their signatures for a tool that runs them once.
thread_local schema_recorder* active = nullptr;

std::string join_path(const std::string& path, std::string_view key) {
    return path.empty() ? std::string{key} : path + "/" + std::string{key};
}

std::string items_of(const std::string& path, std::string_view key) { return join_path(path, key) + "[]"; }

}  // namespace

bool key_spec::same_value_rules(const key_spec& other) const {
    return type == other.type && minimum == other.minimum && maximum == other.maximum &&
           exclusive_minimum == other.exclusive_minimum && choices == other.choices;
}

schema_recorder::schema_recorder(std::vector<std::string> discriminators) : discriminators_{std::move(discriminators)} {
    active = this;
}

schema_recorder::~schema_recorder() { active = nullptr; }

bool table_keys::required(const std::string& key) const {
    const auto it = required_in.find(key);
    return it != required_in.end() && it->second == instances;
}

void schema_recorder::begin_document() {
    paths_.clear();
    required_noted_.clear();
}

std::size_t schema_recorder::size() const {
    std::size_t n = 0;
    for (const auto& [where, table] : tables_) n += table.keys.size();
    return n;
}

void schema_recorder::note(const toml::table& table, std::string_view key, const key_spec& spec) {
    if (active != nullptr) active->add(table, key, spec);
}

// A table is placed by finding it inside one already placed (parents are read before children),
// whichever way its parser reached it.
std::optional<std::string> schema_recorder::path_of(const toml::table& table) {
    if (const auto it = paths_.find(&table); it != paths_.end()) return it->second;
    if (paths_.empty()) return paths_[&table] = "";
    for (const auto& [parent, path] : paths_) {
        for (const auto& [key, value] : *parent) {
            if (value.as_table() == &table) return paths_[&table] = join_path(path, key.str());
            if (const auto* array = value.as_array()) {
                for (const toml::node& item : *array) {
                    if (item.as_table() == &table) return paths_[&table] = items_of(path, key.str());
                }
            }
        }
    }
    return std::nullopt;  // a table the parser made itself (a default), not the document's
}

std::string schema_recorder::variant_of(const toml::table& table) const {
    for (const std::string& key : discriminators_) {
        if (const auto value = table[key].value<std::string>()) return key + "=" + *value;
    }
    return {};
}

void schema_recorder::add(const toml::table& table, std::string_view key, const key_spec& spec) {
    const bool new_table = !paths_.contains(&table);
    const auto path = path_of(table);
    if (!path) return;
    table_keys& recorded = tables_[{*path, variant_of(table)}];
    if (new_table) ++recorded.instances;
    if (spec.required && required_noted_.emplace(&table, std::string{key}).second) ++recorded.required_in[std::string{key}];
    auto& keys = recorded.keys;
    const auto it = std::ranges::find(keys, key, &std::pair<std::string, key_spec>::first);
    if (it == keys.end()) {
        keys.emplace_back(std::string{key}, spec);
        return;
    }
    // has() or allow() first, the typed accessor after: the typed one says more.
    if (it->second.type == key_spec::shape::any) it->second = spec;
}

namespace {

using shape = key_spec::shape;

// Every variant's keys at one path, merged: a key's spec is kept where all variants agree.
struct merged_table {
    std::vector<std::string> variants;  // "" alone when the table has no discriminator
    std::vector<std::pair<std::string, key_spec>> keys;
    std::set<std::string> conflicting;  // keys whose value rules differ between variants
};

merged_table merge(const recorded_tables& tables, const std::string& path) {
    merged_table out;
    for (const auto& [where, table] : tables) {
        if (where.first != path) continue;
        out.variants.push_back(where.second);
        for (const auto& [key, spec] : table.keys) {
            const auto it = std::ranges::find(out.keys, key, &std::pair<std::string, key_spec>::first);
            // A variant that only allows a key (reads it elsewhere) does not disagree with one that types it.
            if (it == out.keys.end()) {
                out.keys.emplace_back(key, spec);
            } else if (it->second.type == shape::any) {
                it->second = spec;
            } else if (spec.type != shape::any && !it->second.same_value_rules(spec)) {
                out.conflicting.insert(key);
            }
        }
    }
    return out;
}

bool has_items(const recorded_tables& tables, const std::string& path) {
    return std::ranges::any_of(tables, [&](const auto& entry) { return entry.first.first == path; });
}

// The discriminator a table's items take, with its values: the first choice key named one.
std::optional<std::pair<std::string, std::vector<std::string>>> discriminator_at(
    const recorded_tables& tables, const std::string& path, const std::vector<std::string>& discriminators) {
    for (const auto& [key, spec] : merge(tables, path).keys) {
        if (spec.type == shape::choice && std::ranges::find(discriminators, key) != discriminators.end()) {
            return std::pair{key, spec.choices};
        }
    }
    return std::nullopt;
}

// A value `spec` accepts, so that keys a parser reads only when another is present are reached.
void put_sample(toml::table& table, const std::string& key, const key_spec& spec, const std::string& chosen) {
    const double low = spec.minimum && std::isfinite(*spec.minimum) ? *spec.minimum : 0.0;
    const double high = spec.maximum && std::isfinite(*spec.maximum) ? *spec.maximum : low + 2.0;
    switch (spec.type) {
        case shape::boolean: table.insert_or_assign(key, false); break;
        case shape::integer: table.insert_or_assign(key, static_cast<std::int64_t>(std::max(low, -1e15))); break;
        case shape::number: table.insert_or_assign(key, spec.exclusive_minimum ? (low + high) / 2 : low); break;
        case shape::string:
        case shape::string_or_strings: table.insert_or_assign(key, "x"); break;
        case shape::choice:
            if (!spec.choices.empty()) table.insert_or_assign(key, chosen.empty() ? spec.choices.front() : chosen);
            break;
        case shape::duration:
        case shape::duration_or_none: table.insert_or_assign(key, "1s"); break;
        case shape::strings: table.insert_or_assign(key, toml::array{"x"}); break;
        case shape::integers: table.insert_or_assign(key, toml::array{static_cast<std::int64_t>(std::max(low, -1e15))}); break;
        case shape::integers_or_string: table.insert_or_assign(key, static_cast<std::int64_t>(std::max(low, -1e15))); break;
        case shape::string_table: table.insert_or_assign(key, toml::table{}); break;
        case shape::array: table.insert_or_assign(key, toml::array{}); break;
        case shape::any:
        case shape::table:
        case shape::array_of_tables: break;
    }
}

// The probe documents: every recorded key present with a value it accepts, [[arrays]] with an item
// per variant (a fault per kind) and per further value of each of its choice keys (a delay per
// distribution), and one document per further value of each choice key of a plain table.
class probe_builder {
public:
    probe_builder(const recorded_tables& tables, const std::vector<std::string>& discriminators)
        : tables_{tables}, discriminators_{discriminators} {}

    std::vector<toml::table> documents() {
        std::vector<toml::table> out{build("", {})};
        const auto choices = plain_choices_;
        for (const auto& [where, values] : choices) {
            for (std::size_t i = 1; i < values.size(); ++i) out.push_back(build("", {{where, values[i]}}));
        }
        return out;
    }

private:
    using choice_key = std::pair<std::string, std::string>;  // a table's path, a key
    using overrides = std::map<choice_key, std::string>;

    toml::table build(const std::string& path, const overrides& chosen) {
        toml::table table;
        for (const auto& [key, spec] : merge(tables_, path).keys) {
            if (spec.type == shape::table) {
                table.insert(key, build(join_path(path, key), chosen));
            } else if (spec.type == shape::array_of_tables ||
                       (spec.type == shape::any && !has_items(tables_, join_path(path, key)))) {
                // An allowed key of unknown type is tried as an array of tables: its items are read by
                // another parser ([[fault]] in a scenario), or its type error is ignored.
                table.insert(key, items_array(items_of(path, key), chosen));
            } else {
                const auto it = chosen.find({path, key});
                put_sample(table, key, spec, it != chosen.end() ? it->second : std::string{});
                if (spec.type == shape::choice && !path.ends_with("[]")) plain_choices_.emplace(choice_key{path, key}, spec.choices);
            }
        }
        return table;
    }

    toml::array items_array(const std::string& items, const overrides& chosen) {
        toml::array array;
        const auto discriminator = discriminator_at(tables_, items, discriminators_);
        const auto add = [&](const std::vector<std::pair<std::string, std::string>>& values) {
            toml::table item = build(items, chosen);
            for (const auto& [key, value] : values) item.insert_or_assign(key, value);
            array.push_back(std::move(item));
        };
        const auto each_further_choice = [&](const table_keys& keys, std::vector<std::pair<std::string, std::string>> base) {
            add(base);
            for (const auto& [key, spec] : keys.keys) {
                if (spec.type != shape::choice || (discriminator && key == discriminator->first)) continue;
                for (std::size_t i = 1; i < spec.choices.size(); ++i) {
                    auto values = base;
                    values.emplace_back(key, spec.choices[i]);
                    add(values);
                }
            }
        };
        if (!discriminator) {
            const auto it = tables_.find({items, ""});
            each_further_choice(it != tables_.end() ? it->second : table_keys{}, {});
            return array;
        }
        for (const std::string& value : discriminator->second) {
            const auto it = tables_.find({items, discriminator->first + "=" + value});
            each_further_choice(it != tables_.end() ? it->second : table_keys{}, {{discriminator->first, value}});
        }
        return array;
    }

    const recorded_tables& tables_;
    const std::vector<std::string>& discriminators_;
    std::map<choice_key, std::vector<std::string>> plain_choices_;
};

constexpr std::string_view duration_pattern = "^[0-9]+(ns|us|ms|s|m|h)$";

class schema_writer {
public:
    explicit schema_writer(const recorded_tables& tables) : tables_{tables} {}

    boost::json::object table_schema(const std::string& path) {
        const merged_table merged = merge(tables_, path);
        boost::json::object properties;
        boost::json::array required;
        for (const auto& [key, spec] : merged.keys) {
            properties[key] = merged.conflicting.contains(key) ? boost::json::object{} : value_schema(path, key, spec);
            if (required_in_every_variant(path, merged.variants, key)) required.emplace_back(key);
        }
        boost::json::object out{{"type", "object"}, {"properties", std::move(properties)}, {"additionalProperties", false}};
        if (!required.empty()) out["required"] = std::move(required);
        if (merged.variants.size() > 1 || (merged.variants.size() == 1 && !merged.variants.front().empty())) {
            out["allOf"] = variant_rules(path, merged);
        }
        return out;
    }

private:
    // Per variant: if the discriminator holds its value, only its own keys, with its own rules.
    boost::json::array variant_rules(const std::string& path, const merged_table& merged) {
        boost::json::array rules;
        for (const std::string& variant : merged.variants) {
            const auto eq = variant.find('=');
            if (eq == std::string::npos) continue;
            const std::string key = variant.substr(0, eq);
            const std::string value = variant.substr(eq + 1);
            const table_keys& own = tables_.at({path, variant});
            boost::json::array names;
            boost::json::array required;
            boost::json::object properties;
            for (const auto& [name, spec] : own.keys) {
                names.emplace_back(name);
                if (own.required(name)) required.emplace_back(name);
                if (merged.conflicting.contains(name)) properties[name] = value_schema(path, name, spec);
            }
            boost::json::object then{{"propertyNames", boost::json::object{{"enum", std::move(names)}}}};
            if (!properties.empty()) then["properties"] = std::move(properties);
            if (!required.empty()) then["required"] = std::move(required);
            boost::json::array present;
            present.emplace_back(key);
            boost::json::object when{{"properties", boost::json::object{{key, boost::json::object{{"const", value}}}}}};
            when["required"] = std::move(present);
            rules.emplace_back(boost::json::object{{"if", std::move(when)}, {"then", std::move(then)}});
        }
        return rules;
    }

    bool required_in_every_variant(const std::string& path, const std::vector<std::string>& variants,
                                   const std::string& key) const {
        return std::ranges::all_of(variants,
                                   [&](const std::string& variant) { return tables_.at({path, variant}).required(key); });
    }

    // An accessor's range as JSON Schema bounds; infinities and the 64-bit integer limits (an
    // integer accessor's "no bound") are left out.
    static void bounds(boost::json::object& out, const key_spec& spec) {
        const auto bounded = [](double v) {
            return std::isfinite(v) && v > static_cast<double>(std::numeric_limits<std::int64_t>::min()) &&
                   v < static_cast<double>(std::numeric_limits<std::int64_t>::max());
        };
        if (spec.minimum && bounded(*spec.minimum)) out[spec.exclusive_minimum ? "exclusiveMinimum" : "minimum"] = *spec.minimum;
        if (spec.maximum && bounded(*spec.maximum)) out["maximum"] = *spec.maximum;
    }

    boost::json::object value_schema(const std::string& path, const std::string& key, const key_spec& spec) {
        const std::string below = join_path(path, key);
        const std::string items = items_of(path, key);
        switch (spec.type) {
            case shape::any:
                if (has_items(tables_, items)) return array_of(table_schema(items));
                return {};
            case shape::boolean: return {{"type", "boolean"}};
            case shape::integer: {
                boost::json::object out{{"type", "integer"}};
                bounds(out, spec);
                return out;
            }
            case shape::number: {
                boost::json::object out{{"type", "number"}};
                bounds(out, spec);
                return out;
            }
            case shape::string: return {{"type", "string"}};
            case shape::choice: {
                boost::json::array values;
                for (const auto& c : spec.choices) values.emplace_back(c);
                return {{"type", "string"}, {"enum", std::move(values)}};
            }
            case shape::duration: return {{"type", "string"}, {"pattern", duration_pattern}};
            case shape::duration_or_none:
                return {{"anyOf", boost::json::array{boost::json::object{{"type", "string"}, {"pattern", duration_pattern}},
                                                     boost::json::object{{"const", "none"}}}}};
            case shape::table: return has_items(tables_, below) ? table_schema(below) : boost::json::object{{"type", "object"}};
            case shape::array_of_tables:
                return array_of(has_items(tables_, items) ? table_schema(items) : boost::json::object{{"type", "object"}});
            case shape::array: return {{"type", "array"}};
            case shape::strings: return array_of({{"type", "string"}});
            case shape::string_or_strings:
                return {{"anyOf", boost::json::array{boost::json::object{{"type", "string"}}, array_of({{"type", "string"}})}}};
            case shape::integers: {
                boost::json::object item{{"type", "integer"}};
                bounds(item, spec);
                return array_of(std::move(item));
            }
            case shape::integers_or_string: {
                boost::json::object one{{"type", "integer"}};
                bounds(one, spec);
                return {{"anyOf", boost::json::array{one, array_of(one), boost::json::object{{"type", "string"}}}}};
            }
            case shape::string_table:
                return {{"type", "object"}, {"additionalProperties", boost::json::object{{"type", "string"}}}};
        }
        return {};
    }

    static boost::json::object array_of(boost::json::object item) {
        return {{"type", "array"}, {"items", std::move(item)}};
    }

    const recorded_tables& tables_;
};

}  // namespace

boost::json::object generate_schema(std::string_view title, const std::function<void(std::string_view)>& parse,
                                    std::vector<std::string> discriminators) {
    schema_recorder recorder{discriminators};
    // Each round adds what the last one revealed (a table's keys once it is present, an item per
    // kind once the kinds are known); the formats nest a few levels, so this ends in a few rounds.
    constexpr int max_rounds = 8;
    std::size_t known = static_cast<std::size_t>(-1);
    for (int round = 0; round < max_rounds && recorder.size() != known; ++round) {
        known = recorder.size();
        for (const toml::table& document : probe_builder{recorder.tables(), discriminators}.documents()) {
            std::ostringstream text;
            text << document;
            recorder.begin_document();
            parse(text.str());
        }
    }
    boost::json::object schema = schema_writer{recorder.tables()}.table_schema("");
    boost::json::object out{{"$schema", "http://json-schema.org/draft-07/schema#"}, {"title", title}};
    for (auto& [key, value] : schema) out[key] = std::move(value);
    return out;
}

}  // namespace faultline::config
