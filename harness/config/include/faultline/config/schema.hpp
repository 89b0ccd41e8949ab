// The JSON Schema of a file format, generated from its parser: while a `schema_recorder` records on a
// thread, every `table_reader` (reader.hpp) reports each key its parser asks for — type, range,
// choices, whether required — and where in the document its table is. `generate_schema` runs the
// parser over probe documents it grows from what was recorded (every table present, one array item
// per value of a discriminator such as a fault's `kind`) until nothing new turns up, then writes the
// schema. The schema therefore says what the strict reader accepts without being written twice;
// `faultline schema` prints it for editors (Taplo / Even Better TOML).
#pragma once

#include <boost/json/object.hpp>

#include <toml++/toml.h>

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace faultline::config {

// What a parser asked of one key.
struct key_spec {
    enum class shape {
        any,  // allowed, read by someone else (has, allow)
        boolean,
        integer,
        number,
        string,
        choice,
        duration,
        duration_or_none,
        table,
        array_of_tables,
        array,
        strings,
        string_or_strings,
        integers,
        integers_or_string,  // one integer, a list of them, or a string in the key's own syntax ("10..190:10")
        string_table,
    };
    shape type = shape::any;
    bool required = false;
    std::optional<double> minimum;
    std::optional<double> maximum;
    bool exclusive_minimum = false;
    std::vector<std::string> choices;

    bool same_value_rules(const key_spec& other) const;
};

// One table's keys in file order, by the table's path ("" the document, "fault[]" an item of
// [[fault]], "fault[]/match" its [fault.match]) and variant ("kind=delay" when the table's
// discriminator key holds "delay"; "" when it has none).
struct table_keys {
    std::vector<std::pair<std::string, key_spec>> keys;
    // A key is required where every table of this path and variant required it: a delay's `min` is
    // required only for uniform ones, so it is not required of delays.
    std::size_t instances = 0;
    std::map<std::string, std::size_t> required_in;
    bool required(const std::string& key) const;
};
using recorded_tables = std::map<std::pair<std::string, std::string>, table_keys>;

class schema_recorder {
public:
    // `discriminators`: keys whose value decides which other keys a table takes ("kind", "check", …).
    explicit schema_recorder(std::vector<std::string> discriminators);
    ~schema_recorder();
    schema_recorder(const schema_recorder&) = delete;
    schema_recorder& operator=(const schema_recorder&) = delete;

    // The next table a reader is opened on, if not found inside a known one, is a new document's root.
    void begin_document();
    const recorded_tables& tables() const { return tables_; }
    std::size_t size() const;

    // Called by table_reader for each key it is asked for, and by a parser of a key of several forms
    // before it reads the one present (the first spec of a key wins); does nothing unless one is recording.
    static void note(const toml::table& table, std::string_view key, const key_spec& spec);

private:
    std::optional<std::string> path_of(const toml::table& table);
    std::string variant_of(const toml::table& table) const;
    void add(const toml::table& table, std::string_view key, const key_spec& spec);

    std::vector<std::string> discriminators_;
    std::map<const toml::table*, std::string> paths_;  // of the current document's tables
    std::set<std::pair<const toml::table*, std::string>> required_noted_;  // in the current document
    recorded_tables tables_;
};

// Runs `parse` (a format's parser over TOML text; its errors are ignored) on probe documents and
// returns the format's JSON Schema (draft-07), titled `title`.
boost::json::object generate_schema(std::string_view title, const std::function<void(std::string_view)>& parse,
                                    std::vector<std::string> discriminators);

}  // namespace faultline::config
