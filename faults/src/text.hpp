// Small text helpers shared by the faults sources (private to the module).
#pragma once

#include <string>
#include <string_view>

namespace faultline::faults::detail {

// ASCII case-insensitive equality, as HTTP field names compare.
bool iequals(std::string_view a, std::string_view b);

}  // namespace faultline::faults::detail
