// Errors in user-written configuration (scenario TOML, fault rules, CLI values), reported as
// `file:line:column: message` so an editor can jump to them. Loaders collect every error they find
// rather than stopping at the first, and the CLI prints them all and exits with code 2.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace faultline {

struct source_position {
    std::string file;  // may be empty (e.g. a rule posted to the control API)
    std::uint32_t line = 0;    // 1-based; 0 when unknown
    std::uint32_t column = 0;  // 1-based; 0 when unknown
};

struct config_error {
    source_position where;
    std::string message;  // names the offending key and, where it helps, the allowed ones

    // "file:line:column: message", dropping the parts that are unknown.
    std::string to_string() const;
};

using config_errors = std::vector<config_error>;

}  // namespace faultline
