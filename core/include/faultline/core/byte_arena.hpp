// Bytes in blocks that never move and are freed together: the home of many small, long-lived byte
// strings (the intern table's texts, the idempotency store's responses), where a heap allocation
// each would cost its allocator header and a 32-byte std::string to own it. Not thread-safe: its
// owner locks.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace faultline {

class byte_arena {
public:
    explicit byte_arena(std::size_t block_size = 64 * 1024) : block_size_{block_size} {}

    // `size` uninitialised bytes that stay where they are until clear() or destruction. A request
    // larger than a block gets a block of its own.
    char* allocate(std::size_t size);
    // Bytes taken from the system so far (whole blocks).
    std::size_t reserved() const { return reserved_; }
    // Frees every block.
    void clear();

private:
    std::size_t block_size_;
    std::vector<std::unique_ptr<char[]>> blocks_;
    char* next_ = nullptr;
    std::size_t left_ = 0;
    std::size_t reserved_ = 0;
};

}  // namespace faultline
