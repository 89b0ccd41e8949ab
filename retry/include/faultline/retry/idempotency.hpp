// Idempotency keys: one key per operation, drawn as a UUIDv4 from the injected random source and
// reused on every attempt, so a server that deduplicates on the key (IETF
// draft-ietf-httpapi-idempotency-key-header, Stripe) applies a non-idempotent request once however
// many times it arrives. Keys are fixed-size values (no heap).
//
// Header forms (`key_format`):
//   quoted (default)  Idempotency-Key: "8e03978e-40d5-43e8-bc93-6894a57f9324"
//                     the IETF draft defines the field as a Structured Field sf-string, i.e. quoted
//   bare              Idempotency-Key: 8e03978e-40d5-43e8-bc93-6894a57f9324   (Stripe's form)
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "faultline/core/random.hpp"

namespace faultline::retry {

enum class key_format { quoted, bare };

std::string_view to_string(key_format format);

// How the retry loop handles keys.
struct idempotency_options {
    bool auto_add{true};  // give every unsafe (non-idempotent, unkeyed) request a key
    key_format format{key_format::quoted};

    idempotency_options& with_auto_add(bool on) { auto_add = on; return *this; }
    idempotency_options& with_format(key_format f) { format = f; return *this; }
};

// A UUID in its 36-character lowercase textual form (8-4-4-4-12 hex digits).
class idempotency_key {
public:
    static constexpr std::size_t size = 36;

    // A random (version 4, RFC 9562 variant) UUID: 122 bits from two draws of `random`.
    static idempotency_key generate(random_source& random);
    // Accepts any 36-character UUID text (hex digits in either case, dashes at 8, 13, 18, 23).
    static std::optional<idempotency_key> parse(std::string_view text);

    std::string_view view() const { return {chars_.data(), chars_.size()}; }

    friend bool operator==(const idempotency_key&, const idempotency_key&) = default;

private:
    idempotency_key() = default;
    std::array<char, size> chars_{};
};

// True if `text` is a UUIDv4 in canonical lowercase form (version nibble 4, variant 8/9/a/b).
bool is_uuid_v4(std::string_view text);

// The key an Idempotency-Key header value carries, in either form: surrounding whitespace trimmed,
// and an sf-string's quotes dropped and its two escapes (\" and \\) undone. The one reading of the
// header: the server groups attempts by it, and clients name operations by it.
std::string idempotency_key_value(std::string_view header_value);

// The Idempotency-Key header value for `key` in `format`: a small fixed buffer (no heap).
class key_header_value {
public:
    static constexpr std::size_t capacity = idempotency_key::size + 2;

    key_header_value() = default;
    key_header_value(const idempotency_key& key, key_format format);

    std::string_view view() const { return {chars_.data(), length_}; }
    bool empty() const { return length_ == 0; }

private:
    std::array<char, capacity> chars_{};
    std::size_t length_ = 0;
};

}  // namespace faultline::retry
