// Private to the server: reading header fields of parsed messages — the connection's requests (what
// is journaled and matched), the relay's and the upstream's replies.
#pragma once

#include "faultline/faults/request.hpp"

#include <boost/beast/core/string.hpp>
#include <boost/beast/http/fields.hpp>

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace faultline::server::detail {

inline std::string_view to_std(boost::beast::string_view s) { return {s.data(), s.size()}; }

// The fault engine's view of a parsed request's headers; borrows `fields`, which must outlive it.
class fields_source final : public faults::header_source {
public:
    explicit fields_source(const boost::beast::http::fields& fields) : fields_{fields} {}
    std::optional<std::string_view> find(std::string_view name) const override {
        const auto it = fields_.find(boost::beast::string_view{name.data(), name.size()});
        if (it == fields_.end()) return std::nullopt;
        return to_std(it->value());
    }

private:
    const boost::beast::http::fields& fields_;
};

inline std::optional<std::string> header_value(const boost::beast::http::fields& fields, std::string_view name) {
    const auto it = fields.find(boost::beast::string_view{name.data(), name.size()});
    if (it == fields.end()) return std::nullopt;
    return std::string{to_std(it->value())};
}

// nullopt when absent or not exactly a decimal integer.
inline std::optional<std::int64_t> integer_header(const boost::beast::http::fields& fields, std::string_view name) {
    const auto it = fields.find(boost::beast::string_view{name.data(), name.size()});
    if (it == fields.end()) return std::nullopt;
    const std::string_view text = to_std(it->value());
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
    return value;
}

}  // namespace faultline::server::detail
