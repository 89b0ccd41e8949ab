// Journal JSON Lines into read_jsonl(std::istream&, name), the reader behind `faultline check`: every
// bad line must be reported with its number, never crash or throw.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "faultline/record/journal_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::istringstream in{std::string{reinterpret_cast<const char*>(data), size}};
    (void)faultline::record::read_jsonl(in, "fuzz.jsonl");
    return 0;
}
