// Loading a TOML document: the one place a `toml::parse_error` becomes a `config_error`
// ("file:line:column: TOML syntax error: …"), for scenario files, rules files, `serve` configs and
// rules posted to the control API alike. Text is bounded before toml++ sees it: its size, how deep
// arrays and inline tables nest and how many parts a dotted key has — a key of 40,000 parts nests
// 40,000 tables, which overflows the stack when they are built or destroyed.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <toml++/toml.h>

#include "faultline/core/config_error.hpp"

namespace faultline::config {

// The bounds every document is held to. Shipped files are a few KiB, keys have a handful of parts.
inline constexpr std::size_t max_document_bytes = std::size_t{1} << 20;
inline constexpr std::size_t max_dotted_key_parts = 32;
inline constexpr std::size_t max_nesting_depth = 32;  // arrays and inline tables, one in another

struct document {
    std::optional<toml::table> table;  // empty when the text could not be read or parsed
    config_errors errors;              // one error when `table` is empty, none otherwise
};

// Parses `text`; `file` names it in positions ("" for text that has no file, e.g. a request body).
// Text past a bound above is refused unparsed, with the position where it went past.
document parse_document(std::string_view text, const std::string& file);

// Reads and parses the file at `path`; one that cannot be read is the error "cannot read the <what>",
// one larger than max_document_bytes is refused before it is read whole.
document load_document(const std::string& path, std::string_view what = "file");

}  // namespace faultline::config
