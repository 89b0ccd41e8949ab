// symbol: equal strings intern to equal ids, from any thread; the text comes back byte for byte;
// symbols compare with strings as the strings would.
#include "faultline/record/symbol.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace faultline::record {
namespace {

TEST(symbol, equal_strings_intern_to_the_same_id) {
    const symbol a{"POST"};
    const symbol b{std::string{"PO"} + "ST"};
    EXPECT_EQ(a.id(), b.id());
    EXPECT_EQ(a, b);
    EXPECT_NE(symbol{"GET"}, a);
    EXPECT_NE(symbol{"post"}, a);
}

TEST(symbol, the_empty_string_is_the_default_symbol) {
    EXPECT_EQ(symbol{}.id(), 0U);
    EXPECT_EQ(symbol{""}.id(), 0U);
    EXPECT_TRUE(symbol{std::string{}}.empty());
    EXPECT_EQ(symbol{}.view(), "");
    EXPECT_FALSE(symbol{"x"}.empty());
}

TEST(symbol, round_trips_any_bytes_through_string_view) {
    constexpr char raw[] = "/kv/\xff\x00\x01\"quoted\"\n";
    const std::string bytes{raw, sizeof raw - 1};  // 16 bytes, a NUL and invalid UTF-8 among them
    const symbol s{bytes};
    const std::string_view back = s;
    EXPECT_EQ(back, bytes);
    EXPECT_EQ(back.size(), 16U);
    EXPECT_EQ(s.str(), bytes);
    const std::string long_text(100'000, 'k');  // longer than one arena block
    EXPECT_EQ(symbol{long_text}.view(), long_text);
}

TEST(symbol, compares_and_orders_like_its_text) {
    const symbol b{"b"};
    EXPECT_TRUE(b == "b");
    EXPECT_TRUE("b" == b);
    EXPECT_TRUE(b == std::string{"b"});
    EXPECT_TRUE(b == std::string_view{"b"});
    EXPECT_TRUE(b != "c");
    EXPECT_LT(symbol{"a"}, b);
    EXPECT_LT(b, symbol{"ba"});
    // Ids follow first-interning order, the order does not: "z" interned before "y" still sorts after.
    const symbol z{"order-test-z"};
    const symbol y{"order-test-y"};
    EXPECT_LT(y, z);
    std::ostringstream out;
    out << b;
    EXPECT_EQ(out.str(), "b");
}

TEST(symbol, threads_interning_the_same_strings_get_the_same_ids) {
    constexpr std::size_t threads = 4;
    constexpr std::size_t strings = 20'000;
    std::vector<std::vector<std::uint32_t>> ids(threads, std::vector<std::uint32_t>(strings));
    std::vector<std::thread> workers;
    for (std::size_t t = 0; t < threads; ++t) {
        workers.emplace_back([t, &ids] {
            // Each thread walks the strings from a different start, so first internings race.
            for (std::size_t k = 0; k < strings; ++k) {
                const std::size_t i = (k + t * strings / threads) % strings;
                const symbol s{"concurrent-" + std::to_string(i)};
                ids[t][i] = s.id();
            }
        });
    }
    for (auto& w : workers) w.join();
    for (std::size_t t = 1; t < threads; ++t) EXPECT_EQ(ids[t], ids[0]);
    EXPECT_EQ(std::set<std::uint32_t>(ids[0].begin(), ids[0].end()).size(), strings);
    for (std::size_t i = 0; i < strings; ++i) {
        ASSERT_EQ(symbol{"concurrent-" + std::to_string(i)}.view(), "concurrent-" + std::to_string(i));
    }
    const auto stats = symbol_stats();
    EXPECT_GE(stats.symbols, strings);
    EXPECT_GT(stats.bytes, 0U);
}

TEST(symbol, hashes_by_id) {
    EXPECT_EQ(std::hash<symbol>{}(symbol{"h"}), symbol{"h"}.id());
}

}  // namespace
}  // namespace faultline::record
