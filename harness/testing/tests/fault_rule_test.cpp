// Rules written with the typed builder act on the wire as the same TOML would, and a bad one is the
// rules loader's message, thrown before anything is installed.
#include "faultline/testing/fault_rule.hpp"
#include "faultline/testing/fault_server.hpp"

#include "test_client.hpp"

#include <boost/json/serialize.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>

namespace {

namespace raw = faultline::server::testing;
using namespace faultline::testing;
using ::testing::HasSubstr;

raw::raw_reply send(const fault_server& server, const std::string& method, const std::string& target,
                const std::string& key = {}) {
    raw::header_pairs headers;
    if (!key.empty()) headers.emplace_back("Idempotency-Key", key);
    return raw::exchange(server.port(), raw::make_request(method, target, method == "GET" ? "" : R"({"amount":1})", headers));
}

class FaultRuleTest : public fault_server_test {};

TEST_F(FaultRuleTest, A503WithRetryAfterOnTheFirstAttemptOfAPostOnly) {
    server.add_rule(respond(503).named("busy").retry_after(std::chrono::seconds{2}).on("POST", "/payments").attempts({1}));
    const auto first = send(server, "POST", "/payments", "k-1");
    ASSERT_TRUE(first.parsed()) << first.bytes;
    EXPECT_EQ(first.parsed()->result_int(), 503);
    EXPECT_EQ((*first.parsed())["Retry-After"], "2");
    const auto retry = send(server, "POST", "/payments", "k-1");
    ASSERT_TRUE(retry.parsed()) << retry.bytes;
    EXPECT_EQ(retry.parsed()->result_int(), 201);
    const auto read = send(server, "GET", "/payments");
    ASSERT_TRUE(read.parsed()) << read.bytes;
    EXPECT_NE(read.parsed()->result_int(), 503);
    server.stop();  // the last reply's attempt is journaled when its write ends
    const auto journal = server.journal();
    ASSERT_EQ(journal.size(), 3U);
    EXPECT_EQ(journal[0].rule, "busy");
    ASSERT_EQ(server.rules().size(), 1U);
    EXPECT_EQ(server.rules()[0].kind, "status");
}

TEST_F(FaultRuleTest, ALostResponseCommitsAndResetsAsTheTomlRuleDoes) {
    server.add_rule(lose_response("reset").named("lose-first").method("POST").path("/payments").attempts({1}));
    const auto lost = send(server, "POST", "/payments", "k-2");
    EXPECT_FALSE(lost.parsed()) << lost.bytes;  // the connection was reset, no reply
    EXPECT_EQ(server.ledger().size(), 1U);      // but the payment was committed
}

TEST(fault_rule, the_json_has_the_keys_of_a_fault_table) {
    const auto rule = delay(std::chrono::milliseconds{250}).named("slow").header("X-Tenant", "a").probability(0.5).lasting(
        std::chrono::seconds{3});
    EXPECT_EQ(boost::json::serialize(rule.json()),
              R"({"kind":"delay","wait":"250ms","name":"slow","match":{"headers":{"X-Tenant":"a"}},"when":{"probability":5E-1,"for":"3s"}})");
    EXPECT_EQ(rule.build().name, "slow");
}

TEST(fault_rule, a_bad_rule_is_the_loaders_message) {
    try {
        respond(700).build();
        FAIL() << "a status of 700 was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_THAT(e.what(), HasSubstr("status"));
        EXPECT_THAT(e.what(), HasSubstr("700"));
    }
    try {
        respond(503).with("colour", boost::json::value("red")).build();
        FAIL() << "an unknown key was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_THAT(e.what(), HasSubstr("colour"));
    }
    EXPECT_THROW(respond(503).retry_after(std::chrono::seconds{1}).attempts({0}).build(), std::invalid_argument);
}

}  // namespace
