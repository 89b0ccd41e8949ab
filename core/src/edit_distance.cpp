#include "faultline/core/edit_distance.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace faultline::core {

std::size_t edit_distance(std::string_view a, std::string_view b) {
    // Two rows of the table are enough: each row needs only the one above it.
    std::vector<std::size_t> previous(b.size() + 1), current(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        current[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
        }
        std::swap(previous, current);
    }
    return previous[b.size()];
}

}  // namespace faultline::core
