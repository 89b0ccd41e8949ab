#include "faultline/tcp/toxics_config.hpp"

#include "faultline/config/document.hpp"
#include "faultline/config/reader.hpp"

#include <limits>
#include <map>

namespace faultline::tcp {

std::string_view to_string(stream_direction d) { return d == stream_direction::upstream ? "upstream" : "downstream"; }

std::string_view to_string(link_end e) { return e == link_end::reset ? "reset" : "close"; }

using config::need;

// The keys the engine reads from every [[toxic]] table; a kind's factory reads the rest.
std::optional<configured_toxic> parse_toxic(const toml::table& table, const std::string& file, std::size_t index,
                                            config_errors& errors) {
    const std::size_t errors_before = errors.size();
    config::table_reader head{table, file, "[[toxic]]", errors};
    const auto kind = head.choice("kind", toxic_registry::instance().names(), need::required);
    const toxic_info* info = kind ? toxic_registry::instance().find(*kind) : nullptr;
    if (info == nullptr) return std::nullopt;  // the kind's keys are unknown, so nothing more can be judged

    configured_toxic out;
    out.kind = info->name;
    out.name = head.string("name").value_or(info->name + "-" + std::to_string(index));
    config::table_reader keys = head.child(table, "[[toxic]] \"" + out.name + "\"");
    keys.allow("kind");
    keys.allow("name");
    out.toxicity = keys.number("toxicity", 0.0, 1.0).value_or(1.0);
    out.from = keys.duration("from").value_or(std::chrono::nanoseconds{0});
    out.for_duration = keys.duration("for", std::chrono::nanoseconds{1});
    constexpr std::int64_t max_int = std::numeric_limits<std::int64_t>::max();
    if (const auto first = keys.integer("first", 1, max_int)) out.first = static_cast<std::uint64_t>(*first);
    if (const auto every = keys.integer("every", 1, max_int)) out.every = static_cast<std::uint64_t>(*every);

    out.behaviour = info->make(keys);
    if (out.behaviour && out.behaviour->per_direction()) {
        const auto stream = keys.choice("stream", {"upstream", "downstream"}).value_or("downstream");
        out.stream = stream == "upstream" ? stream_direction::upstream : stream_direction::downstream;
    } else {
        keys.reject("stream", "\"" + out.kind + "\" acts on the whole connection, not on one stream");
    }
    keys.finish();
    if (errors.size() != errors_before || !out.behaviour) return std::nullopt;
    return out;
}

toxics_result parse_toxic_array(const toml::node& node, const std::string& file) {
    toxics_result result;
    const toml::array* tables = node.as_array();
    if (tables == nullptr) {
        result.errors.push_back({config::position_of(node, file), "toxic: expected an array of tables ([[toxic]])"});
        return result;
    }
    toxic_set set;
    std::map<std::string, source_position, std::less<>> seen;
    std::size_t index = 0;
    for (const toml::node& item : *tables) {
        ++index;
        const auto* table = item.as_table();
        if (table == nullptr) {
            result.errors.push_back({config::position_of(item, file),
                                     "toxic[" + std::to_string(index - 1) + "]: expected a table ([[toxic]])"});
            continue;
        }
        auto parsed = parse_toxic(*table, file, index, result.errors);
        if (!parsed) continue;
        const source_position where = config::position_of(*table, file);
        if (const auto it = seen.find(parsed->name); it != seen.end()) {
            result.errors.push_back({where, "[[toxic]]: duplicate name \"" + parsed->name + "\" (first at " +
                                                it->second.file + ":" + std::to_string(it->second.line) + ":" +
                                                std::to_string(it->second.column) + ")"});
            continue;
        }
        seen.emplace(parsed->name, where);
        set.toxics.push_back(std::move(*parsed));
    }
    if (result.errors.empty()) result.set = std::move(set);
    return result;
}

namespace {

// A toxics file holds only [[toxic]] tables.
toxics_result parse_toxics_table(const toml::table& document, const std::string& file) {
    toxics_result result;
    config::table_reader top{document, file, "toxics file", result.errors};
    const toml::array* tables = top.array_of_tables("toxic");
    top.finish();
    if (!result.errors.empty()) return result;
    if (tables == nullptr) {
        result.set = toxic_set{};
        return result;
    }
    return parse_toxic_array(*tables, file);
}

toxics_result from_document(config::document document, const std::string& file) {
    if (!document.table) {
        toxics_result result;
        result.errors = std::move(document.errors);
        return result;
    }
    return parse_toxics_table(*document.table, file);
}

}  // namespace

toxics_result parse_toxics(std::string_view text, const std::string& file) {
    return from_document(config::parse_document(text, file), file);
}

toxics_result load_toxics(const std::string& path) {
    return from_document(config::load_document(path, "toxics file"), path);
}

bool toxic_applies(const configured_toxic& toxic, std::uint64_t seed, std::uint64_t connection,
                   std::chrono::nanoseconds since_start) {
    if (since_start < toxic.from) return false;
    if (toxic.for_duration && since_start - toxic.from >= *toxic.for_duration) return false;
    if (toxic.first && connection > *toxic.first) return false;
    if (toxic.every && connection % *toxic.every != 0) return false;
    // Rolled once per connection, from the toxic's name and the connection number only.
    const std::uint64_t roll = mix64(mix64(seed, hash_bytes(toxic.name)), connection);
    return unit_from_hash(roll) < toxic.toxicity;
}

std::uint64_t toxic_stream_key(std::uint64_t seed, std::string_view name, std::uint64_t connection) {
    // A different fold from the toxicity roll's, so the stream does not start at the roll's value.
    return mix64(mix64(mix64(seed, hash_bytes(name)), connection), 0x746f786963ULL);
}

}  // namespace faultline::tcp
