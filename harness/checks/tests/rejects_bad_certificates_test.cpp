#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "check_test_support.hpp"

namespace faultline::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr const char* table = "check = \"rejects_bad_certificates\"\n";

record::server_event refusal(std::string how) {
    record::server_event e;
    e.kind = record::server_event_kind::certificate_refused;
    e.rule = "bad-cert";
    e.detail = how + ": tlsv1 alert unknown ca (SSL routines)";
    return e;
}

TEST(rejects_bad_certificates, a_request_over_a_bad_certificate_fails_with_that_request) {
    test::journal_builder j;
    j.op("a", "POST", "/payments").attempt(201).fault("tls", "bad-cert");
    j.op("b", "POST", "/payments").attempt(201);
    record::run_record run = j.run();
    run.server_events.push_back(refusal("untrusted_issuer"));
    const record::verdict v = test::run_check(table, run);
    EXPECT_FALSE(v.passed);
    EXPECT_FALSE(v.insufficient_evidence);
    EXPECT_EQ(v.summary, "1 handshakes with a bad certificate refused by the client; 1 requests sent over one anyway");
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_EQ(v.evidence[0].operation, "a");
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(1u));
    EXPECT_THAT(v.evidence[0].detail,
                HasSubstr("1 requests sent over a certificate the client had to refuse (rule `bad-cert`)"));
}

TEST(rejects_bad_certificates, refusing_every_bad_certificate_passes) {
    test::journal_builder j;
    j.op("b", "POST", "/payments").attempt(201);
    record::run_record run = j.run();
    for (const char* how : {"expired_certificate", "wrong_name", "untrusted_issuer"}) run.server_events.push_back(refusal(how));
    const record::verdict v = test::run_check(table, run);
    EXPECT_TRUE(v.passed) << v.summary;
    EXPECT_EQ(v.summary, "3 handshakes with a bad certificate refused by the client; 0 requests sent over one anyway");
}

// The refusals are evidence enough: a client that refused every connection sent nothing at all.
TEST(rejects_bad_certificates, a_client_that_refused_and_sent_nothing_passes) {
    record::run_record run;
    run.server_events.push_back(refusal("expired_certificate"));
    const record::verdict v = test::run_check(table, run);
    EXPECT_TRUE(v.passed) << v.summary;
    EXPECT_FALSE(v.insufficient_evidence);
}

TEST(rejects_bad_certificates, no_bad_certificate_offered_is_insufficient_evidence) {
    test::journal_builder j;
    j.op("b").attempt(200);
    record::run_record run = j.run();
    record::server_event aborted = refusal("x");
    aborted.kind = record::server_event_kind::tls_handshake_failed;  // another tls fault: not a certificate
    aborted.detail = "abort_handshake: reset after the client's hello";
    run.server_events.push_back(aborted);
    record::server_event unrelated = refusal("x");
    unrelated.kind = record::server_event_kind::tls_handshake_failed;
    unrelated.rule.clear();
    unrelated.detail = "http request";
    run.server_events.push_back(unrelated);
    const record::verdict v = test::run_check(table, run);
    EXPECT_TRUE(v.insufficient_evidence);
    EXPECT_FALSE(v.passed);
    EXPECT_THAT(v.summary, HasSubstr("no connection was offered a bad certificate"));
}

}  // namespace
}  // namespace faultline::checks
