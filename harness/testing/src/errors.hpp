// The one way faultline::testing turns config errors into an exception a test shows.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "faultline/core/config_error.hpp"

namespace faultline::testing::detail {

[[noreturn]] inline void throw_config_errors(std::string_view what, const config_errors& errors) {
    std::string message{what};
    for (const config_error& e : errors) message += "\n  " + e.to_string();
    throw std::invalid_argument(message);
}

}  // namespace faultline::testing::detail
