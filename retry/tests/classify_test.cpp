#include "faultline/retry/classify.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace faultline::retry {
namespace {

constexpr request_safety all_safeties[] = {request_safety::unsafe, request_safety::idempotent,
                                           request_safety::idempotency_key};

TEST(Classify, SuccessStatuses) {
    const classifier c;
    for (const int s : {200, 201, 204, 301, 304})
        for (const auto safety : all_safeties)
            EXPECT_EQ(c.classify(attempt_outcome::http(s), safety), classification::success) << s;
}

TEST(Classify, NeverRetriedStatuses) {
    const classifier c;
    for (const int s : {400, 401, 403, 404, 405, 409, 410, 413, 414, 415, 422, 431, 451, 501, 505})
        for (const auto safety : all_safeties)
            EXPECT_EQ(c.classify(attempt_outcome::http(s), safety), classification::not_retryable) << s;
}

TEST(Classify, UnlistedStatusesAreNotRetried) {
    const classifier c;
    for (const int s : {100, 418, 421, 507, 599, -1, 1000, 5000})
        EXPECT_EQ(c.classify(attempt_outcome::http(s), request_safety::idempotent), classification::not_retryable)
            << s;
}

TEST(Classify, RetryableStatusesForSafeRequests) {
    const classifier c;
    for (const int s : {408, 429, 500, 502, 503, 504}) {
        EXPECT_EQ(c.classify(attempt_outcome::http(s), request_safety::idempotent), classification::retryable) << s;
        EXPECT_EQ(c.classify(attempt_outcome::http(s), request_safety::idempotency_key), classification::retryable)
            << s;
    }
}

TEST(Classify, UnsafeRequestsRetryOnlyUnprocessedStatuses) {
    const classifier c;
    for (const int s : {408, 429, 503})
        EXPECT_EQ(c.classify(attempt_outcome::http(s), request_safety::unsafe), classification::retryable) << s;
    for (const int s : {500, 502, 504})
        EXPECT_EQ(c.classify(attempt_outcome::http(s), request_safety::unsafe), classification::unsafe_to_repeat)
            << s;
}

TEST(Classify, ConflictIsRetryableOnlyWhenTheKeyIsInUse) {
    const classifier c;
    auto in_use = attempt_outcome::http(409);
    in_use.idempotency_key_in_use = true;
    EXPECT_EQ(c.classify(in_use, request_safety::idempotency_key), classification::retryable);
    EXPECT_EQ(c.classify(attempt_outcome::http(409), request_safety::idempotency_key), classification::not_retryable);
}

TEST(Classify, ContentTooLargeIsRetryableOnlyWithRetryAfter) {
    const classifier c;
    auto with_retry_after = attempt_outcome::http(413);
    with_retry_after.retry_after = std::chrono::seconds{2};
    // The server did not take the content, so even an unkeyed POST may send it again.
    for (const auto safety : all_safeties) {
        EXPECT_EQ(c.classify(with_retry_after, safety), classification::retryable) << to_string(safety);
        EXPECT_EQ(c.classify(attempt_outcome::http(413), safety), classification::not_retryable)
            << to_string(safety);
    }
}

TEST(Classify, RequestTimeoutIsRetryableEvenForUnsafeRequests) {
    const classifier c;
    for (const auto safety : all_safeties)
        EXPECT_EQ(c.classify(attempt_outcome::http(408), safety), classification::retryable) << to_string(safety);
}

TEST(Classify, DefaultsAreTheStandardProfileOfTheStatusTable) {
    const classifier c;
    for (const status_rule& rule : status_rules()) {
        EXPECT_EQ(c.treatment_of(rule.status), rule.standard) << rule.status;
        EXPECT_EQ(c.is_unprocessed_status(rule.status), rule.unprocessed) << rule.status;
    }
    EXPECT_EQ(c.treatment_of(418), std::nullopt);
}

TEST(Classify, TreatingAStatusReplacesItsTreatment) {
    classifier c;
    c.treat(422, status_treatment::unless_retry_after);
    EXPECT_EQ(c.treatment_of(422), status_treatment::unless_retry_after);
    EXPECT_TRUE(c.is_never_retry_status(422));
    EXPECT_FALSE(c.is_retryable_status(422));
    auto with_retry_after = attempt_outcome::http(422);
    with_retry_after.retry_after = std::chrono::seconds{1};
    EXPECT_EQ(c.classify(with_retry_after, request_safety::idempotent), classification::retryable);
    c.never_retry(413);
    EXPECT_EQ(c.treatment_of(413), status_treatment::never);
    with_retry_after.status = 413;
    EXPECT_EQ(c.classify(with_retry_after, request_safety::idempotent), classification::not_retryable);
    c.retry_on(409);
    EXPECT_EQ(c.classify(attempt_outcome::http(409), request_safety::idempotent), classification::retryable);
}

TEST(Classify, TransportBeforeTheServerSawTheRequestIsAlwaysSafe) {
    const classifier c;
    for (const auto kind : {outcome_kind::connection_refused, outcome_kind::reset_before_write})
        for (const auto safety : all_safeties)
            EXPECT_EQ(c.classify(attempt_outcome::transport(kind), safety), classification::retryable)
                << to_string(kind);
}

TEST(Classify, TransportAfterWriteIsSafeOnlyForIdempotentOrKeyedRequests) {
    const classifier c;
    for (const auto kind :
         {outcome_kind::reset_after_write, outcome_kind::eof_after_write, outcome_kind::timeout_after_write}) {
        const auto o = attempt_outcome::transport(kind);
        EXPECT_EQ(c.classify(o, request_safety::unsafe), classification::unsafe_to_repeat) << to_string(kind);
        EXPECT_EQ(c.classify(o, request_safety::idempotent), classification::retryable) << to_string(kind);
        EXPECT_EQ(c.classify(o, request_safety::idempotency_key), classification::retryable) << to_string(kind);
    }
}

TEST(Classify, DeadlineCancellationAndLocalErrorsAreFinal) {
    const classifier c;
    for (const auto safety : all_safeties) {
        EXPECT_EQ(c.classify(attempt_outcome::transport(outcome_kind::deadline_exceeded), safety),
                  classification::deadline_exceeded);
        EXPECT_EQ(c.classify(attempt_outcome::transport(outcome_kind::cancelled), safety), classification::cancelled);
        EXPECT_EQ(c.classify(attempt_outcome::transport(outcome_kind::local_error), safety),
                  classification::not_retryable);
    }
}

TEST(Classify, SetsAreConfigurable) {
    classifier c;
    c.retry_on(404).never_retry(503).retry_on({507}).unprocessed(500);
    EXPECT_TRUE(c.is_retryable_status(404));
    EXPECT_FALSE(c.is_never_retry_status(404));
    EXPECT_EQ(c.classify(attempt_outcome::http(503), request_safety::idempotent), classification::not_retryable);
    EXPECT_EQ(c.classify(attempt_outcome::http(507), request_safety::idempotent), classification::retryable);
    EXPECT_EQ(c.classify(attempt_outcome::http(500), request_safety::unsafe), classification::retryable);
    EXPECT_FALSE(c.is_retryable_status(-3));
    EXPECT_FALSE(c.is_retryable_status(classifier::max_status));
}

TEST(Classify, MethodSafety) {
    for (const auto m : {"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"}) {
        EXPECT_TRUE(is_idempotent_method(m)) << m;
        EXPECT_EQ(safety_of(m, false), request_safety::idempotent) << m;
    }
    for (const auto m : {"POST", "PATCH", "CONNECT", "get"}) EXPECT_FALSE(is_idempotent_method(m)) << m;
    EXPECT_EQ(safety_of("POST", false), request_safety::unsafe);
    EXPECT_EQ(safety_of("POST", true), request_safety::idempotency_key);
}

}  // namespace
}  // namespace faultline::retry
