// gRPC calls on the HTTP/2 session: the service's reply in gRPC's form (message, then the status as
// trailers), a grpc_status rule's trailers-only reply with its pushback, what a client makes of a
// plain HTTP status, and the call's grpc-timeout and attempt count in the journal.
#include "h2_test_client.hpp"
#include "server_fixture.hpp"

#include "../src/grpc_call.hpp"

#include <gtest/gtest.h>

namespace faultline::server::testing {
namespace {

constexpr std::string_view charge_endpoint =
    "[server]\nservice = \"empty\"\n[[server.endpoint]]\nmethod = \"POST\"\npath = \"/bank.Payments/Charge\"\n"
    "effect = \"non_idempotent\"\n";

// A unary call: one length-prefixed message, with the fields a gRPC client sends.
h2_request call(std::string path, std::vector<std::pair<std::string, std::string>> extra = {}) {
    std::vector<std::pair<std::string, std::string>> headers{{"content-type", "application/grpc"}, {"te", "trailers"}};
    headers.insert(headers.end(), extra.begin(), extra.end());
    return h2_request{"POST", std::move(path), detail::grpc_message_frame("\x08\x2a"), std::move(headers)};
}

TEST(grpc, a_call_is_answered_with_an_empty_message_then_its_status_in_trailers) {
    test_server s{charge_endpoint};
    const auto result = h2_exchange(
        s.port(), {call("/bank.Payments/Charge", {{"grpc-timeout", "250m"}, {"grpc-previous-rpc-attempts", "1"}})});
    ASSERT_EQ(result.replies.size(), 1U);
    const h2_reply& reply = result.replies[0];
    EXPECT_EQ(reply.status, 200);
    EXPECT_EQ(reply.headers.at("content-type"), "application/grpc");
    EXPECT_EQ(reply.body, std::string(5, '\0'));
    EXPECT_EQ(reply.headers.at("grpc-status"), "0");
    EXPECT_EQ(reply.headers.count("content-length"), 0U);
    const auto journal = s.journal();
    ASSERT_EQ(journal.size(), 1U);
    EXPECT_EQ(journal[0].effect, record::effect_kind::committed);
    EXPECT_EQ(journal[0].grpc_status, 0);
    EXPECT_EQ(journal[0].deadline_ms, 250);
    EXPECT_EQ(journal[0].previous_attempts, "1");
    EXPECT_FALSE(journal[0].grpc_pushback_ms);
}

// gRPC's lost response: the charge is committed, the client is told UNAVAILABLE.
TEST(grpc, a_status_rule_after_the_commit_is_trailers_only_with_its_pushback) {
    test_server s{std::string{charge_endpoint} +
                  "[[fault]]\nname = \"gone\"\nkind = \"grpc_status\"\ncode = \"UNAVAILABLE\"\nmessage = \"try later\"\n"
                  "pushback_ms = 100\nphase = \"after\"\n"};
    const auto result = h2_exchange(s.port(), {call("/bank.Payments/Charge")});
    ASSERT_EQ(result.replies.size(), 1U);
    const h2_reply& reply = result.replies[0];
    EXPECT_EQ(reply.status, 200);
    EXPECT_TRUE(reply.body.empty());
    EXPECT_EQ(reply.headers.at("grpc-status"), "14");
    EXPECT_EQ(reply.headers.at("grpc-message"), "try later");
    EXPECT_EQ(reply.headers.at("grpc-retry-pushback-ms"), "100");
    const auto journal = s.journal();
    ASSERT_EQ(journal.size(), 1U);
    EXPECT_EQ(journal[0].effect, record::effect_kind::committed);
    EXPECT_EQ(journal[0].fault, "grpc_status");
    EXPECT_EQ(journal[0].grpc_status, 14);
    EXPECT_EQ(journal[0].grpc_pushback_ms, 100);
    EXPECT_EQ(s.context().effects.size(), 1U);
}

TEST(grpc, a_plain_http_status_is_journaled_as_the_grpc_status_the_client_reads_it_as) {
    test_server s{std::string{charge_endpoint} + "[[fault]]\nkind = \"status\"\nstatus = 503\n"};
    const auto result = h2_exchange(s.port(), {call("/bank.Payments/Charge")});
    ASSERT_EQ(result.replies.size(), 1U);
    EXPECT_EQ(result.replies[0].status, 503);
    const auto journal = s.journal();
    ASSERT_EQ(journal.size(), 1U);
    EXPECT_EQ(journal[0].status, 503);
    EXPECT_EQ(journal[0].grpc_status, 14);  // UNAVAILABLE
}

TEST(grpc, an_unknown_method_is_unimplemented_and_commits_nothing) {
    test_server s{charge_endpoint};
    const auto result = h2_exchange(s.port(), {call("/bank.Payments/Refund")});
    ASSERT_EQ(result.replies.size(), 1U);
    EXPECT_EQ(result.replies[0].headers.at("grpc-status"), "12");
    EXPECT_TRUE(result.replies[0].body.empty());
    const auto journal = s.journal();
    ASSERT_EQ(journal.size(), 1U);
    EXPECT_EQ(journal[0].effect, record::effect_kind::unmatched);
    EXPECT_EQ(journal[0].grpc_status, 12);
}

// Response headers went out, then the stream was cut: A6's commit point, with no status at all.
TEST(grpc, a_truncated_reply_is_cut_inside_the_message_and_never_sends_a_status) {
    test_server s{std::string{charge_endpoint} + "[[fault]]\nkind = \"truncate\"\nbody_bytes = 2\n"};
    const auto result = h2_exchange(s.port(), {call("/bank.Payments/Charge")});
    ASSERT_EQ(result.replies.size(), 1U);
    EXPECT_EQ(result.replies[0].status, 200);
    EXPECT_EQ(result.replies[0].body.size(), 2U);
    EXPECT_EQ(result.replies[0].headers.count("grpc-status"), 0U);
    EXPECT_TRUE(result.replies[0].reset_code.has_value());
    const auto journal = s.journal();
    ASSERT_EQ(journal.size(), 1U);
    EXPECT_EQ(journal[0].outcome, record::wire_outcome::truncated);
    EXPECT_FALSE(journal[0].grpc_status);
}

TEST(grpc, grpc_timeout_is_read_in_every_unit_and_refused_when_malformed) {
    using detail::grpc_timeout_ms;
    EXPECT_EQ(grpc_timeout_ms("2H"), 7'200'000);
    EXPECT_EQ(grpc_timeout_ms("3M"), 180'000);
    EXPECT_EQ(grpc_timeout_ms("1S"), 1000);
    EXPECT_EQ(grpc_timeout_ms("250m"), 250);
    EXPECT_EQ(grpc_timeout_ms("1999u"), 1);
    EXPECT_EQ(grpc_timeout_ms("99999999n"), 99);
    EXPECT_FALSE(grpc_timeout_ms("100"));
    EXPECT_FALSE(grpc_timeout_ms("m"));
    EXPECT_FALSE(grpc_timeout_ms("123456789S"));  // nine digits
    EXPECT_FALSE(grpc_timeout_ms("-1S"));
    EXPECT_FALSE(grpc_timeout_ms("10s"));
}

}  // namespace
}  // namespace faultline::server::testing
