#pragma once

#include <cstddef>
#include <string_view>

namespace faultline::core {

// Characters to insert, delete or change to turn `a` into `b` (Levenshtein). Used where a name the
// user typed is answered with the nearest one faultline knows ("did you mean …").
std::size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace faultline::core
