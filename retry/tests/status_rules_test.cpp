#include "faultline/retry/status_rules.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace faultline::retry {
namespace {

std::vector<int> statuses_treated(status_profile profile, status_treatment t) {
    std::vector<int> out;
    for (const status_rule& rule : status_rules())
        if (treatment(rule, profile) == t) out.push_back(rule.status);
    return out;
}

// The table is the contract between the client and the check; a change to it should be deliberate.
TEST(StatusRules, StandardProfile) {
    using enum status_treatment;
    EXPECT_EQ(statuses_treated(status_profile::standard, retry), (std::vector{408, 429, 500, 502, 503, 504}));
    EXPECT_EQ(statuses_treated(status_profile::standard, never),
              (std::vector{400, 401, 403, 404, 405, 410, 414, 415, 422, 431, 451, 501, 505}));
    EXPECT_EQ(statuses_treated(status_profile::standard, unless_retry_after), (std::vector{413}));
    EXPECT_EQ(statuses_treated(status_profile::standard, unless_key_in_use), (std::vector{409}));
}

// Strict differs only in 408 and 413: the retries RFC 9110 permits of a request rejected for its shape.
TEST(StatusRules, StrictProfileRefuses408And413) {
    std::vector<int> differing;
    for (const status_rule& rule : status_rules())
        if (rule.standard != rule.strict) differing.push_back(rule.status);
    EXPECT_EQ(differing, (std::vector{408, 413}));
    EXPECT_EQ(find_status_rule(408)->strict, status_treatment::never);
    EXPECT_EQ(find_status_rule(413)->strict, status_treatment::never);
    EXPECT_EQ(find_status_rule(409)->strict, status_treatment::unless_key_in_use);
}

TEST(StatusRules, EveryRowCitesItsRfc) {
    for (const status_rule& rule : status_rules()) EXPECT_TRUE(rule.reference.starts_with("RFC ")) << rule.status;
    EXPECT_EQ(find_status_rule(413)->reference, "RFC 9110 §15.5.14");
    EXPECT_EQ(find_status_rule(429)->reference, "RFC 6585 §4");
}

TEST(StatusRules, FindLeavesUnlistedStatusesAlone) {
    for (const int s : {0, 200, 418, 421, 507, 599, 1000}) EXPECT_FALSE(find_status_rule(s)) << s;
    EXPECT_EQ(find_status_rule(400)->status, 400);
    EXPECT_EQ(find_status_rule(505)->status, 505);
}

TEST(StatusRules, OnlyRetriedStatusesSayWhetherTheServerActed) {
    for (const int s : {408, 409, 413, 429, 503}) EXPECT_TRUE(find_status_rule(s)->unprocessed) << s;
    for (const int s : {500, 502, 504}) EXPECT_FALSE(find_status_rule(s)->unprocessed) << s;
}

TEST(StatusRules, ConditionsAllowARetryOnlyWhenTheyHold) {
    using enum status_treatment;
    EXPECT_TRUE(allows_retry(retry, false, false));
    EXPECT_FALSE(allows_retry(never, true, true));
    EXPECT_TRUE(allows_retry(unless_retry_after, true, false));
    EXPECT_FALSE(allows_retry(unless_retry_after, false, true));
    EXPECT_TRUE(allows_retry(unless_key_in_use, false, true));
    EXPECT_FALSE(allows_retry(unless_key_in_use, true, false));
}

}  // namespace
}  // namespace faultline::retry
