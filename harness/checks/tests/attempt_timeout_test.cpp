#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "check_test_support.hpp"

namespace faultline::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Operation "a" hangs once for `held_ms` before the client leaves, then succeeds.
record::run_record hung_once(double held_ms) {
    test::journal_builder j;
    j.op("a", "GET", "/items/a").lost(record::wire_outcome::hung, held_ms).fault("hang").wait(50).attempt(200);
    return j.run();
}

TEST(attempt_timeout, a_client_that_waits_out_the_hang_fails_with_the_held_attempt) {
    const record::verdict v = test::run_check("check = \"attempt_timeout\"\nmax = \"500ms\"\n", hung_once(5000));
    EXPECT_FALSE(v.passed);
    EXPECT_FALSE(v.insufficient_evidence);
    EXPECT_EQ(v.summary,
              "1 of 1 unanswered attempts were held past max 500.0ms (tolerance 100.0ms); longest 5000.0ms");
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_EQ(v.evidence[0].operation, "a");
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(1u));
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("held 5000.0ms > the attempt timeout 500.0ms + 100.0ms"));
}

TEST(attempt_timeout, a_client_that_gives_up_at_its_timeout_passes) {
    const record::verdict v = test::run_check("check = \"attempt_timeout\"\nmax = \"500ms\"\n", hung_once(560));
    EXPECT_TRUE(v.passed) << v.summary;
}

// The server ran late for 400 ms when the client left: held 900 ms against 500 + 100 may be its own
// lateness, so it is not judged (and nothing else was); a 200 ms spell cannot explain 300 ms.
TEST(attempt_timeout, held_too_long_by_no_more_than_the_server_ran_late_is_not_judged) {
    record::run_record run = hung_once(900);
    test::add_server_late(run, run.journal[0].finished_ns - 400'000'000, 400'000'000);
    const record::verdict excused = test::run_check("check = \"attempt_timeout\"\nmax = \"500ms\"\n", run);
    EXPECT_EQ(excused.outcome(), record::verdict_outcome::insufficient_evidence) << excused.summary;
    EXPECT_THAT(excused.summary, HasSubstr("1 not judged: held too long by no more than the server itself ran late "
                                           "when the client left (up to 400.0ms, server_late)"));

    run.server_events[0].at_ns = run.journal[0].finished_ns - 200'000'000;
    run.server_events[0].late_ns = 200'000'000;
    EXPECT_FALSE(test::run_check("check = \"attempt_timeout\"\nmax = \"500ms\"\n", run).passed);
}

TEST(attempt_timeout, the_declared_timeout_is_used_without_max) {
    record::run_record run = hung_once(900);
    run.declared.attempt_timeout = std::chrono::milliseconds{500};
    const record::verdict v = test::run_check("check = \"attempt_timeout\"\n", run);
    EXPECT_FALSE(v.passed);
    EXPECT_THAT(v.summary, HasSubstr("the declared attempt timeout 500.0ms"));
}

TEST(attempt_timeout, nothing_to_judge_is_insufficient_evidence_never_a_pass) {
    const record::verdict no_limit = test::run_check("check = \"attempt_timeout\"\n", hung_once(900));
    EXPECT_TRUE(no_limit.insufficient_evidence);
    EXPECT_FALSE(no_limit.passed);
    test::journal_builder answered;
    answered.op("a").attempt(200, 3000);  // slow but answered: no hang to judge
    const record::verdict no_hang = test::run_check("check = \"attempt_timeout\"\nmax = \"1s\"\n", answered.run());
    EXPECT_TRUE(no_hang.insufficient_evidence);
    EXPECT_THAT(no_hang.summary, HasSubstr("no attempt was left unanswered"));
}

}  // namespace
}  // namespace faultline::checks
