// GoogleMock matchers over a `run_record` (fault_server::record(), run_scenario_file()): each one is
// a faultline check, built from the same `[[expect]]` table a scenario would hold and judged by
// the same checks::evaluate as `faultline run`, so a test and a scenario cannot disagree. A failure
// explains itself with the check's summary and evidence, in the words `faultline run` prints:
//
//   Value of: server.record()
//   Expected: satisfies check no_double_effects
//     Actual: ... 1 of 20 operations committed more than once
//       op 5d2c…: attempts seq 3, 4 both committed ...
//
// Insufficient evidence (the run held too few of the events the check judges) does not match either:
// a test that proves nothing should not pass.
#pragma once

#include <chrono>
#include <cstddef>
#include <string_view>

#include <gmock/gmock.h>

#include "faultline/record/run_record.hpp"

namespace faultline::testing {

using run_matcher = ::testing::Matcher<const record::run_record&>;

// Any check, as its `[[expect]]` table's keys (without the [[expect]] header), e.g.
// Satisfies(R"(check = "latency"
//              p99 = "250ms")"). Throws std::invalid_argument on a table a scenario could not hold.
run_matcher Satisfies(std::string_view expect_table_toml);

// check = "no_double_effects": at most one committed effect per operation.
run_matcher NoDoubleEffects();
// check = "retry_budget": in every `window`, retries <= ratio x first attempts + min_per_sec x window.
// The defaults after `ratio` are the check's own.
run_matcher RetriesWithinBudget(double ratio, double min_per_sec = 10,
                                std::chrono::milliseconds window = std::chrono::seconds{10});
// check = "deadline": no attempt after the operation's deadline, the client done by deadline +
// `tolerance`; the propagated deadline never grows.
run_matcher HonoursDeadline(std::chrono::milliseconds tolerance = std::chrono::milliseconds{10});
// check = "retry_after": the next attempt waits for Retry-After (within `tolerance`).
run_matcher HonoursRetryAfter(std::chrono::milliseconds tolerance = std::chrono::milliseconds{10});
// check = "max_attempts": no operation makes more than `max` attempts.
run_matcher AttemptsAtMost(std::size_t max);
// check = "no_retry_on_status": nothing after a status that will fail the same way (the retry
// library's RFC 9110 table).
run_matcher NoRetryOnStatus();

// WireMock's verify(n, postRequestedFor(urlPathEqualTo(path))): how many attempts on the wire had
// this method and path (the query aside), judged as gmock judges calls, e.g.
// Requested("POST", "/payments", Times(2)) or ::testing::AtLeast(1). Counts attempts, not
// operations: a client that retried twice requested three times.
run_matcher Requested(std::string_view method, std::string_view path, ::testing::Cardinality times);
// Exactly n times, in WireMock's words: Requested("POST", "/payments", Times(2)). (gmock names the
// free function Exactly; Times is EXPECT_CALL's.)
inline ::testing::Cardinality Times(int n) { return ::testing::Exactly(n); }

// Every verdict the record already holds passed (a scenario run by run_scenario_file): explains each
// one that did not with its evidence, or the harness error.
run_matcher PassesAllChecks();

}  // namespace faultline::testing

namespace faultline::record {

// How GoogleTest prints a run record in a failure (found by argument-dependent lookup): one line of
// attempts, operations, the faults that fired and the first few attempts' outcomes, where it would
// otherwise dump the record's bytes.
void PrintTo(const record::run_record& run, std::ostream* os);

}  // namespace faultline::record
