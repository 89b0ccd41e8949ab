#include "faultline/faults/request.hpp"

#include <boost/beast/core/string.hpp>

namespace faultline::faults {

std::optional<std::string_view> header_list_source::find(std::string_view name) const {
    for (const auto& [key, value] : headers_) {
        if (boost::beast::iequals(key, name)) {
            return std::string_view{value};
        }
    }
    return std::nullopt;
}

}  // namespace faultline::faults
