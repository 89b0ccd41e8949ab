// Loading a TOML document: the one place a `toml::parse_error` becomes a `config_error`
// ("file:line:column: TOML syntax error: …"), for scenario files, rules files, `serve` configs and
// rules posted to the control API alike.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <toml++/toml.h>

#include "faultline/core/config_error.hpp"

namespace faultline::config {

struct document {
    std::optional<toml::table> table;  // empty when the text could not be read or parsed
    config_errors errors;              // one error when `table` is empty, none otherwise
};

// Parses `text`; `file` names it in positions ("" for text that has no file, e.g. a request body).
document parse_document(std::string_view text, const std::string& file);

// Reads and parses the file at `path`; one that cannot be read is the error "cannot read the <what>".
document load_document(const std::string& path, std::string_view what = "file");

}  // namespace faultline::config
