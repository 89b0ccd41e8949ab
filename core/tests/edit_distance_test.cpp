#include "faultline/core/edit_distance.hpp"

#include <gtest/gtest.h>

namespace {

using faultline::core::edit_distance;

TEST(edit_distance, counts_the_characters_to_insert_delete_or_change) {
    EXPECT_EQ(edit_distance("run", "run"), 0U);
    EXPECT_EQ(edit_distance("runn", "run"), 1U);     // one deleted
    EXPECT_EQ(edit_distance("serv", "serve"), 1U);   // one inserted
    EXPECT_EQ(edit_distance("chack", "check"), 1U);  // one changed
    EXPECT_EQ(edit_distance("", "list"), 4U);
    EXPECT_EQ(edit_distance("proxy", ""), 5U);
    EXPECT_EQ(edit_distance("kitten", "sitting"), 3U);
}

TEST(edit_distance, is_symmetric) {
    EXPECT_EQ(edit_distance("simulate", "stimulus"), edit_distance("stimulus", "simulate"));
}

}  // namespace
