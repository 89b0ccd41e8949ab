#include "faultline/core/registry.hpp"

#include <gtest/gtest.h>

namespace faultline::core {
namespace {

struct sample_entry {
    std::string name;
    std::string summary;
    int value = 0;
};

// A second entry type, so this test owns its registry: registries are per entry type.
const registration<sample_entry> zeta{"zeta", "last", 2};
const registration<sample_entry> alpha{"alpha", "first", 1};

TEST(registry, finds_entries_registered_at_static_initialisation) {
    const auto& r = registry<sample_entry>::instance();
    ASSERT_NE(r.find("alpha"), nullptr);
    EXPECT_EQ(r.find("alpha")->value, 1);
    EXPECT_EQ(r.find("zeta")->summary, "last");
    EXPECT_EQ(r.find("beta"), nullptr);
}

TEST(registry, lists_entries_sorted_by_name) {
    EXPECT_EQ(registry<sample_entry>::instance().names(), (std::vector<std::string>{"alpha", "zeta"}));
}

TEST(registry, rejects_a_duplicate_name) {
    EXPECT_THROW(registry<sample_entry>::instance().add({"alpha", "again", 3}), std::logic_error);
    EXPECT_EQ(registry<sample_entry>::instance().find("alpha")->value, 1);
}

}  // namespace
}  // namespace faultline::core
