#include "faultline/retry/idempotency.hpp"

#include <algorithm>

namespace faultline::retry {

namespace {

constexpr std::string_view hex_digits = "0123456789abcdef";

bool is_dash_position(std::size_t i) { return i == 8 || i == 13 || i == 18 || i == 23; }

bool is_hex(char c, bool lowercase_only) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (!lowercase_only && c >= 'A' && c <= 'F');
}

bool uuid_shaped(std::string_view text, bool lowercase_only) {
    if (text.size() != idempotency_key::size) return false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (is_dash_position(i) ? text[i] != '-' : !is_hex(text[i], lowercase_only)) return false;
    }
    return true;
}

}  // namespace

std::string_view to_string(key_format format) {
    switch (format) {
        case key_format::quoted: return "quoted";
        case key_format::bare: return "bare";
    }
    return "unknown";
}

idempotency_key idempotency_key::generate(random_source& random) {
    std::array<unsigned char, 16> bytes{};
    const std::uint64_t words[2] = {random.next(), random.next()};
    for (std::size_t i = 0; i < bytes.size(); ++i)
        bytes[i] = static_cast<unsigned char>(words[i / 8] >> (8 * (i % 8)));
    bytes[6] = static_cast<unsigned char>((bytes[6] & 0x0fU) | 0x40U);  // version 4
    bytes[8] = static_cast<unsigned char>((bytes[8] & 0x3fU) | 0x80U);  // variant 10xx
    idempotency_key key;
    std::size_t out = 0;
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        if (is_dash_position(out)) key.chars_[out++] = '-';
        key.chars_[out++] = hex_digits[bytes[i] >> 4];
        key.chars_[out++] = hex_digits[bytes[i] & 0x0fU];
    }
    return key;
}

std::optional<idempotency_key> idempotency_key::parse(std::string_view text) {
    if (!uuid_shaped(text, false)) return std::nullopt;
    idempotency_key key;
    std::copy(text.begin(), text.end(), key.chars_.begin());
    return key;
}

bool is_uuid_v4(std::string_view text) {
    if (!uuid_shaped(text, true)) return false;
    const char variant = text[19];
    return text[14] == '4' && (variant == '8' || variant == '9' || variant == 'a' || variant == 'b');
}

key_header_value::key_header_value(const idempotency_key& key, key_format format) {
    const std::string_view k = key.view();
    if (format == key_format::quoted) {
        chars_[0] = '"';
        std::copy(k.begin(), k.end(), chars_.begin() + 1);
        chars_[k.size() + 1] = '"';
        length_ = k.size() + 2;
    } else {
        std::copy(k.begin(), k.end(), chars_.begin());
        length_ = k.size();
    }
}

std::string idempotency_key_value(std::string_view header_value) {
    const auto first = header_value.find_first_not_of(" \t");
    if (first == std::string_view::npos) return {};
    const auto v = header_value.substr(first, header_value.find_last_not_of(" \t") - first + 1);
    if (v.size() < 2 || v.front() != '"' || v.back() != '"') return std::string{v};
    const auto inner = v.substr(1, v.size() - 2);
    std::string out;
    out.reserve(inner.size());
    for (std::size_t i = 0; i < inner.size(); ++i) {
        if (inner[i] == '\\' && i + 1 < inner.size()) ++i;
        out.push_back(inner[i]);
    }
    return out;
}

}  // namespace faultline::retry
