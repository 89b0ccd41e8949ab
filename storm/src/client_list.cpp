#include "faultline/storm/client_list.hpp"

#include <charconv>
#include <limits>

namespace faultline::storm {

namespace {

// A whole decimal number in 1..2^32-1, the whole of `text`.
bool parse_count(std::string_view text, std::uint32_t& out) {
    if (text.empty()) return false;
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end != text.data() + text.size()) return false;
    if (value > std::numeric_limits<std::uint32_t>::max()) return false;
    out = static_cast<std::uint32_t>(value);
    return true;
}

}  // namespace

std::variant<std::vector<std::uint32_t>, std::string> parse_client_list(std::string_view text) {
    std::vector<std::uint32_t> out;
    const std::string whole{text};
    if (text.empty()) return "the client list is empty";
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        const std::string_view item = text.substr(start, comma - start);
        start = comma + 1;
        const std::string shown{item};
        const std::size_t dots = item.find("..");
        if (dots == std::string_view::npos) {
            std::uint32_t n = 0;
            if (!parse_count(item, n)) return "'" + shown + "' in '" + whole + "' is not a client count";
            if (n == 0) return "a client count of 0 in '" + whole + "'";
            out.push_back(n);
        } else {
            const std::size_t colon = item.find(':', dots);
            std::uint32_t from = 0;
            std::uint32_t to = 0;
            std::uint32_t step = 1;
            const std::string_view to_text =
                item.substr(dots + 2, colon == std::string_view::npos ? std::string_view::npos : colon - dots - 2);
            if (!parse_count(item.substr(0, dots), from) || !parse_count(to_text, to) ||
                (colon != std::string_view::npos && !parse_count(item.substr(colon + 1), step)))
                return "'" + shown + "' is not a range FROM..TO[:STEP] of whole numbers";
            if (from == 0) return "the range '" + shown + "' starts at 0 clients";
            if (step == 0) return "the range '" + shown + "' has a step of 0";
            if (to < from) return "the range '" + shown + "' is inverted (" + std::to_string(from) + " > " +
                                  std::to_string(to) + ")";
            if ((to - from) / step + 1 > max_client_list)
                return "the range '" + shown + "' has more than " + std::to_string(max_client_list) + " points";
            for (std::uint64_t n = from; n <= to; n += step) out.push_back(static_cast<std::uint32_t>(n));
        }
        if (out.size() > max_client_list)
            return "the client list has more than " + std::to_string(max_client_list) + " points";
        if (comma == text.size()) break;
    }
    return out;
}

}  // namespace faultline::storm
