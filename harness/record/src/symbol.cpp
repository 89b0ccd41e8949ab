#include "faultline/record/symbol.hpp"

#include "faultline/core/byte_arena.hpp"

#include <array>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <ostream>
#include <stdexcept>
#include <vector>

namespace faultline::record {

namespace {

// id -> text. An id's text lives in its shard's arena as a 4-byte length and the bytes; the pointer
// to it sits in a segment of this directory. Segments are allocated once and never move, so a reader
// finds the text with two loads and no lock.
constexpr unsigned segment_bits = 16;
constexpr std::size_t segment_size = std::size_t{1} << segment_bits;
constexpr std::size_t segment_count = std::size_t{1} << (32 - segment_bits);

using segment = std::atomic<const char*>;
std::array<std::atomic<segment*>, segment_count> directory{};
std::mutex directory_mutex;  // taken only to allocate a segment
std::atomic<std::uint64_t> next_id{1};  // 64 bits, so running out of ids cannot wrap to ids in use

const char* text_of(std::uint32_t id) {
    const segment* s = directory[id >> segment_bits].load(std::memory_order_acquire);
    return s[id & (segment_size - 1)].load(std::memory_order_acquire);
}

std::string_view view_of(std::uint32_t id) {
    const char* text = text_of(id);
    std::uint32_t length = 0;
    std::memcpy(&length, text, sizeof length);
    return {text + sizeof length, length};
}

// Each thread takes ids from a block of its own: threads interning new strings at once (a journal
// read in two halves) then neither share the counter's cache line nor write neighbouring directory
// slots. Ids stay unique; at most a block per thread goes unused.
constexpr std::uint64_t id_block = 256;

std::uint32_t take_id() {
    thread_local std::uint64_t next = 0;
    thread_local std::uint64_t end = 0;
    if (next == end) {
        next = next_id.fetch_add(id_block, std::memory_order_relaxed);
        end = next + id_block;
    }
    // UINT32_MAX stays unused: it marks an absent packed_optional<symbol>.
    if (next >= UINT32_MAX) throw std::length_error{"symbol table: more than 2^32 - 2 distinct strings"};
    return static_cast<std::uint32_t>(next++);
}

void publish(std::uint32_t id, const char* text) {
    auto& slot = directory[id >> segment_bits];
    segment* s = slot.load(std::memory_order_acquire);
    if (s == nullptr) {
        const std::lock_guard lock{directory_mutex};
        s = slot.load(std::memory_order_relaxed);
        if (s == nullptr) {
            s = new segment[segment_size]();  // never freed: symbols are valid for the process lifetime
            slot.store(s, std::memory_order_release);
        }
    }
    s[id & (segment_size - 1)].store(text, std::memory_order_release);
}

// One shard: an open-addressing index of ids by text (linear probing, slots hold 32 bits of the hash
// to skip most text comparisons) and the arena that holds the texts.
class shard {
public:
    std::uint32_t intern(std::string_view text, std::size_t hash) {
        const std::lock_guard lock{mutex_};
        const auto h = static_cast<std::uint32_t>(hash);
        if ((used_ + 1) * 10 > slots_.size() * 7) grow();
        const std::size_t mask = slots_.size() - 1;
        std::size_t i = h & mask;
        for (; slots_[i].id != 0; i = (i + 1) & mask) {
            if (slots_[i].hash == h && view_of(slots_[i].id) == text) return slots_[i].id;
        }
        const std::uint32_t id = take_id();
        publish(id, store(text));
        slots_[i] = {h, id};
        ++used_;
        return id;
    }

    symbol_table_stats stats() {
        const std::lock_guard lock{mutex_};
        return {used_, texts_.reserved() + slots_.size() * sizeof(slot)};
    }

private:
    struct slot {
        std::uint32_t hash = 0;
        std::uint32_t id = 0;  // 0: empty
    };

    void grow() {
        std::vector<slot> bigger(std::max<std::size_t>(slots_.size() * 2, 64));
        const std::size_t mask = bigger.size() - 1;
        for (const slot& s : slots_) {
            if (s.id == 0) continue;
            std::size_t i = s.hash & mask;
            while (bigger[i].id != 0) i = (i + 1) & mask;
            bigger[i] = s;
        }
        slots_ = std::move(bigger);
    }

    // Copies the text into the arena behind its length; the bytes stay put for the process lifetime.
    const char* store(std::string_view text) {
        const std::uint32_t length = static_cast<std::uint32_t>(text.size());
        if (text.size() != length) throw std::length_error{"symbol table: a string of 4 GiB or more"};
        char* out = texts_.allocate(sizeof length + text.size());
        std::memcpy(out, &length, sizeof length);
        std::memcpy(out + sizeof length, text.data(), text.size());
        return out;
    }

    std::mutex mutex_;
    std::vector<slot> slots_;
    std::size_t used_ = 0;
    byte_arena texts_;
};

constexpr std::size_t shard_count = 16;

// Leaked on purpose: symbols in static objects may be read during static destruction.
std::array<shard, shard_count>& shards() {
    static auto* all = new std::array<shard, shard_count>;
    return *all;
}

// Each thread remembers the strings it interned last, one per slot by hash: a server interns the same
// method, target and rule names on every request, and a hit takes no shard lock (at -c64 two workers
// took the same shard's lock several times a request).
struct recent_symbol {
    std::size_t hash = 0;
    std::uint32_t id = 0;  // 0: empty slot
};
constexpr std::size_t recent_slots = 256;

}  // namespace

symbol::symbol(std::string_view text) {
    if (text.empty()) return;
    const std::size_t hash = std::hash<std::string_view>{}(text);
    thread_local std::array<recent_symbol, recent_slots> recent{};
    recent_symbol& seen = recent[hash % recent_slots];
    if (seen.id != 0 && seen.hash == hash && view_of(seen.id) == text) {
        id_ = seen.id;
        return;
    }
    // The shard comes from the hash's top bits, the slot from its low bits.
    id_ = shards()[(hash >> 60) % shard_count].intern(text, hash);
    seen = {hash, id_};
}

std::string_view symbol::view() const noexcept { return id_ == 0 ? std::string_view{} : view_of(id_); }

std::ostream& operator<<(std::ostream& out, symbol s) { return out << s.view(); }

symbol_table_stats symbol_stats() {
    symbol_table_stats total;
    for (shard& s : shards()) {
        const auto one = s.stats();
        total.symbols += one.symbols;
        total.bytes += one.bytes;
    }
    std::size_t segments = 0;
    for (const auto& s : directory) if (s.load(std::memory_order_acquire) != nullptr) ++segments;
    total.bytes += segments * segment_size * sizeof(segment);
    return total;
}

}  // namespace faultline::record
