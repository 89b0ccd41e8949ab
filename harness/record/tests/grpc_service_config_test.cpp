#include <gtest/gtest.h>

#include "faultline/record/grpc_service_config.hpp"
#include "faultline/record/run_record.hpp"

namespace faultline::record {
namespace {

grpc_method_config named(std::vector<grpc_method_name> names, std::chrono::milliseconds timeout) {
    grpc_method_config m;
    m.names = std::move(names);
    m.timeout = timeout;
    return m;
}

TEST(grpc_service_config, find_prefers_the_method_then_the_service_then_the_default) {
    grpc_service_config c;
    c.methods.push_back(named({{"", ""}}, std::chrono::milliseconds{1}));
    c.methods.push_back(named({{"pkg.Svc", ""}}, std::chrono::milliseconds{2}));
    c.methods.push_back(named({{"other.Svc", "Get"}, {"pkg.Svc", "Charge"}}, std::chrono::milliseconds{3}));
    ASSERT_NE(c.find("/pkg.Svc/Charge"), nullptr);
    EXPECT_EQ(c.find("/pkg.Svc/Charge")->timeout, std::chrono::milliseconds{3});
    EXPECT_EQ(c.find("/other.Svc/Get")->timeout, std::chrono::milliseconds{3});
    EXPECT_EQ(c.find("/pkg.Svc/Refund")->timeout, std::chrono::milliseconds{2});
    EXPECT_EQ(c.find("/third.Svc/Any")->timeout, std::chrono::milliseconds{1});
    EXPECT_EQ(c.find("/charge"), nullptr);  // not a gRPC path
    EXPECT_EQ(c.find(""), nullptr);
}

TEST(grpc_service_config, find_without_a_default_finds_nothing_for_other_services) {
    grpc_service_config c;
    c.methods.push_back(named({{"pkg.Svc", "Charge"}}, std::chrono::milliseconds{3}));
    EXPECT_EQ(c.find("/pkg.Svc/Refund"), nullptr);
    EXPECT_EQ(c.find("/pkg.Svcx/Charge"), nullptr);
}

TEST(grpc_service_config, a_declared_config_makes_the_declaration_non_empty) {
    declared_client d;
    EXPECT_TRUE(d.empty());
    d.grpc = std::make_shared<const grpc_service_config>();
    EXPECT_FALSE(d.empty());
}

}  // namespace
}  // namespace faultline::record
