// Scenario text into the scenario loader (runner::parse_scenario): TOML syntax, every table's reader
// ([[fault]], [server], [client], [[expect]]) and their cross-checks. Nothing is run; a bad input
// must come back as config errors, never a crash, a hang or an escaping exception.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "faultline/runner/scenario.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text{reinterpret_cast<const char*>(data), size};
    (void)faultline::runner::parse_scenario(text, "fuzz.toml");
    return 0;
}
