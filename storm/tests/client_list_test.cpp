#include "faultline/storm/client_list.hpp"

#include <gtest/gtest.h>

namespace faultline::storm {
namespace {

std::vector<std::uint32_t> ok(std::string_view text) {
    auto r = parse_client_list(text);
    if (auto* e = std::get_if<std::string>(&r)) ADD_FAILURE() << text << ": " << *e;
    auto* v = std::get_if<std::vector<std::uint32_t>>(&r);
    return v ? *v : std::vector<std::uint32_t>{};
}

std::string error(std::string_view text) {
    auto r = parse_client_list(text);
    auto* e = std::get_if<std::string>(&r);
    if (!e) ADD_FAILURE() << text << " was accepted";
    return e ? *e : std::string{};
}

TEST(client_list, ranges_single_counts_and_mixtures) {
    const auto sweep = ok("10..190:10");
    ASSERT_EQ(sweep.size(), 19u);
    EXPECT_EQ(sweep.front(), 10u);
    EXPECT_EQ(sweep.back(), 190u);
    EXPECT_EQ(ok("100"), (std::vector<std::uint32_t>{100}));
    EXPECT_EQ(ok("1..3,10"), (std::vector<std::uint32_t>{1, 2, 3, 10}));
    EXPECT_EQ(ok("5..5"), (std::vector<std::uint32_t>{5}));
    EXPECT_EQ(ok("10..25:10"), (std::vector<std::uint32_t>{10, 20}));
}

TEST(client_list, bad_lists_say_why) {
    EXPECT_NE(error("").find("empty"), std::string::npos);
    EXPECT_NE(error("190..10:10").find("inverted"), std::string::npos);
    EXPECT_NE(error("10..20:0").find("step of 0"), std::string::npos);
    EXPECT_NE(error("0").find("0"), std::string::npos);
    EXPECT_NE(error("0..10").find("starts at 0"), std::string::npos);
    EXPECT_NE(error("ten").find("not a client count"), std::string::npos);
    EXPECT_NE(error("10,").find("not a client count"), std::string::npos);
    EXPECT_NE(error("-5").find("not a client count"), std::string::npos);
    EXPECT_NE(error("1..x").find("FROM..TO"), std::string::npos);
    EXPECT_NE(error("99999999999").find("not a client count"), std::string::npos);
    EXPECT_NE(error("1..100000000").find("more than"), std::string::npos);
}

}  // namespace
}  // namespace faultline::storm
