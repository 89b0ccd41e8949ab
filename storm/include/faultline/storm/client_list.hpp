// The client-count lists of `faultline simulate --clients`: "100", "10,20,50", "10..190:10" (from,
// to inclusive, step), or a comma list mixing both ("1..5:1,10,100"). Parsed strictly: anything
// else, an empty or inverted range, a step of 0 or a count of 0 is an error with a message.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace faultline::storm {

// Lists longer than this are refused (a sweep point each).
inline constexpr std::size_t max_client_list = 10'000;

// The counts in order, or an error message.
std::variant<std::vector<std::uint32_t>, std::string> parse_client_list(std::string_view text);

}  // namespace faultline::storm
