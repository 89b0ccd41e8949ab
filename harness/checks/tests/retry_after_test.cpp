#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "check_test_support.hpp"

namespace faultline::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(retry_after, a_retry_sooner_than_asked_is_named) {
    test::journal_builder j;
    j.op("a").attempt(503).retry_after(100).wait(10).attempt(200);
    const record::verdict v = test::run_check(R"(check = "retry_after")", j.run());
    EXPECT_FALSE(v.passed);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_EQ(v.evidence[0].operation, "a");
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(1u, 2u));
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("waited 10.0ms of the 100 ms Retry-After asked"));
    EXPECT_EQ(v.summary, "1 responses carried Retry-After; 1 retries came too soon, 0 went on past the deadline (tolerance 10.0ms)");
}

// A loaded machine: the server's write handler ran 11 ms after the 503's first byte went out (2.2 ms
// after the request), so its end was stamped 13.2 ms after the request. curl waited 1001 ms after that
// byte, 989.9 ms after the stamp, so it did not come too soon. One that came 20 ms early still fails.
TEST(retry_after, too_soon_is_counted_from_the_responses_first_byte) {
    test::journal_builder late_stamp;
    late_stamp.op("a").attempt(503, 13.2).replied_after(2.2).retry_after(1000).wait(989.9).attempt(200);
    EXPECT_TRUE(test::run_check(R"(check = "retry_after")", late_stamp.run()).passed);

    test::journal_builder early;
    early.op("a").attempt(503, 13.2).replied_after(2.2).retry_after(1000).wait(966.8).attempt(200);
    const record::verdict v = test::run_check(R"(check = "retry_after")", early.run());
    EXPECT_FALSE(v.passed);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_THAT(v.evidence[0].detail,
                HasSubstr("waited 966.8ms of the 1000 ms Retry-After asked:"));
}

// The naive loop (it retries at once) behind a 3 s barrier: the server held its 503 for 3 s, then
// the client came back 5 ms after the reply's first byte. From the request that is 3005 ms, past the
// 1000 ms asked; from the reply, the only moment the client could have learnt of the wait, 5 ms. A
// journal without t_response can only count from the request, and passes it.
TEST(retry_after, a_hold_before_the_reply_is_not_the_clients_wait) {
    test::journal_builder held;
    held.op("a").attempt(503, 3000.5).replied_after(3000).retry_after(1000).wait(4.5).attempt(200);
    const record::verdict v = test::run_check(R"(check = "retry_after")", held.run());
    EXPECT_FALSE(v.passed);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("waited 4.5ms of the 1000 ms Retry-After asked:"));

    record::run_record unstamped = held.run();
    unstamped.journal[0].response_ns = -1;
    EXPECT_TRUE(test::run_check(R"(check = "retry_after")", unstamped).passed);

    test::journal_builder waited;
    waited.op("a").attempt(503, 3000.5).replied_after(3000).retry_after(1000).wait(1000).attempt(200);
    EXPECT_TRUE(test::run_check(R"(check = "retry_after")", waited.run()).passed);
}

TEST(retry_after, a_retry_after_past_the_deadline_must_end_the_operation) {
    test::journal_builder j;
    j.op("b").attempt(503).deadline(200).retry_after(500).wait(500).attempt(200);
    const record::verdict v = test::run_check(R"(check = "retry_after")", j.run());
    EXPECT_FALSE(v.passed);
    ASSERT_EQ(v.evidence.size(), 1u);
    EXPECT_EQ(v.evidence[0].operation, "b");
    EXPECT_THAT(v.evidence[0].seqs, ElementsAre(1u, 2u));
    EXPECT_THAT(v.evidence[0].detail, HasSubstr("Retry-After 500 ms reaches past the deadline (199.0ms left), yet the operation went on"));
}

TEST(retry_after, a_client_that_waits_and_gives_up_in_time_passes) {
    test::journal_builder j;
    j.op("a").attempt(429).retry_after(100).wait(95).attempt(200);
    j.op("b").at(3).attempt(503).deadline(200).retry_after(500);
    const record::verdict v = test::run_check(R"(check = "retry_after")", j.run());
    EXPECT_TRUE(v.passed) << v.summary;
    EXPECT_THAT(v.summary, HasSubstr("2 responses carried Retry-After"));
}

// The rule that sends Retry-After never fired: the client was never asked to wait, which is no pass.
TEST(retry_after, no_response_with_retry_after_is_insufficient_evidence) {
    test::journal_builder j;
    j.op("a").attempt(503).wait(1).attempt(200);
    const record::verdict v = test::run_check(R"(check = "retry_after")", j.run());
    EXPECT_EQ(v.outcome(), record::verdict_outcome::insufficient_evidence);
    EXPECT_THAT(v.summary, HasSubstr("0 responses carried Retry-After"));
}

// The server itself ran late around the response (its worker could not run for 1.2 s on a loaded
// machine, so its stamps are that late): a retry too soon by less than that is not judged; one too
// soon by more than the spell still fails.
TEST(retry_after, a_retry_too_soon_by_no_more_than_the_server_ran_late_is_not_judged) {
    test::journal_builder j;
    j.op("a").attempt(503).retry_after(1000).wait(780).attempt(503).retry_after(1000).wait(1001).attempt(200);
    record::run_record run = j.run();
    test::add_server_late(run, run.journal[0].request_ns - 1'200'000'000, 1'224'000'000);
    const record::verdict excused = test::run_check(R"(check = "retry_after")", run);
    EXPECT_TRUE(excused.passed) << excused.summary;
    EXPECT_THAT(excused.summary, HasSubstr("0 retries came too soon"));
    EXPECT_THAT(excused.summary, HasSubstr("1 not judged: they came too soon by no more than the server itself ran "
                                           "late around the response (up to 1224.0ms, server_late)"));

    run.server_events[0].late_ns = 100'000'000;  // 100 ms late cannot explain 220 ms too soon
    const record::verdict caught = test::run_check(R"(check = "retry_after")", run);
    EXPECT_FALSE(caught.passed);
    EXPECT_THAT(caught.summary, HasSubstr("1 retries came too soon"));

    run.server_events[0].at_ns = run.journal[1].request_ns;  // a spell after the response: no excuse
    run.server_events[0].late_ns = 1'224'000'000;
    EXPECT_FALSE(test::run_check(R"(check = "retry_after")", run).passed);
}

// Every retry after a Retry-After fell in a spell of the server's lateness: nothing was judged.
TEST(retry_after, nothing_judged_outside_the_servers_late_spells_is_insufficient_evidence) {
    test::journal_builder j;
    j.op("a").attempt(503).retry_after(1000).wait(780).attempt(200);
    record::run_record run = j.run();
    test::add_server_late(run, run.journal[0].request_ns - 500'000'000, 600'000'000);
    const record::verdict v = test::run_check(R"(check = "retry_after")", run);
    EXPECT_EQ(v.outcome(), record::verdict_outcome::insufficient_evidence) << v.summary;
}

// The rotating-key loop under load: its first attempt's own 1 s timeout ran out before the server
// wrote the 503 (it read the request 250 ms after accepting), so the client never saw the
// Retry-After and retried 122 ms later after its own backoff. The server journals such a reply as
// client_gone (the client had closed): the retry after it is not judged. The same wait after a 503
// the client read still fails; when the only Retry-After went unread, nothing was asked.
TEST(retry_after, a_retry_after_the_client_never_read_is_not_judged) {
    test::journal_builder j;
    j.op("a").attempt(503).retry_after(1000).wait(122).attempt(503).retry_after(1000).wait(1001).attempt(200);
    record::run_record run = j.run();
    const record::verdict read = test::run_check(R"(check = "retry_after")", run);
    EXPECT_FALSE(read.passed);

    run.journal[0].outcome = record::wire_outcome::client_gone;
    const record::verdict unread = test::run_check(R"(check = "retry_after")", run);
    EXPECT_TRUE(unread.passed) << unread.summary;
    EXPECT_EQ(unread.summary, "1 responses carried Retry-After; 0 retries came too soon, 0 went on past the deadline "
                              "(tolerance 10.0ms); 1 not judged: the client had gone before the reply was written "
                              "(client_gone), so it never read the Retry-After");

    test::journal_builder only_unread;
    only_unread.op("a").attempt(503).retry_after(1000).wait(122).attempt(200);
    record::run_record lone = only_unread.run();
    lone.journal[0].outcome = record::wire_outcome::client_gone;
    EXPECT_EQ(test::run_check(R"(check = "retry_after")", lone).outcome(), record::verdict_outcome::insufficient_evidence);
}

TEST(retry_after, bad_config) {
    const auto errors = test::parse_errors("check = \"retry_after\"\ntolerance = \"soon\"\nmax = 1\n");
    ASSERT_EQ(errors.size(), 2u);
    EXPECT_THAT(errors[0].message, HasSubstr("tolerance: bad duration \"soon\""));
    EXPECT_THAT(errors[1].message, HasSubstr("unknown key \"max\"; allowed: check, expect_failure, failures_only, tolerance"));
}

}  // namespace
}  // namespace faultline::checks
