// A scenario file in one call, judged by its own [[expect]] checks.
#include "faultline/testing/matchers.hpp"
#include "faultline/testing/scenario.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>

namespace {

namespace ft = faultline::testing;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(RunScenario, AGoodSuitePassesAllItsChecks) {
    EXPECT_THAT(ft::run_scenario_file(FAULTLINE_SUITES_DIR "/status-4xx.good.toml"), ft::PassesAllChecks());
}

TEST(RunScenario, AFailingCheckIsExplainedWithItsEvidence) {
    const auto run = ft::run_scenario_text(R"(
seed = 7
[[fault]]
kind = "status"
status = 503
[client]
preset = "naive"
clients = 1
operations = 2
[[client.request]]
method = "GET"
path = "/items/1"
[[expect]]
check = "max_attempts"
max = 1
)");
    ::testing::StringMatchResultListener explanation;
    EXPECT_FALSE(ft::PassesAllChecks().MatchAndExplain(run, &explanation));
    EXPECT_THAT(explanation.str(), HasSubstr("max_attempts: fail"));
    EXPECT_THAT(run, Not(ft::AttemptsAtMost(1)));
}

TEST(RunScenario, AScenarioThatDoesNotLoadIsAnErrorWithItsPosition) {
    try {
        ft::run_scenario_text("seed = \"seven\"\n", "typo.toml");
        FAIL() << "a bad scenario ran";
    } catch (const std::invalid_argument& e) {
        EXPECT_THAT(e.what(), HasSubstr("typo.toml:1"));
    }
    EXPECT_THROW(ft::run_scenario_file("/nonexistent/scenario.toml"), std::invalid_argument);
}

}  // namespace
