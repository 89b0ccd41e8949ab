// An enum's names, listed once: one table of (value, name) pairs that both directions read, where
// a switch for to_string and a list of values for from_string were two lists to keep in step. The
// table lists the values in order from 0 with none missing (checked at compile time), so to_string
// is an index; keep it beside the enum, so a new value meets its table.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace faultline {

template <class Enum>
struct enum_name {
    Enum value;
    std::string_view name;
};

template <class Enum, std::size_t N>
class enum_names {
public:
    constexpr explicit enum_names(const std::array<enum_name<Enum>, N>& names) : names_(names) {
        for (std::size_t i = 0; i < N; ++i) {
            // Not a constant expression, so a table out of order fails to compile where it is defined.
            if (static_cast<std::size_t>(names_[i].value) != i) throw "enum_names: list the values in order from 0";
        }
    }

    constexpr std::string_view operator()(Enum value) const {
        const auto i = static_cast<std::size_t>(value);
        return i < N ? names_[i].name : std::string_view{"unknown"};
    }
    constexpr std::optional<Enum> from(std::string_view name) const {
        for (const enum_name<Enum>& n : names_) {
            if (n.name == name) return n.value;
        }
        return std::nullopt;
    }
    // Every value, in order.
    constexpr std::array<Enum, N> values() const {
        std::array<Enum, N> out{};
        for (std::size_t i = 0; i < N; ++i) out[i] = names_[i].value;
        return out;
    }

private:
    std::array<enum_name<Enum>, N> names_;
};

}  // namespace faultline
