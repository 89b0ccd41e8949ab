// An optional that spends no flag on absence: one value of T is reserved to mean "absent"
// (`packed_absence<T>`: the lowest signed or the highest unsigned value, or a symbol id no string
// gets). std::optional<std::int64_t> takes 16 bytes, this takes 8; a journal record holds nine
// optionals and is kept by the hundred thousand, so the flags and their padding were a third of it.
// The interface is std::optional's, so fields read and assign as they did.
//
// The reserved value cannot be held: readers of outside data (the journal's JSON) check
// `packed_absence<T>::reserved(v)` and reject it as out of range rather than read it as absent.
#pragma once

#include <concepts>
#include <limits>
#include <optional>
#include <ostream>
#include <type_traits>
#include <utility>

namespace faultline::record {

// The reserved value of T. Specialised for integers here and for `symbol` in symbol.hpp.
template <class T>
struct packed_absence;

template <std::integral T>
struct packed_absence<T> {
    static constexpr T value() noexcept {
        return std::numeric_limits<T>::is_signed ? std::numeric_limits<T>::min() : std::numeric_limits<T>::max();
    }
    static constexpr bool reserved(T v) noexcept { return v == value(); }
};

template <class T>
inline constexpr bool is_std_optional = false;
template <class T>
inline constexpr bool is_std_optional<std::optional<T>> = true;

template <class T>
class packed_optional {
public:
    using value_type = T;

    constexpr packed_optional() noexcept = default;
    constexpr packed_optional(std::nullopt_t) noexcept {}
    // From anything T is made from, implicit when std::optional's would be: `record.deadline_ms =
    // 1500;`, `record.instance = "a";`, converting as std::optional does (without its warnings, as
    // its header is a system one). A reserved value stays absent.
    template <class U = T>
        requires(!std::same_as<std::remove_cvref_t<U>, packed_optional> &&
                 !std::same_as<std::remove_cvref_t<U>, std::nullopt_t> &&
                 !is_std_optional<std::remove_cvref_t<U>> && std::constructible_from<T, U &&>)
    constexpr explicit(!std::convertible_to<U &&, T>) packed_optional(U&& v) : value_(static_cast<T>(std::forward<U>(v))) {}
    // From a std::optional of anything T is made from (a header value, std::optional<std::string>,
    // into a packed_optional<symbol>).
    template <class U>
        requires std::constructible_from<T, const U&>
    constexpr packed_optional(const std::optional<U>& v) : value_{v ? static_cast<T>(*v) : absent::value()} {}

    constexpr bool has_value() const noexcept { return !absent::reserved(value_); }
    constexpr explicit operator bool() const noexcept { return has_value(); }

    // As std::optional's: reading an absent value this way is the caller's bug (checked only in
    // value()).
    constexpr const T& operator*() const noexcept { return value_; }
    constexpr const T* operator->() const noexcept { return &value_; }
    constexpr const T& value() const {
        if (!has_value()) throw std::bad_optional_access{};
        return value_;
    }
    template <class U>
    constexpr T value_or(U&& fallback) const {
        return has_value() ? value_ : static_cast<T>(std::forward<U>(fallback));
    }
    constexpr void reset() noexcept { value_ = absent::value(); }

    constexpr operator std::optional<T>() const { return has_value() ? std::optional<T>{value_} : std::nullopt; }

    friend constexpr bool operator==(const packed_optional& a, const packed_optional& b) noexcept {
        return a.value_ == b.value_;
    }
    friend constexpr bool operator==(const packed_optional& a, std::nullopt_t) noexcept { return !a.has_value(); }
    friend constexpr bool operator==(const packed_optional& a, const std::optional<T>& b) {
        return std::optional<T>{a} == b;
    }
    // Against a plain value, as std::optional compares: absent equals no value.
    template <class U>
        requires(!std::same_as<U, packed_optional> && !std::same_as<U, std::nullopt_t> &&
                 !std::same_as<U, std::optional<T>>) &&
                requires(const T& t, const U& u) { t == u; }
    friend constexpr bool operator==(const packed_optional& a, const U& b) {
        return a.has_value() && *a == b;
    }

    friend std::ostream& operator<<(std::ostream& out, const packed_optional& v) {
        if (!v) return out << "(absent)";
        return out << *v;
    }

private:
    using absent = packed_absence<T>;
    T value_ = absent::value();
};

}  // namespace faultline::record
