#include "faultline/config/document.hpp"

#include <cstdint>
#include <fstream>

namespace faultline::config {
namespace {

bool is_bare_key_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

// One pass over the text as TOML's lexer sees it (comments and the four string forms skipped) that
// finds the first place past a bound. It does not validate: whatever it lets through, toml++ judges.
// A dotted run is segments (bare words or quoted strings) joined by dots; a value such as 1.5 or a
// time's fraction is a run of two parts, far below the bound.
class bounds_scanner {
public:
    explicit bounds_scanner(std::string_view text) : text_(text) {}

    std::optional<config_error> first_excess(const std::string& file) {
        while (at_ < text_.size()) {
            const char c = text_[at_];
            if (c == '#') {
                skip_to_line_end();
            } else if (c == '"' || c == '\'') {
                begin_segment();
                skip_string(c);
                end_segment();
            } else if (is_bare_key_char(c)) {
                begin_segment();
                while (at_ < text_.size() && is_bare_key_char(text_[at_])) advance();
                end_segment();
            } else if (c == '.') {
                if (after_segment_) {
                    after_segment_ = false;
                    expecting_segment_ = true;
                    if (++dots_ + 1 > max_dotted_key_parts) {
                        return excess(file, run_line_, run_column_,
                                      "a dotted key of more than " + std::to_string(max_dotted_key_parts) +
                                          " parts; faultline reads keys of at most that many");
                    }
                }
                advance();
            } else if (c == ' ' || c == '\t') {
                advance();
            } else {
                end_run();
                if (c == '[' || c == '{') {
                    if (++depth_ > max_nesting_depth) {
                        return excess(file, line_, column_,
                                      "arrays or tables nested more than " + std::to_string(max_nesting_depth) +
                                          " deep; faultline reads at most that depth");
                    }
                } else if ((c == ']' || c == '}') && depth_ > 0) {
                    --depth_;
                }
                advance();
            }
        }
        return std::nullopt;
    }

private:
    static config_error excess(const std::string& file, std::uint32_t line, std::uint32_t column, std::string message) {
        return {{file, line, column}, std::move(message)};
    }

    void advance() {
        if (text_[at_] == '\n') {
            ++line_;
            column_ = 1;
        } else {
            ++column_;
        }
        ++at_;
    }
    bool starts_with(std::string_view s) const { return text_.substr(at_, s.size()) == s; }
    void skip_to_line_end() {
        while (at_ < text_.size() && text_[at_] != '\n') advance();
    }

    // A segment that follows another without a dot between them starts a new run.
    void begin_segment() {
        if (!expecting_segment_) {
            dots_ = 0;
            run_line_ = line_;
            run_column_ = column_;
        }
    }
    void end_segment() {
        after_segment_ = true;
        expecting_segment_ = false;
    }
    void end_run() {
        dots_ = 0;
        after_segment_ = false;
        expecting_segment_ = false;
    }

    // From the opening quote past the closing one (or to the end of an unterminated string).
    void skip_string(char quote) {
        const std::string_view triple = quote == '"' ? std::string_view{"\"\"\""} : std::string_view{"'''"};
        const bool multiline = starts_with(triple);
        for (std::size_t i = 0; i < (multiline ? 3u : 1u); ++i) advance();
        while (at_ < text_.size()) {
            const char c = text_[at_];
            if (quote == '"' && c == '\\') {
                advance();
                if (at_ < text_.size()) advance();
            } else if (multiline && starts_with(triple)) {
                for (int i = 0; i < 3; ++i) advance();
                // up to two quotes more belong to the content: """a"""" ends in a quote
                for (int i = 0; i < 2 && at_ < text_.size() && text_[at_] == quote; ++i) advance();
                return;
            } else if (!multiline && (c == quote || c == '\n')) {
                if (c == quote) advance();
                return;
            } else {
                advance();
            }
        }
    }

    std::string_view text_;
    std::size_t at_ = 0;
    std::uint32_t line_ = 1;
    std::uint32_t column_ = 1;
    std::size_t depth_ = 0;
    std::size_t dots_ = 0;
    std::uint32_t run_line_ = 1;
    std::uint32_t run_column_ = 1;
    bool after_segment_ = false;      // the last thing seen was a segment (a dot may follow)
    bool expecting_segment_ = false;  // the last thing seen was a dot after a segment
};

std::string too_large(std::size_t bytes) {
    return "the text is " + std::to_string(bytes) + " bytes; faultline reads TOML of at most " +
           std::to_string(max_document_bytes) + " bytes (1 MiB)";
}

}  // namespace

document parse_document(std::string_view text, const std::string& file) {
    document out;
    if (text.size() > max_document_bytes) {
        out.errors.push_back({{file, 0, 0}, too_large(text.size())});
        return out;
    }
    if (auto excess = bounds_scanner{text}.first_excess(file)) {
        out.errors.push_back(std::move(*excess));
        return out;
    }
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
    // Read one byte past the bound, so a larger file (or an endless stream) is never held whole.
    std::string text(max_document_bytes + 1, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_document_bytes) {
        document out;
        out.errors.push_back({{path, 0, 0}, "the " + std::string{what} + " is larger than " +
                                                 std::to_string(max_document_bytes) +
                                                 " bytes (1 MiB), the most faultline reads"});
        return out;
    }
    return parse_document(text, path);
}

}  // namespace faultline::config
