// An interned string: the compact form of the strings records repeat — methods, targets, rule and
// fault names, operation identities (shared by every attempt of an operation), header values. A
// symbol is a 4-byte id into one process-wide, append-only intern table, so a record holding eight of
// them is a plain value that copies as cheaply as eight integers, and equal strings are equal ids.
//
// The table owns the bytes of every string ever interned, for the lifetime of the process: nothing
// is freed, which is what lets symbols be copied, stored and compared with no owner to outlive. The
// price: a process that meets distinct strings without end (a long `serve` across control-API
// resets, a fuzzer) keeps each, ~25 bytes plus its text.
// Interning is thread-safe (the table is sharded by hash, one lock a shard); reading a symbol's text
// takes no lock. Ids depend on the order strings were first interned, which varies between runs, so
// ids are never written out and order symbols only by their text (`<=>`).
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

#include "faultline/record/packed_optional.hpp"

namespace faultline::record {

class symbol {
public:
    // The empty string (id 0, interned without touching the table).
    constexpr symbol() noexcept = default;
    // Interns `text` (a copy of its bytes, kept for the process lifetime). Implicit, like the
    // conversion back to std::string_view, so a symbol field reads and assigns as a string would.
    symbol(std::string_view text);
    symbol(const std::string& text) : symbol(std::string_view{text}) {}
    symbol(const char* text) : symbol(std::string_view{text}) {}

    std::string_view view() const noexcept;
    operator std::string_view() const noexcept { return view(); }
    std::string str() const { return std::string{view()}; }
    bool empty() const noexcept { return id_ == 0; }
    std::size_t size() const noexcept { return view().size(); }
    // Distinct for distinct strings within this process; a cheap hash key.
    std::uint32_t id() const noexcept { return id_; }

    friend bool operator==(symbol a, symbol b) noexcept { return a.id_ == b.id_; }
    friend bool operator==(symbol a, std::string_view b) noexcept { return a.view() == b; }
    friend bool operator==(symbol a, const std::string& b) noexcept { return a.view() == b; }
    friend bool operator==(symbol a, const char* b) noexcept { return a.view() == b; }
    friend std::strong_ordering operator<=>(symbol a, symbol b) noexcept { return a.view() <=> b.view(); }
    friend std::strong_ordering operator<=>(symbol a, std::string_view b) noexcept { return a.view() <=> b; }

    // Joined with text as the strings would be (evidence and report lines are built this way).
    friend std::string operator+(std::string lhs, symbol rhs) { return lhs.append(rhs.view()); }
    friend std::string operator+(const char* lhs, symbol rhs) { return std::string{lhs}.append(rhs.view()); }
    friend std::string operator+(symbol lhs, std::string_view rhs) { return lhs.str().append(rhs); }

private:
    friend struct packed_absence<symbol>;
    std::uint32_t id_ = 0;
};

// An absent packed_optional<symbol> holds the one id the table never gives out (ids come from a
// counter that throws before reaching it).
template <>
struct packed_absence<symbol> {
    static constexpr symbol value() noexcept {
        symbol s;
        s.id_ = 0xFFFF'FFFF;
        return s;
    }
    static constexpr bool reserved(symbol s) noexcept { return s.id_ == 0xFFFF'FFFF; }
};

std::ostream& operator<<(std::ostream& out, symbol s);

// How many distinct non-empty strings the table holds, and the bytes it has allocated for them (text,
// index and id slots): for benchmarks and tests.
struct symbol_table_stats {
    std::size_t symbols = 0;
    std::size_t bytes = 0;
};
symbol_table_stats symbol_stats();

}  // namespace faultline::record

template <>
struct std::hash<faultline::record::symbol> {
    std::size_t operator()(faultline::record::symbol s) const noexcept { return s.id(); }
};
