// Each matcher against a bad client and a good one. The pairs of shipped suites (suites/*.bad.toml,
// *.good.toml: the builtin retry client with a bad and a good policy) give the clients; the bad run's
// own verdict, judged by `faultline run`'s code path with expect_failure, holds the evidence the
// matcher's failure message must repeat word for word. AttemptsAtMost is shown on the fixture's
// server with the builtin HTTP retry client.
#include "faultline/testing/fault_server.hpp"
#include "faultline/testing/matchers.hpp"
#include "faultline/testing/scenario.hpp"

#include "faultline/reports/console.hpp"
#include "faultline/retry/http_client.hpp"

#include <boost/asio/io_context.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <ostream>
#include <stdexcept>
#include <string>

namespace {

namespace ft = faultline::testing;
using faultline::record::run_record;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

struct matcher_case {
    std::string name;     // the test's name
    std::string suite;    // suites/<suite>.bad.toml and .good.toml
    std::string check;    // the check the suite's [[expect]] names
    std::function<ft::run_matcher()> make;
};

void PrintTo(const matcher_case& c, std::ostream* os) { *os << c.name; }

std::string suite_file(const std::string& suite, const char* variant) {
    return std::string{FAULTLINE_SUITES_DIR} + "/" + suite + "." + variant + ".toml";
}

class MatcherOnSuites : public ::testing::TestWithParam<matcher_case> {};

TEST_P(MatcherOnSuites, PassesOnTheGoodClient) {
    const run_record run = ft::run_scenario_file(suite_file(GetParam().suite, "good"));
    EXPECT_THAT(run, GetParam().make());
}

TEST_P(MatcherOnSuites, FailsOnTheBadClientWithTheEvidenceFaultlineRunPrints) {
    const run_record run = ft::run_scenario_file(suite_file(GetParam().suite, "bad"));
    ASSERT_TRUE(run.harness_error.empty()) << run.harness_error;
    const auto recorded = std::find_if(run.verdicts.begin(), run.verdicts.end(),
                                       [&](const auto& v) { return v.check == GetParam().check; });
    ASSERT_NE(recorded, run.verdicts.end());
    ASSERT_TRUE(recorded->expected_to_fail && recorded->passed) << "the bad client did fail the check";
    ASSERT_FALSE(recorded->evidence.empty());

    const ft::run_matcher matcher = GetParam().make();
    ::testing::StringMatchResultListener explanation;
    EXPECT_FALSE(matcher.MatchAndExplain(run, &explanation));
    // The scenario's verdict was inverted (expect_failure), which prefixes its summary; the rest is the check's.
    std::string summary = recorded->summary;
    if (const std::string inverted = "failed as expected: "; summary.starts_with(inverted)) summary.erase(0, inverted.size());
    EXPECT_THAT(explanation.str(), HasSubstr(summary));
    EXPECT_THAT(explanation.str(), HasSubstr(faultline::reports::console_evidence(*recorded, "    ")));
}

INSTANTIATE_TEST_SUITE_P(
    Checks, MatcherOnSuites,
    ::testing::Values(
        matcher_case{"NoDoubleEffects", "lost-response-no-keys", "no_double_effects", [] { return ft::NoDoubleEffects(); }},
        matcher_case{"RetriesWithinBudget", "mass-outage-budget", "retry_budget",
                     [] { return ft::RetriesWithinBudget(0.3, 10, 1s); }},
        matcher_case{"HonoursDeadline", "deadline-200ms-left", "deadline", [] { return ft::HonoursDeadline(50ms); }},
        matcher_case{"HonoursRetryAfter", "retry-after-429-seconds", "retry_after", [] { return ft::HonoursRetryAfter(); }},
        matcher_case{"NoRetryOnStatus", "status-4xx", "no_retry_on_status", [] { return ft::NoRetryOnStatus(); }}),
    [](const ::testing::TestParamInfo<matcher_case>& param_info) { return param_info.param.name; });

// The builtin HTTP retry client against a server that always answers 503: `attempts` tries of one
// PUT, 1 ms apart.
run_record retry_against_outage(std::uint32_t attempts) {
    ft::fault_server server{R"(
[[fault]]
name = "outage"
kind = "status"
status = 503
)"};
    namespace retry = faultline::retry;
    boost::asio::io_context io;
    const auto policy = retry::retry_policy{}
                            .with_max_attempts(attempts)
                            .with_backoff(retry::backoff_policy{}.with_base(1ms).with_cap(1ms))
                            .with_overall_timeout(5s);
    retry::http_client client{io.get_executor(), std::string{ft::fault_server::host}, server.port(), policy};
    retry::http_request request;
    request.method = boost::beast::http::verb::put;
    request.target = "/accounts/7";
    request.headers.set("Idempotency-Key", "op-1");
    request.body = R"({"limit":100})";
    bool done = false;
    client.async_request(request, [&](const retry::http_result&) { done = true; });
    io.run_for(10s);  // bounded: the policy's 5 s deadline ends the operation first
    EXPECT_TRUE(done);
    return server.record();
}

TEST(AttemptsAtMost, PassesOnAClientThatStopsAtTheLimit) {
    EXPECT_THAT(retry_against_outage(3), ft::AttemptsAtMost(3));
}

TEST(AttemptsAtMost, FailsWithTheOperationAndItsAttemptsOnAClientThatGoesOn) {
    const run_record run = retry_against_outage(5);
    ASSERT_EQ(run.journal.size(), 5u);
    ::testing::StringMatchResultListener explanation;
    EXPECT_FALSE(ft::AttemptsAtMost(3).MatchAndExplain(run, &explanation));
    EXPECT_THAT(explanation.str(), HasSubstr("op-1"));
    EXPECT_THAT(explanation.str(), HasSubstr("max_attempts: fail"));
}

TEST(Satisfies, ABadTableIsAnErrorNamingTheKey) {
    try {
        ft::Satisfies("check = \"max_attempts\"\nmaximum = 3");
        FAIL() << "an unknown key was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_THAT(e.what(), HasSubstr("maximum"));
    }
    EXPECT_THROW(ft::Satisfies("check = \"no_such_check\""), std::invalid_argument);
    EXPECT_THROW(ft::Satisfies("check = "), std::invalid_argument);
}

TEST(Matchers, ARunWithoutEvidenceDoesNotPass) {
    ::testing::StringMatchResultListener explanation;
    EXPECT_FALSE(ft::NoDoubleEffects().MatchAndExplain(run_record{}, &explanation));
    EXPECT_THAT(explanation.str(), HasSubstr("insufficient_evidence"));
}

TEST(Matchers, DescribeTheCheckTheyAre) {
    EXPECT_EQ(::testing::DescribeMatcher<const run_record&>(ft::AttemptsAtMost(3)),
              "satisfies faultline check [check = \"max_attempts\" max = 3]");
}

}  // namespace

namespace {

using faultline::record::journal_record;

// A record built by hand: three attempts of two operations, the first lost to a fault.
run_record three_attempts() {
    run_record run;
    run.scenario = "payments";
    const auto attempt = [&](std::uint64_t seq, const char* method, const char* target, const char* op,
                             std::uint32_t n, std::uint16_t status) {
        journal_record r;
        r.seq = seq;
        r.method = method;
        r.target = target;
        r.operation = op;
        r.attempt = n;
        r.status = status;
        r.request_ns = static_cast<std::int64_t>(seq) * 1'000'000;
        r.finished_ns = r.request_ns + 500'000;
        run.journal.push_back(r);
    };
    attempt(1, "POST", "/payments", "k1", 1, 0);
    run.journal.back().outcome = faultline::record::wire_outcome::reset;
    run.journal.back().fault = "lost_response";
    run.journal.back().rule = "lose-first";
    attempt(2, "POST", "/payments?retry=1", "k1", 2, 201);
    attempt(3, "GET", "/payments/ch_1", "g", 1, 200);
    run.rule_firings.push_back(faultline::record::rule_firing{"lose-first", "lost_response", 1, std::nullopt});
    return run;
}

// A failing matcher prints the record as a person reads it, not as a hex dump of its bytes.
TEST(RunRecordPrinter, SummarisesAttemptsOperationsFaultsAndTheFirstOutcomes) {
    EXPECT_EQ(::testing::PrintToString(three_attempts()),
              "run \"payments\": 3 attempts, 2 operations, faults fired 1 (lose-first: lost_response x1); "
              "first attempts: #1 POST /payments: reset [lost_response], #2 POST /payments?retry=1: 201, "
              "#3 GET /payments/ch_1: 200");
}

// WireMock's verify(n, postRequestedFor(...)): attempts on the wire, by method and path (the query aside).
TEST(Requested, CountsAttemptsOnTheWireByMethodAndPath) {
    const run_record run = three_attempts();
    EXPECT_THAT(run, ft::Requested("POST", "/payments", ft::Times(2)));
    EXPECT_THAT(run, ft::Requested("GET", "/payments/ch_1", ::testing::AtLeast(1)));
    EXPECT_THAT(run, ft::Requested("DELETE", "/payments", ft::Times(0)));

    ::testing::StringMatchResultListener why;
    const auto once = ft::Requested("POST", "/payments", ft::Times(1));
    EXPECT_FALSE(::testing::ExplainMatchResult(once, run, &why));
    EXPECT_EQ(why.str(), "POST /payments was requested 2 times: #1, #2");
    EXPECT_EQ(::testing::DescribeMatcher<const run_record&>(once), "has POST /payments requested once");
}

}  // namespace
