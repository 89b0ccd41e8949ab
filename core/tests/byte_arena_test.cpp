// byte_arena: allocations stay put while more are made, fill a block before taking the next, and a
// request larger than a block gets its own.
#include "faultline/core/byte_arena.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string_view>
#include <vector>

namespace faultline {
namespace {

TEST(byte_arena, keeps_every_allocation_in_place_across_blocks) {
    byte_arena arena{64};
    std::vector<std::pair<char*, std::string_view>> stored;
    for (int i = 0; i < 100; ++i) {
        const std::string_view text = i % 2 == 0 ? "even-bytes" : "odd";
        char* at = arena.allocate(text.size());
        std::memcpy(at, text.data(), text.size());
        stored.emplace_back(at, text);
    }
    for (const auto& [at, text] : stored) EXPECT_EQ(std::string_view(at, text.size()), text);
    // 100 allocations of 10 and 3 bytes: 650 bytes, in blocks of 64 that each hold whole allocations.
    EXPECT_EQ(arena.reserved() % 64, 0U);
    EXPECT_LE(arena.reserved(), 64U * 12);
}

TEST(byte_arena, a_request_larger_than_a_block_gets_its_own) {
    byte_arena arena{16};
    char* small = arena.allocate(4);
    char* large = arena.allocate(100);
    EXPECT_EQ(arena.reserved(), 116U);
    std::memset(large, 'x', 100);
    std::memcpy(small, "abcd", 4);
    EXPECT_EQ(std::string_view(small, 4), "abcd");
    arena.clear();
    EXPECT_EQ(arena.reserved(), 0U);
}

}  // namespace
}  // namespace faultline
