// The fixture's server is a real one on 127.0.0.1: raw HTTP requests (the server tests' client)
// go through its rules, land in its journal and ledger, and come back in its run record.
#include "faultline/testing/fault_server.hpp"
#include "faultline/testing/matchers.hpp"

#include "test_client.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace {

namespace raw = faultline::server::testing;
using faultline::testing::fault_server;
using ::testing::HasSubstr;

int post_payment(const fault_server& server, const std::string& key = {}) {
    raw::header_pairs headers;
    if (!key.empty()) headers.emplace_back("Idempotency-Key", key);
    const auto reply = raw::exchange(server.port(), raw::make_request("POST", "/payments", R"({"amount":100})", headers));
    const auto parsed = reply.parsed();
    return parsed ? static_cast<int>(parsed->result_int()) : 0;
}

constexpr const char* always_503 = R"(
[[fault]]
name = "outage"
kind = "status"
status = 503
)";

class FaultServerTest : public faultline::testing::fault_server_test {};

// A client posting to a route the service does not declare is told so on the wire (404 naming the
// nearest endpoint), in the journal (effect "unmatched", one unmatched_route event per route) and by
// the check that then has nothing to judge.
TEST_F(FaultServerTest, APostToAnUndeclaredRouteIsUnmatchedAndNamesTheNearestEndpoint) {
    for (int i = 0; i < 2; ++i) {
        const auto reply = raw::exchange(server.port(), raw::make_request("POST", "/charge", R"({"amount":100})"));
        ASSERT_TRUE(reply.parsed()) << reply.bytes;
        EXPECT_EQ(reply.parsed()->result_int(), 404);
        EXPECT_THAT(reply.parsed()->body(), HasSubstr("nearest declared endpoint: POST /payments"));
    }
    const auto run = server.record();
    ASSERT_EQ(run.journal.size(), 2u);
    EXPECT_EQ(run.journal[0].effect, faultline::record::effect_kind::unmatched);
    std::vector<std::string> told;
    for (const auto& e : run.server_events) {
        if (e.kind == faultline::record::server_event_kind::unmatched_route) told.push_back(e.detail);
    }
    EXPECT_THAT(told, ::testing::ElementsAre("POST /charge; nearest POST /payments"));
    EXPECT_TRUE(server.ledger().empty());
    ::testing::StringMatchResultListener why;
    EXPECT_FALSE(::testing::ExplainMatchResult(faultline::testing::NoDoubleEffects(), run, &why));
    EXPECT_THAT(why.str(), HasSubstr("nothing to judge"));
    EXPECT_THAT(why.str(), HasSubstr("2 of 2 attempts matched no endpoint of the service (POST /charge; nearest POST /payments)"));
}

TEST_F(FaultServerTest, ServesOnAnEphemeralLoopbackPort) {
    ASSERT_TRUE(server.running());
    EXPECT_NE(server.port(), 0);
    EXPECT_EQ(server.url(), "http://127.0.0.1:" + std::to_string(server.port()));
}

TEST_F(FaultServerTest, JournalsEveryAttemptAndLedgersEveryCommit) {
    EXPECT_EQ(post_payment(server, "k1") / 100, 2);
    EXPECT_EQ(post_payment(server, "k2") / 100, 2);
    const auto run = server.record();
    EXPECT_FALSE(server.running());
    ASSERT_EQ(run.journal.size(), 2u);
    EXPECT_EQ(run.journal[0].operation, "k1");
    EXPECT_EQ(server.ledger().size(), 2u);
    EXPECT_TRUE(server.double_effects().empty());
}

// The run record carries each attempt's wire detail too, so a journal report written from it has the
// transport fields `faultline check` and people read.
TEST_F(FaultServerTest, TheRunRecordHoldsEachAttemptsWireDetailInSeqOrder) {
    post_payment(server, "k1");
    post_payment(server, "k2");
    const auto run = server.record();
    ASSERT_EQ(run.journal.size(), 2u);
    ASSERT_EQ(run.wire.size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) {
        EXPECT_EQ(run.wire[i].seq, run.journal[i].seq);
        EXPECT_GT(run.wire[i].bytes_in, 0u);
        EXPECT_GT(run.wire[i].bytes_out, 0u);
    }
    EXPECT_LT(run.journal[0].seq, run.journal[1].seq);
}

TEST_F(FaultServerTest, RulesFromTomlApplyUntilRemoved) {
    server.add_rules(always_503);
    ASSERT_EQ(server.rules().size(), 1u);
    EXPECT_EQ(post_payment(server, "k1"), 503);
    EXPECT_TRUE(server.remove_rule("outage"));
    EXPECT_FALSE(server.remove_rule("outage"));
    EXPECT_EQ(post_payment(server, "k2") / 100, 2);
    const auto run = server.record();
    ASSERT_EQ(run.rule_firings.size(), 0u) << "a removed rule is not one of the round's rules";
    ASSERT_EQ(run.journal.size(), 2u);
    EXPECT_EQ(run.journal[0].rule, "outage");
}

TEST_F(FaultServerTest, CountsFiringsOfInstalledRules) {
    server.add_rules(always_503);
    EXPECT_EQ(post_payment(server, "k1"), 503);
    const auto run = server.record();
    ASSERT_EQ(run.rule_firings.size(), 1u);
    EXPECT_EQ(run.rule_firings[0].rule, "outage");
    EXPECT_EQ(run.rule_firings[0].fired, 1u);
}

TEST_F(FaultServerTest, BadRulesAreRefusedWithTheirPositionAndNothingIsAdded) {
    try {
        server.add_rules(R"([[fault]]
kind = "status"
status = 503

[[fault]]
kind = "no_such_kind"
)");
        FAIL() << "add_rules accepted an unknown kind";
    } catch (const std::invalid_argument& e) {
        EXPECT_THAT(e.what(), HasSubstr("rules.toml:6"));
        EXPECT_THAT(e.what(), HasSubstr("no_such_kind"));
    }
    EXPECT_TRUE(server.rules().empty());
}

TEST_F(FaultServerTest, ADuplicateRuleNameIsRefused) {
    server.add_rules(always_503);
    EXPECT_THROW(server.add_rules(always_503), std::invalid_argument);
    EXPECT_THROW(server.add_rule(server.rules().front()), std::invalid_argument);
    EXPECT_EQ(server.rules().size(), 1u);
}

TEST_F(FaultServerTest, RuleStructsMoveBetweenServers) {
    fault_server other{always_503};
    ASSERT_EQ(other.rules().size(), 1u);
    server.add_rule(other.rules().front());
    EXPECT_EQ(post_payment(server, "k1"), 503);
}

TEST_F(FaultServerTest, ResetStartsAFreshRoundAndKeepsTheRules) {
    server.add_rules(always_503);
    EXPECT_EQ(post_payment(server, "k1"), 503);
    server.reset();
    ASSERT_TRUE(server.running());
    EXPECT_TRUE(server.journal().empty());
    EXPECT_TRUE(server.ledger().empty());
    EXPECT_EQ(post_payment(server, "k1"), 503);
    server.clear_rules();
    EXPECT_EQ(post_payment(server, "k1") / 100, 2);
    EXPECT_EQ(server.record().journal.size(), 2u);
}

TEST(FaultServerRulesFile, TheServerTableSetsTheModelAndBadFilesAreRefused) {
    fault_server server{R"(
[server]
idempotency = "keys"
idempotency_required = true
)"};
    EXPECT_EQ(post_payment(server), 400) << "a payment without a key is refused";
    EXPECT_THROW(fault_server{"[server]\nno_such_key = 1\n"}, std::invalid_argument);
}

}  // namespace
