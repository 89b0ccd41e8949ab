// packed_optional: std::optional's behaviour in half the room, with one value of the type reserved for
// "absent" — and that value rejected when a journal line carries it, rather than read as absent.
#include "faultline/record/packed_optional.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <sstream>
#include <string>

#include "faultline/record/journal_json.hpp"
#include "faultline/record/symbol.hpp"
#include "sample_records.hpp"

namespace faultline::record {
namespace {

TEST(packed_optional, takes_the_room_of_its_value_alone) {
    static_assert(sizeof(packed_optional<std::int64_t>) == 8);
    static_assert(sizeof(packed_optional<std::uint32_t>) == 4);
    static_assert(sizeof(packed_optional<symbol>) == 4);
    SUCCEED();
}

TEST(packed_optional, reads_and_assigns_as_std_optional_does) {
    packed_optional<std::int64_t> v;
    EXPECT_FALSE(v.has_value());
    EXPECT_EQ(v, std::nullopt);
    EXPECT_EQ(v.value_or(7), 7);
    EXPECT_THROW((void)v.value(), std::bad_optional_access);
    v = 1500;
    ASSERT_TRUE(v);
    EXPECT_EQ(*v, 1500);
    EXPECT_EQ(v, 1500);
    EXPECT_NE(v, 1501);
    EXPECT_EQ(v, std::optional<std::int64_t>{1500});
    EXPECT_EQ(std::optional<std::int64_t>{v}, 1500);
    v = std::optional<std::int64_t>{};
    EXPECT_FALSE(v);
    EXPECT_EQ(v, std::optional<std::int64_t>{});
    v = -1;  // negative values are values
    EXPECT_EQ(v.value(), -1);
    v.reset();
    EXPECT_EQ(std::optional<std::int64_t>{v}, std::nullopt);
}

TEST(packed_optional, the_reserved_value_is_absence) {
    packed_optional<std::int64_t> v = std::numeric_limits<std::int64_t>::min();
    EXPECT_FALSE(v);
    packed_optional<std::uint32_t> u = std::numeric_limits<std::uint32_t>::max();
    EXPECT_FALSE(u);
    u = std::numeric_limits<std::uint32_t>::max() - 1;
    EXPECT_TRUE(u);
}

TEST(packed_optional, an_absent_symbol_differs_from_the_empty_one) {
    packed_optional<symbol> absent;
    packed_optional<symbol> empty = symbol{};
    EXPECT_FALSE(absent);
    ASSERT_TRUE(empty);
    EXPECT_EQ(*empty, "");
    EXPECT_NE(absent, empty);
    empty = std::optional<std::string>{"a"};
    EXPECT_EQ(empty, "a");
    std::ostringstream out;
    out << absent << ' ' << empty;
    EXPECT_EQ(out.str(), "(absent) a");
}

TEST(packed_optional, a_journal_line_with_the_reserved_value_is_out_of_range) {
    const std::string good = to_jsonl_line(testing::sample(5));  // sample 5 carries deadline_ms
    const std::string from = "\"deadline_ms\":";
    std::string reserved = good;
    const std::size_t at = reserved.find(from) + from.size();
    reserved.replace(at, reserved.find(',', at) - at, std::to_string(std::numeric_limits<std::int64_t>::min()));
    std::string spaced = reserved;  // not the writer's form: read by Boost.JSON's path
    spaced.replace(spaced.find(from), from.size(), from + " ");
    std::istringstream in{reserved + spaced};
    const auto read = read_jsonl(in, "j.jsonl");
    EXPECT_TRUE(read.records.empty());
    ASSERT_EQ(read.errors.size(), 2U);
    EXPECT_EQ(read.errors[0].to_string(), R"(j.jsonl:1: bad journal record: field "deadline_ms": expected an integer in range)");
    EXPECT_EQ(read.errors[1].to_string(), R"(j.jsonl:2: bad journal record: field "deadline_ms": expected an integer in range)");
}

}  // namespace
}  // namespace faultline::record
