#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "check_test_support.hpp"

namespace faultline::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(idempotency_keys, a_post_without_a_key_is_named) {
    test::journal_builder j;
    j.op("a").attempt(503).wait(5).attempt(200);
    const record::verdict v = test::run_check(R"(check = "idempotency_keys")", j.run());
    EXPECT_FALSE(v.passed);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_EQ(v.evidence[0].operation, "a");
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(1u, 2u));
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("no Idempotency-Key: #1 POST /charge"));
    EXPECT_EQ(v.summary, "1 operations with POST, PATCH: 1 sent an attempt without a key, 0 changed their key, "
                         "0 keys were shared between operations");
}

TEST(idempotency_keys, a_key_that_changes_between_attempts_is_named) {
    test::journal_builder j;
    j.op("b").attempt(503).key("k1").wait(5).attempt(200).key("k2");
    const record::verdict v = test::run_check(R"(check = "idempotency_keys")", j.run());
    EXPECT_FALSE(v.passed);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(1u, 2u));
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("the key changed across attempts:\n\"k1\" on #1"));
}

TEST(idempotency_keys, a_new_key_per_attempt_is_caught_by_the_attempt_header) {
    test::journal_builder j;
    j.op("k1").attempt(503).key("k1").keyed_identity().attempt_header("1");
    j.op("k2").at(10).attempt(200).key("k2").keyed_identity().attempt_header("2");
    const record::verdict v = test::run_check(R"(check = "idempotency_keys")", j.run());
    EXPECT_FALSE(v.passed);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_EQ(v.evidence[0].operation, "k2");
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(2u));
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("key \"k2\" first seen on the client's attempt 2"));
}

TEST(idempotency_keys, a_key_shared_by_two_operations_is_named) {
    test::journal_builder j;
    j.op("c").attempt(200).key("same");
    j.op("d").at(5).attempt(200).key("same");
    const record::verdict v = test::run_check(R"(check = "idempotency_keys")", j.run());
    EXPECT_FALSE(v.passed);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_EQ(v.evidence[0].operation, "c");
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(1u, 2u));
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("key \"same\" used by 2 operations"));
}

TEST(idempotency_keys, stable_distinct_keys_pass_and_reads_are_ignored) {
    test::journal_builder j;
    j.op("a").attempt(503).key("ka").wait(5).attempt(200).key("ka");
    j.op("b").at(1).attempt(200).key("kb");
    j.op("r", "GET", "/balance").at(2).attempt(503).wait(5).attempt(200);
    j.op("p", "patch", "/profile").at(3).attempt(200).key("kp");
    const record::verdict v = test::run_check(R"(check = "idempotency_keys")", j.run());
    EXPECT_TRUE(v.passed) << v.summary;
    EXPECT_THAT(v.summary, HasSubstr("3 operations with POST, PATCH"));
}

TEST(idempotency_keys, bad_config) {
    auto errors = test::parse_errors("check = \"idempotency_keys\"\nmethods = []\n");
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_THAT(errors[0].message, HasSubstr("methods: must name at least one method"));
    errors = test::parse_errors("check = \"idempotency_keys\"\nmethods = \"POST\"\n");
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_THAT(errors[0].message, HasSubstr("methods: expected an array of strings, got a string"));
}

TEST(idempotency_keys, a_run_without_a_non_idempotent_method_is_insufficient_evidence) {
    test::journal_builder j;
    j.op("r", "GET", "/balance").attempt(503).wait(5).attempt(200);
    j.op("d", "DELETE", "/item").at(2).attempt(200);
    const record::verdict v = test::run_check(R"(check = "idempotency_keys")", j.run());
    EXPECT_EQ(v.outcome(), record::verdict_outcome::insufficient_evidence) << v.summary;
    EXPECT_EQ(v.summary, "no operation with POST, PATCH: nothing to judge");
}

}  // namespace
}  // namespace faultline::checks
