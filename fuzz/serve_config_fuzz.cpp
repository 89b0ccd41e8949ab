// A `faultline serve --rules` file into parse_serve_config: [[fault]] rules and the [server] table.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "faultline/server/serve_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text{reinterpret_cast<const char*>(data), size};
    (void)faultline::server::parse_serve_config(text, "rules.toml");
    return 0;
}
