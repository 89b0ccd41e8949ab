#include "faultline/faults/rules_toml.hpp"

#include <limits>
#include <map>
#include <sstream>

#include <boost/json.hpp>

#include "faultline/config/document.hpp"
#include "faultline/config/duration.hpp"
#include "faultline/config/reader.hpp"

namespace faultline::faults {
namespace {

using config::need;
using config::position_of;

// "file:line:column" of a position, for messages that point at a second place.
std::string where_text(const source_position& where) {
    return where.file + ":" + std::to_string(where.line) + ":" + std::to_string(where.column);
}

boost::json::value to_json(const toml::node& node) {
    if (const auto* table = node.as_table()) {
        boost::json::object out;
        for (const auto& [key, value] : *table) {
            out[key.str()] = to_json(value);
        }
        return out;
    }
    if (const auto* array = node.as_array()) {
        boost::json::array out;
        for (const toml::node& item : *array) {
            out.push_back(to_json(item));
        }
        return out;
    }
    if (const auto* s = node.as_string()) {
        return boost::json::string{s->get()};
    }
    if (const auto* i = node.as_integer()) {
        return i->get();
    }
    if (const auto* f = node.as_floating_point()) {
        return f->get();
    }
    if (const auto* b = node.as_boolean()) {
        return b->get();
    }
    // Dates and times: no kind reads them, but a listing should still show what was written.
    std::ostringstream text;
    node.visit([&text](const auto& value) { text << value; });
    return boost::json::string{text.str()};
}

// Reads [fault.match] of the rule `rule` reads (an empty match when there is none). Returns nothing
// (and records errors) when it is malformed.
std::optional<request_match> parse_match(config::table_reader& rule) {
    if (!rule.has("match")) {
        return request_match{};
    }
    const toml::table* table = rule.table("match");
    if (table == nullptr) {
        return std::nullopt;
    }
    config::table_reader keys = rule.child(*table, "[fault.match]");
    request_match match;
    if (auto methods = keys.string_or_strings("method")) {
        match.methods = std::move(*methods);
    }
    match.path = keys.string("path");
    if (auto headers = keys.string_table("headers")) {
        for (auto& [name, value] : *headers) {
            match.headers.push_back({std::move(name), std::move(value)});
        }
    }
    if (auto present = keys.string_or_strings("header_present")) {
        match.headers_present = std::move(*present);
    }
    keys.finish();
    if (!keys.ok()) {
        return std::nullopt;
    }
    return match;
}

// Reads [fault.when] (a trigger that always fires when there is none).
std::optional<trigger> parse_when(config::table_reader& rule) {
    if (!rule.has("when")) {
        return trigger{};
    }
    const toml::table* table = rule.table("when");
    if (table == nullptr) {
        return std::nullopt;
    }
    config::table_reader keys = rule.child(*table, "[fault.when]");
    constexpr std::int64_t max_int = std::numeric_limits<std::int64_t>::max();
    constexpr std::int64_t max_barrier_count = 1'000'000;
    trigger when;
    when.probability = keys.number("probability", 0.0, 1.0);
    if (auto attempts = keys.integers("attempts", 1, std::numeric_limits<std::uint32_t>::max())) {
        for (std::int64_t a : *attempts) {
            when.attempts.push_back(static_cast<std::uint32_t>(a));
        }
    }
    if (auto first = keys.integer("first", 1, max_int)) {
        when.first = static_cast<std::uint64_t>(*first);
    }
    if (auto every = keys.integer("every", 1, max_int)) {
        when.every = static_cast<std::uint64_t>(*every);
    }
    when.from = keys.duration("from");
    when.for_duration = keys.duration("for", std::chrono::nanoseconds{1});
    // A barrier of one would hold nothing; an hour bounds how long any attempt can be held.
    const auto barrier_count = keys.integer("barrier", 2, max_barrier_count);
    const auto barrier_timeout = keys.duration("barrier_timeout", std::chrono::milliseconds{1}, std::chrono::hours{1});
    if (barrier_count) {
        barrier_config barrier;
        barrier.count = static_cast<std::uint32_t>(*barrier_count);
        barrier.timeout = barrier_timeout.value_or(barrier.timeout);
        when.barrier = barrier;
    }
    if (barrier_timeout && !keys.has("barrier")) {
        keys.fail("barrier_timeout", "only applies with \"barrier\" (the number of attempts to gather)");
    }
    keys.finish();
    if (!keys.ok()) {
        return std::nullopt;
    }
    return when;
}

// "12345ms" as the largest unit that divides it exactly, for messages.
std::string duration_text(std::chrono::nanoseconds d) { return config::format_duration(d); }

// A listener-level fault as a rule writes it, for messages: `"refuse" with how = "closed_port"`.
std::string listener_fault_text(std::string_view kind, listener_verdict verdict) {
    return "\"" + std::string{kind} + "\" with how = \"" + std::string{listener_verdict_names(verdict)} + "\"";
}

// A listener-level rule acts on the listening port for a time window: it has no request to match,
// no attempt or connection to count or draw for, and fires once (the window), so only `from` and
// `for` may trigger it, and `min_fired` cannot ask for more than that one firing.
void check_listener_rule(config::table_reader& head, const toml::table& table, std::string_view fault,
                         const std::optional<std::int64_t>& min_fired) {
    if (table.contains("match")) {
        head.fail("match", "a listener-level fault (" + std::string{fault} +
                               " here) acts on the listening port and cannot match on a request");
    }
    if (const toml::table* when = table.get_as<toml::table>("when")) {
        config::table_reader keys = head.child(*when, "[fault.when]");
        for (std::string_view key : {"probability", "attempts", "first", "every", "barrier", "barrier_timeout"}) {
            if (when->contains(key)) {
                keys.fail(key, "a listener-level fault (" + std::string{fault} +
                                   " here) takes time triggers only (from, for): it acts on the listening port "
                                   "for a window, with no connection or attempt to count or draw for");
            }
        }
    }
    if (min_fired && *min_fired > 1) {
        head.fail("min_fired", "a listener-level fault (" + std::string{fault} +
                                   " here) fires once, when its window begins (the connects refused or left "
                                   "unanswered in it never reach the server to be counted), got " +
                                   std::to_string(*min_fired));
    }
}

}  // namespace

std::string rule_name_problem(std::string_view name) {
    constexpr std::size_t max_name = 128;
    if (name.empty() || name.size() > max_name) {
        return "must be 1 to 128 characters long, got " + std::to_string(name.size());
    }
    for (const char c : name) {
        const bool safe = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
                          c == '_' || c == ':' || c == '-';
        if (!safe) {
            // The name is a path segment of the control API (/__faultline/rules/{name},
            // /__faultline/proxies/{name}): '?', '/', '#', '%' and spaces would make it impossible to address.
            return "may hold only A-Z a-z 0-9 . _ : - (it is a path segment of the control API), got \"" +
                   std::string{name} + "\"";
        }
    }
    return {};
}

std::vector<std::string> wait_problems(const rule& r, const rule_limits& limits) {
    std::vector<std::string> out;
    const auto too_long = [&](std::string_view key, std::chrono::nanoseconds wait) {
        std::string where = r.where.file.empty() ? std::string{} : where_text(r.where) + ": ";
        out.push_back(where + "fault rule \"" + r.name + "\": " + std::string{key} + " = " + duration_text(wait) +
                      " is longer than [server] max_fault_wait = " + duration_text(limits.max_fault_wait));
    };
    if (r.fault) {
        if (const auto bound = r.fault->longest_wait(); bound && bound->longest > limits.max_fault_wait) {
            too_long(bound->key, bound->longest);
        }
    }
    if (r.when.barrier && r.when.barrier->timeout > limits.max_fault_wait) {
        too_long("barrier_timeout", r.when.barrier->timeout);
    }
    return out;
}

rules_result parse_rule(const toml::table& table, const std::string& file, std::size_t index,
                        const rule_limits& limits) {
    rules_result result;
    config_errors& errors = result.errors;

    // The rule's own keys. Unknown keys are reported by the kind's reader below, which knows the
    // kind's keys too.
    config::table_reader head{table, file, "fault rule", errors};
    const std::optional<std::string> kind_name =
        head.choice("kind", kind_registry::instance().names(), need::required);
    std::optional<std::string> name = head.string("name");
    if (name) {
        if (const std::string problem = rule_name_problem(*name); !problem.empty()) {
            head.fail("name", problem);
        }
    }
    // Not used by the engine: the runner fails a run in which the rule fired fewer times.
    const std::optional<std::int64_t> min_fired =
        head.integer("min_fired", 0, std::numeric_limits<std::int64_t>::max());

    const kind_info* info = kind_name ? kind_registry::instance().find(*kind_name) : nullptr;

    std::optional<request_match> match = parse_match(head);
    std::optional<trigger> when = parse_when(head);

    std::shared_ptr<const fault_kind> fault;
    if (info != nullptr) {
        config::table_reader keys = head.child(table, "fault kind \"" + info->name + "\"");
        for (std::string_view reserved : {"name", "kind", "match", "when", "min_fired"}) {
            keys.allow(reserved);
        }
        fault = info->make(keys);
        keys.finish();
        if (fault && keys.ok()) {
            if (const auto bound = fault->longest_wait(); bound && bound->longest > limits.max_fault_wait) {
                keys.fail(bound->key, "must be at most [server] max_fault_wait = " +
                                          duration_text(limits.max_fault_wait) + ", got " +
                                          duration_text(bound->longest));
            }
        }
        if (fault && fault->level() == fault_level::listener && keys.ok()) {
            check_listener_rule(head, table, listener_fault_text(info->name, *fault->on_listener()), min_fired);
        }
        if (fault && fault->level() == fault_level::connection && keys.ok()) {
            // A connection-level fault acts before any request is read, so there is nothing to match
            // and no operation to count attempts of.
            if (match && !match->empty()) {
                head.fail("match", "a connection-level fault (\"" + info->name +
                                       "\" here) acts before the request is read and cannot match on it");
            }
            if (when && !when->attempts.empty()) {
                head.child(*table.get_as<toml::table>("when"), "[fault.when]")
                    .fail_table("attempts: a connection-level fault (\"" + info->name +
                                "\" here) has no attempts to count");
            }
            if (when && when->barrier) {
                head.child(*table.get_as<toml::table>("when"), "[fault.when]")
                    .fail_table("barrier: a connection-level fault (\"" + info->name +
                                "\" here) acts on accept and has no attempts to hold");
            }
        }
    }

    if (when && when->barrier && when->barrier->timeout > limits.max_fault_wait) {
        head.child(*table.get_as<toml::table>("when"), "[fault.when]")
            .fail("barrier_timeout", "must be at most [server] max_fault_wait = " +
                                         duration_text(limits.max_fault_wait) + ", got " +
                                         duration_text(when->barrier->timeout));
    }
    if (!errors.empty() || !fault || !match || !when) {
        return result;
    }
    rule r;
    r.name = name ? std::move(*name) : info->name + "-" + std::to_string(index);
    r.kind = info->name;
    r.match = std::move(*match);
    r.when = *when;
    r.level = fault->level();
    r.fault = std::move(fault);
    r.source = to_json(table).as_object();
    r.source["name"] = r.name;
    r.where = position_of(table, file);
    if (min_fired) r.min_fired = static_cast<std::uint64_t>(*min_fired);
    result.rules.push_back(std::move(r));
    return result;
}

rules_result parse_rules(const toml::node& fault_array, const std::string& file, const rule_limits& limits) {
    rules_result result;
    const auto* array = fault_array.as_array();
    if (array == nullptr) {
        result.errors.push_back({position_of(fault_array, file),
                                 "fault: expected an array of tables ([[fault]]), got " +
                                     std::string{config::type_name(fault_array)}});
        return result;
    }
    std::map<std::string, source_position, std::less<>> seen;
    std::size_t index = 0;
    for (const toml::node& item : *array) {
        ++index;
        const auto* table = item.as_table();
        if (table == nullptr) {
            result.errors.push_back({position_of(item, file), "fault: every item must be a table ([[fault]]), got " +
                                                                  std::string{config::type_name(item)}});
            continue;
        }
        rules_result one = parse_rule(*table, file, index, limits);
        result.errors.insert(result.errors.end(), one.errors.begin(), one.errors.end());
        for (rule& r : one.rules) {
            if (const auto it = seen.find(r.name); it != seen.end()) {
                result.errors.push_back({r.where, "duplicate fault rule name \"" + r.name +
                                                      "\" (first defined at " +
                                                      where_text(it->second) + ")"});
                continue;
            }
            seen.emplace(r.name, r.where);
            result.rules.push_back(std::move(r));
        }
    }
    return result;
}

rules_result parse_rules_text(std::string_view toml_text, const std::string& file, const rule_limits& limits) {
    rules_result result;
    config::document document = config::parse_document(toml_text, file);
    if (!document.table) {
        result.errors = std::move(document.errors);
        return result;
    }
    // A rules file holds only [[fault]] tables; parse_rules reads them, so that an array with a stray
    // non-table item still yields its good rules.
    config::table_reader top{*document.table, file, "rules file", result.errors};
    top.allow("fault");
    top.finish();
    if (const toml::node* faults = document.table->get("fault")) {
        rules_result parsed = parse_rules(*faults, file, limits);
        result.rules = std::move(parsed.rules);
        result.errors.insert(result.errors.end(), parsed.errors.begin(), parsed.errors.end());
    }
    return result;
}

namespace {

// JSON -> TOML, so a rule posted as JSON goes through the same validation as one read from a file.
std::optional<toml::table> json_table(const boost::json::object& object, const std::string& where,
                                      config_errors& errors);

std::optional<toml::array> json_array(const boost::json::array& array, const std::string& where, config_errors& errors);

// `put` is called with the converted node's concrete type (toml++ inserts by value type).
template <typename Put>
bool insert_json(const boost::json::value& value, const std::string& where, config_errors& errors, Put&& put) {
    switch (value.kind()) {
    case boost::json::kind::string: put(toml::value<std::string>{std::string{value.get_string()}}); return true;
    case boost::json::kind::int64: put(toml::value<std::int64_t>{value.get_int64()}); return true;
    case boost::json::kind::uint64:
        if (value.get_uint64() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
            errors.push_back({{}, where + ": integer too large"});
            return false;
        }
        put(toml::value<std::int64_t>{static_cast<std::int64_t>(value.get_uint64())});
        return true;
    case boost::json::kind::double_: put(toml::value<double>{value.get_double()}); return true;
    case boost::json::kind::bool_: put(toml::value<bool>{value.get_bool()}); return true;
    case boost::json::kind::object:
        if (auto t = json_table(value.get_object(), where, errors)) {
            put(std::move(*t));
            return true;
        }
        return false;
    case boost::json::kind::array:
        if (auto a = json_array(value.get_array(), where, errors)) {
            put(std::move(*a));
            return true;
        }
        return false;
    case boost::json::kind::null: break;
    }
    errors.push_back({{}, where + ": null is not allowed"});
    return false;
}

std::optional<toml::table> json_table(const boost::json::object& object, const std::string& where,
                                      config_errors& errors) {
    toml::table out;
    bool good = true;
    for (const auto& member : object) {
        // A plain variable, not a structured binding: clang 14 (the fuzz build) cannot capture those.
        const std::string_view key = member.key();
        const std::string path = where.empty() ? std::string{key} : where + "." + std::string{key};
        good = insert_json(member.value(), path, errors, [&](auto&& node) {
                   out.insert_or_assign(std::string_view{key}, std::forward<decltype(node)>(node));
               }) && good;
    }
    if (!good) {
        return std::nullopt;
    }
    return out;
}

std::optional<toml::array> json_array(const boost::json::array& array, const std::string& where,
                                      config_errors& errors) {
    toml::array out;
    bool good = true;
    for (const boost::json::value& item : array) {
        good = insert_json(item, where, errors, [&](auto&& node) { out.push_back(std::forward<decltype(node)>(node)); }) && good;
    }
    if (!good) {
        return std::nullopt;
    }
    return out;
}

}  // namespace

std::optional<toml::table> json_as_toml(const boost::json::object& object, config_errors& errors) {
    return json_table(object, "", errors);
}

rules_result parse_rule_json(const boost::json::value& json, std::size_t index, const rule_limits& limits) {
    rules_result result;
    const auto* object = json.if_object();
    if (object == nullptr) {
        result.errors.push_back({{}, "a fault rule must be a JSON object with the keys of a [[fault]] table"});
        return result;
    }
    std::optional<toml::table> table = json_table(*object, "", result.errors);
    if (!table) {
        return result;
    }
    return parse_rule(*table, "", index, limits);
}

}  // namespace faultline::faults
