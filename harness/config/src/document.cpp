#include "faultline/config/document.hpp"

#include <fstream>
#include <sstream>

namespace faultline::config {

document parse_document(std::string_view text, const std::string& file) {
    document out;
    try {
        out.table = toml::parse(text, std::string_view{file});
    } catch (const toml::parse_error& error) {
        const auto& begin = error.source().begin;
        out.errors.push_back({{file, begin.line, begin.column}, "TOML syntax error: " + std::string{error.description()}});
    }
    return out;
}

document load_document(const std::string& path, std::string_view what) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        document out;
        out.errors.push_back({{path, 0, 0}, "cannot read the " + std::string{what}});
        return out;
    }
    std::ostringstream text;
    text << in.rdbuf();
    return parse_document(text.str(), path);
}

}  // namespace faultline::config
