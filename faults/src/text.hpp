// Small text helpers shared by the faults sources (private to the module).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace faultline::faults::detail {

// ASCII case-insensitive equality, as HTTP field names compare.
bool iequals(std::string_view a, std::string_view b);

// "a, b, c" from a list of names, each quoted: "\"a\", \"b\"".
std::string quoted_list(const std::vector<std::string>& names);

}  // namespace faultline::faults::detail
