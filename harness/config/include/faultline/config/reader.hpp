// The one strict reader of faultline's TOML: every parser (fault kinds and rules, the [server] table,
// [client] and its drivers, [[expect]] checks, the scenario's own keys) reads its table through a
// `table_reader`, so every file reports problems the same way:
//
//   file:line:column: <context>: <key>: expected an integer, got a string
//   file:line:column: <context>: <key>: must be in [1, 1000], got 0
//   file:line:column: <context>: <key>: unknown value "x"; allowed: a, b
//   file:line:column: <context>: missing required key "wait"
//   file:line:column: <context>: unknown key "wiat"; allowed: kind, name, wait
//
// `context` names the table ("[client]", "check \"backoff\"", "fault kind \"delay\""); positions are
// toml++'s source regions (of the value, of the key for unknown keys, of the table for missing keys).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <toml++/toml.h>

#include "faultline/core/config_error.hpp"

namespace faultline::config {

// How a message names a TOML value's type: "a string", "an integer", "an array", …
std::string_view type_name(const toml::node& node);

struct key_spec;  // schema.hpp: what an accessor asked of a key, for the generated JSON Schema

// Whether a key must be present.
enum class need { optional, required };

// A typed, validating view of one TOML table. Every accessor declares its key as allowed (whether or
// not the key is present, so a parser asks for all its keys unconditionally), checks type and range,
// records any problem in the `config_errors` it was given, and returns nothing when the key is absent
// or invalid. `finish` then reports each key nobody asked for. Holds references to the table and the
// error list, which must outlive it. Not thread-safe.
class table_reader {
public:
    table_reader(const toml::table& table, std::string file, std::string context, config_errors& errors);

    // A reader for a sub-table, reporting into the same error list.
    table_reader child(const toml::table& table, std::string context) const;

    std::optional<bool> boolean(std::string_view key, need n = need::optional);
    std::optional<std::int64_t> integer(std::string_view key, std::int64_t min, std::int64_t max,
                                        need n = need::optional);
    // An integer or a float within [min, max]; NaN is out of every range.
    std::optional<double> number(std::string_view key, double min, double max, need n = need::optional);
    // As `number`, within (min, max].
    std::optional<double> number_above(std::string_view key, double min, double max, need n = need::optional);
    std::optional<std::string> string(std::string_view key, need n = need::optional);
    // A string that must be one of `allowed` (the message lists them in the order given).
    std::optional<std::string> choice(std::string_view key, std::initializer_list<std::string_view> allowed,
                                      need n = need::optional);
    // The same over a list known only at run time, e.g. a registry's names.
    std::optional<std::string> choice(std::string_view key, const std::vector<std::string>& allowed,
                                      need n = need::optional);
    // A duration string ("250ms", duration.hpp) within [min, max].
    std::optional<std::chrono::nanoseconds> duration(
        std::string_view key, std::chrono::nanoseconds min = std::chrono::nanoseconds{0},
        std::chrono::nanoseconds max = std::chrono::nanoseconds::max(), need n = need::optional);
    // A duration, or the string "none" (an empty inner optional).
    std::optional<std::optional<std::chrono::nanoseconds>> duration_or_none(std::string_view key,
                                                                             std::chrono::nanoseconds min,
                                                                             std::chrono::nanoseconds max);
    const toml::table* table(std::string_view key, need n = need::optional);
    // An array of tables ([[name]]); may be empty.
    const toml::array* array_of_tables(std::string_view key, need n = need::optional);
    // An array whose items the caller reads one by one (a mix of integers and inline tables, say),
    // reporting bad ones with `fail_at`.
    const toml::array* array(std::string_view key, need n = need::optional);
    std::optional<std::vector<std::string>> strings(std::string_view key, need n = need::optional);
    // A string or an array of strings (a lone string is a list of one).
    std::optional<std::vector<std::string>> string_or_strings(std::string_view key, need n = need::optional);
    // An array of integers, each within [min, max].
    std::optional<std::vector<std::int64_t>> integers(std::string_view key, std::int64_t min, std::int64_t max,
                                                      need n = need::optional);
    // An inline table of string values, e.g. headers = { "X-A" = "1" }, in file order.
    std::optional<std::vector<std::pair<std::string, std::string>>> string_table(std::string_view key,
                                                                                 need n = need::optional);

    // Whether the key is present; declares it allowed.
    bool has(std::string_view key);
    // Declares a key allowed without reading it (read by someone else, or only in some modes).
    void allow(std::string_view key);
    // A key that is valid elsewhere but not here: reported with `message` when present, and not
    // listed among this table's allowed keys.
    void reject(std::string_view key, std::string_view message);
    // A problem with one key's value, at its position (at the table's when the key is absent).
    void fail(std::string_view key, std::string_view message);
    // A problem with a value below one of this table's keys (an array item), at the value's position;
    // `path` names the value from this table, e.g. "statuses[2]".
    void fail_at(const toml::node& value, std::string_view path, std::string_view message);
    // A problem with the table as a whole.
    void fail_table(std::string_view message);
    // One error per key no accessor asked for, listing the allowed keys in alphabetical order.
    void finish();

    // No error was recorded through this reader.
    bool ok() const { return errors_.size() == errors_at_start_; }
    const std::string& file() const { return file_; }
    const std::string& context() const { return context_; }
    const toml::table& source() const { return table_; }
    config_errors& errors() const { return errors_; }

private:
    const toml::node* lookup(std::string_view key, need n, key_spec spec);
    template <class Names>
    std::optional<std::string> choice_of(std::string_view key, const Names& allowed, need n);
    std::nullopt_t wrong_type(std::string_view key, const toml::node& node, std::string_view expected);
    void error_at(const toml::node& node, std::string_view key, std::string_view message);
    void add(const toml::source_region& where, std::string message);
    std::string prefix() const;

    const toml::table& table_;
    std::string file_;
    std::string context_;
    config_errors& errors_;
    std::size_t errors_at_start_;
    std::vector<std::string> allowed_;
    std::vector<std::string> rejected_;
};

// `file:line:column` of a node, with the file given when toml++ does not know it.
source_position position_of(const toml::node& node, const std::string& file);

}  // namespace faultline::config
