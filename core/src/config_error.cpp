#include "faultline/core/config_error.hpp"

namespace faultline {

std::string config_error::to_string() const {
    std::string out;
    if (!where.file.empty()) out += where.file + ":";
    if (where.line != 0) {
        out += std::to_string(where.line) + ":";
        if (where.column != 0) out += std::to_string(where.column) + ":";
    }
    if (!out.empty()) out += " ";
    return out + message;
}

}  // namespace faultline
