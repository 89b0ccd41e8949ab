#include "faultline/faults/kind.hpp"

#include <gtest/gtest.h>

namespace faultline::faults {
namespace {

TEST(kind_registry, holds_exactly_the_shipped_kinds) {
    const std::vector<std::string> expected{"close",    "delay",     "goaway",   "grpc_status",
                                            "hang",     "lost_response", "malformed", "overload",
                                            "refuse",   "refused_stream", "reset",    "slow_body",
                                            "status",   "tls",       "tls_truncate", "truncate"};
    EXPECT_EQ(kind_registry::instance().names(), expected);
}

TEST(kind_registry, every_kind_has_a_summary_and_a_factory) {
    for (const kind_info& info : kind_registry::instance().entries()) {
        EXPECT_FALSE(info.summary.empty()) << info.name;
        EXPECT_TRUE(static_cast<bool>(info.make)) << info.name;
    }
}

TEST(kind_registry, refuses_a_duplicate_name) {
    kind_registry& registry = kind_registry::instance();
    const kind_factory none = [](config::table_reader&) { return std::shared_ptr<const fault_kind>{}; };
    EXPECT_THROW(registry.add({"delay", "again", none}), std::logic_error);
    EXPECT_EQ(registry.names().size(), 16U);
}

}  // namespace
}  // namespace faultline::faults
