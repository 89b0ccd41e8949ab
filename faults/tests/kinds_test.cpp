// Each kind's action for a fixed configuration and pinned randomness, and each kind's bad-config
// errors (missing, wrong type, out of range, unknown key) with their file:line:column.
#include <cmath>

#include <gtest/gtest.h>

#include "faultline/core/random.hpp"
#include "test_support.hpp"

namespace faultline::faults {
namespace {

using namespace std::chrono_literals;
using testing::attempt_builder;
using testing::one_error;
using testing::one_rule;

fault_plan plan_of(const rule& r, random_source& random, const attempt_builder& attempt) {
    kind_outcome outcome = r.fault->on_attempt(attempt.build(), random);
    EXPECT_TRUE(outcome.plan.has_value()) << r.name;
    return outcome.plan.value_or(fault_plan{});
}

fault_plan plan_of(std::string_view toml, random_source& random) {
    const attempt_builder attempt;
    return plan_of(one_rule(toml), random, attempt);
}

fault_plan plan_of(std::string_view toml) {
    sequence_random random = sequence_random::of_units({0.5});
    return plan_of(toml, random);
}

std::chrono::nanoseconds delay_of(std::string_view toml, std::initializer_list<double> units) {
    sequence_random random = sequence_random::of_units(units);
    const fault_plan plan = plan_of(toml, random);
    EXPECT_EQ(plan.phase, commit_phase::before);
    return std::get<delay_action>(plan.what).wait;
}

double ms(std::chrono::nanoseconds d) { return static_cast<double>(d.count()) / 1e6; }

// ---- delay ----

TEST(delay_kind, fixed_wait) {
    EXPECT_EQ(delay_of("[[fault]]\nkind = \"delay\"\nwait = \"250ms\"\n", {0.9}), 250ms);
    EXPECT_EQ(delay_of("[[fault]]\nkind = \"delay\"\ndistribution = \"fixed\"\nwait = \"2s\"\n", {0.1}), 2s);
}

TEST(delay_kind, after_commits_first_then_waits) {
    const fault_plan plan = plan_of("[[fault]]\nkind = \"delay\"\nwait = \"3s\"\nphase = \"after\"\n");
    EXPECT_EQ(plan.phase, commit_phase::after);
    EXPECT_EQ(std::get<delay_action>(plan.what).wait, 3s);
}

TEST(delay_kind, uniform_between_min_and_max) {
    const char* toml = "[[fault]]\nkind = \"delay\"\ndistribution = \"uniform\"\nmin = \"100ms\"\nmax = \"200ms\"\n";
    EXPECT_EQ(delay_of(toml, {0.25}), 125ms);
    EXPECT_EQ(delay_of(toml, {0.0}), 100ms);
    EXPECT_EQ(delay_of(toml, {0.5}), 150ms);
}

TEST(delay_kind, normal_by_box_muller_and_clamped) {
    const char* toml = "[[fault]]\nkind = \"delay\"\ndistribution = \"normal\"\nmean = \"100ms\"\nstddev = \"10ms\"\n";
    // u1 = 0.5, u2 = 0: z = sqrt(-2 ln 0.5) = 1.17741...
    EXPECT_NEAR(ms(delay_of(toml, {0.5, 0.0})), 100.0 + 10.0 * std::sqrt(2.0 * std::log(2.0)), 1e-6);
    // u2 = 0.5: cos(pi) = -1.
    EXPECT_NEAR(ms(delay_of(toml, {0.5, 0.5})), 100.0 - 10.0 * std::sqrt(2.0 * std::log(2.0)), 1e-6);
    // A deep negative tail clamps at zero, never a negative wait.
    const char* wide = "[[fault]]\nkind = \"delay\"\ndistribution = \"normal\"\nmean = \"10ms\"\nstddev = \"100ms\"\n";
    EXPECT_EQ(delay_of(wide, {0.5, 0.5}), 0ns);
    const char* capped =
        "[[fault]]\nkind = \"delay\"\ndistribution = \"normal\"\nmean = \"100ms\"\nstddev = \"10ms\"\nmax = \"105ms\"\n";
    EXPECT_EQ(delay_of(capped, {0.5, 0.0}), 105ms);
}

TEST(delay_kind, lognormal_around_the_median_with_a_max) {
    const char* toml =
        "[[fault]]\nkind = \"delay\"\ndistribution = \"lognormal\"\nmedian = \"100ms\"\nsigma = 0.5\nmax = \"1s\"\n";
    // u2 = 0.25: cos(pi/2) = 0, so the draw is the median.
    EXPECT_NEAR(ms(delay_of(toml, {0.5, 0.25})), 100.0, 1e-6);
    EXPECT_NEAR(ms(delay_of(toml, {0.5, 0.0})), 100.0 * std::exp(0.5 * std::sqrt(2.0 * std::log(2.0))), 1e-6);
    const char* heavy =
        "[[fault]]\nkind = \"delay\"\ndistribution = \"lognormal\"\nmedian = \"100ms\"\nsigma = 10\nmax = \"1s\"\n";
    EXPECT_EQ(delay_of(heavy, {0.5, 0.0}), 1s);
}

TEST(delay_kind, bad_config) {
    EXPECT_EQ(one_error("[[fault]]\nkind = \"delay\"\n"),
              "rules.toml:1:1: fault kind \"delay\": missing required key \"wait\"");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"delay\"\nwait = 5\n"),
              "rules.toml:3:8: fault kind \"delay\": wait: expected a duration such as \"250ms\", got an integer");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"delay\"\nwait = \"5\"\n"),
              "rules.toml:3:8: fault kind \"delay\": wait: bad duration \"5\": missing unit (ns, us, ms, s, m, h)");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"delay\"\nwait = \"1s\"\nwiat = \"2s\"\n"),
              "rules.toml:4:1: fault kind \"delay\": unknown key \"wiat\"; allowed: distribution, kind, match, "
              "min_fired, name, phase, wait, when");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"delay\"\ndistribution = \"uniform\"\nmin = \"2s\"\nmax = \"1s\"\n"),
              "rules.toml:5:7: fault kind \"delay\": max: must not be less than \"min\"");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"delay\"\ndistribution = \"lognormal\"\nmedian = \"1s\"\nsigma = 20\n"
                        "max = \"5s\"\n"),
              "rules.toml:5:9: fault kind \"delay\": sigma: must be in [0, 10], got 20");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"delay\"\ndistribution = \"pareto\"\nwait = \"1s\"\n"),
              "rules.toml:3:16: fault kind \"delay\": distribution: unknown value \"pareto\"; allowed: fixed, uniform, "
              "normal, lognormal");
}

// ---- status ----

TEST(status_kind, responds_with_status_body_headers_and_retry_after_seconds) {
    const fault_plan plan = plan_of(
        "[[fault]]\nkind = \"status\"\nstatus = 429\nbody = \"slow down\"\nheaders = { \"X-Why\" = \"test\" }\n"
        "retry_after = \"2s\"\n");
    EXPECT_EQ(plan.phase, commit_phase::before);
    const auto& response = std::get<respond_action>(plan.what);
    EXPECT_EQ(response.status, 429);
    EXPECT_EQ(response.body, "slow down");
    EXPECT_EQ(response.headers, (header_list{{"X-Why", "test"}, {"Retry-After", "2"}}));
}

TEST(status_kind, defaults_to_503_without_retry_after) {
    const auto response = std::get<respond_action>(plan_of("[[fault]]\nkind = \"status\"\n").what);
    EXPECT_EQ(response.status, 503);
    EXPECT_TRUE(response.headers.empty());
    EXPECT_TRUE(response.body.empty());
}

TEST(status_kind, retry_after_as_http_date_rounds_up_to_the_second) {
    const rule r = one_rule(
        "[[fault]]\nkind = \"status\"\nretry_after = \"3s\"\nretry_after_format = \"http_date\"\nphase = \"after\"\n");
    attempt_builder attempt;
    // 1700000000 is Tue, 14 Nov 2023 22:13:20 UTC; 300 ms later rounds up to :21, plus 3 s.
    attempt.wall_now = std::chrono::system_clock::time_point{std::chrono::seconds{1'700'000'000} + 300ms};
    sequence_random random = sequence_random::of_units({0.5});
    const fault_plan plan = plan_of(r, random, attempt);
    EXPECT_EQ(plan.phase, commit_phase::after);
    EXPECT_EQ(std::get<respond_action>(plan.what).headers,
              (header_list{{"Retry-After", "Tue, 14 Nov 2023 22:13:24 GMT"}}));
}

TEST(status_kind, bad_config) {
    EXPECT_EQ(one_error("[[fault]]\nkind = \"status\"\nstatus = 700\n"),
              "rules.toml:3:10: fault kind \"status\": status: must be in [100, 599], got 700");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"status\"\nstatus = \"503\"\n"),
              "rules.toml:3:10: fault kind \"status\": status: expected an integer, got a string");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"status\"\nretry_after = \"1500ms\"\n"),
              "rules.toml:3:15: fault kind \"status\": retry_after: must be whole seconds (Retry-After carries "
              "seconds)");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"status\"\nheaders = { \"X-A\" = 1 }\n"),
              "rules.toml:3:21: fault kind \"status\": headers.X-A: expected a string, got an integer");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"status\"\nretry_after_format = \"http_date\"\n"),
              "rules.toml:3:1: fault kind \"status\": unknown key \"retry_after_format\"; allowed: body, headers, "
              "kind, match, min_fired, name, phase, retry_after, status, when");
}

// ---- reset ----

TEST(reset_kind, after_read_resets_without_commit) {
    const fault_plan plan = plan_of("[[fault]]\nkind = \"reset\"\n");
    EXPECT_EQ(plan.phase, commit_phase::before);
    EXPECT_EQ(std::get<drop_action>(plan.what).mode, drop_mode::reset);
}

TEST(reset_kind, mid_response_commits_then_resets_after_some_body_bytes) {
    const fault_plan plan = plan_of("[[fault]]\nkind = \"reset\"\nphase = \"mid_response\"\nbody_bytes = 10\n");
    EXPECT_EQ(plan.phase, commit_phase::after);
    const auto& truncate = std::get<truncate_action>(plan.what);
    EXPECT_EQ(truncate.body_bytes, 10U);
    EXPECT_TRUE(truncate.reset);
}

TEST(reset_kind, before_read_is_a_connection_verdict) {
    const rule r = one_rule("[[fault]]\nkind = \"reset\"\nphase = \"before_read\"\n");
    EXPECT_EQ(r.level, fault_level::connection);
    EXPECT_EQ(r.fault->on_connection({}), connection_verdict::reset);
}

TEST(reset_kind, bad_config) {
    EXPECT_EQ(one_error("[[fault]]\nkind = \"reset\"\nphase = \"sideways\"\n"),
              "rules.toml:3:9: fault kind \"reset\": phase: unknown value \"sideways\"; allowed: before_read, "
              "after_read, mid_response");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"reset\"\nbody_bytes = 3\n"),
              "rules.toml:3:1: fault kind \"reset\": unknown key \"body_bytes\"; allowed: kind, match, min_fired, name, "
              "phase, when");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"reset\"\nphase = \"mid_response\"\nbody_bytes = -1\n"),
              "rules.toml:4:14: fault kind \"reset\": body_bytes: must be in [0, 1099511627776], got -1");
}

// ---- close ----

TEST(close_kind, after_read_closes_without_reply) {
    const fault_plan plan = plan_of("[[fault]]\nkind = \"close\"\n");
    EXPECT_EQ(plan.phase, commit_phase::before);
    EXPECT_EQ(std::get<drop_action>(plan.what).mode, drop_mode::close);
}

TEST(close_kind, before_read_is_a_connection_verdict) {
    const rule r = one_rule("[[fault]]\nkind = \"close\"\nphase = \"before_read\"\n");
    EXPECT_EQ(r.level, fault_level::connection);
    EXPECT_EQ(r.fault->on_connection({}), connection_verdict::close);
}

TEST(close_kind, bad_config) {
    EXPECT_EQ(one_error("[[fault]]\nkind = \"close\"\nphase = \"mid_response\"\n"),
              "rules.toml:3:9: fault kind \"close\": phase: unknown value \"mid_response\"; allowed: before_read, "
              "after_read");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"close\"\nphase = 1\n"),
              "rules.toml:3:9: fault kind \"close\": phase: expected a string, got an integer");
}

// ---- refused_stream ----

TEST(refused_stream_kind, refuses_the_stream_before_the_commit) {
    const fault_plan plan = plan_of("[[fault]]\nkind = \"refused_stream\"\n");
    EXPECT_EQ(plan.phase, commit_phase::before);
    EXPECT_EQ(std::get<drop_action>(plan.what).mode, drop_mode::refuse_stream);
}

TEST(refused_stream_kind, bad_config) {
    EXPECT_EQ(one_error("[[fault]]\nkind = \"refused_stream\"\ncode = 7\n"),
              "rules.toml:3:1: fault kind \"refused_stream\": unknown key \"code\"; allowed: kind, match, min_fired, "
              "name, when");
}

// ---- goaway ----

TEST(goaway_kind, goes_away_before_the_commit_or_after_it) {
    const fault_plan before = plan_of("[[fault]]\nkind = \"goaway\"\n");
    EXPECT_EQ(before.phase, commit_phase::before);
    EXPECT_EQ(std::get<drop_action>(before.what).mode, drop_mode::go_away);
    const fault_plan after = plan_of("[[fault]]\nkind = \"goaway\"\nphase = \"after\"\n");
    EXPECT_EQ(after.phase, commit_phase::after);
    EXPECT_EQ(std::get<drop_action>(after.what).mode, drop_mode::go_away);
}

TEST(goaway_kind, bad_config) {
    EXPECT_EQ(one_error("[[fault]]\nkind = \"goaway\"\nphase = \"mid_response\"\n"),
              "rules.toml:3:9: fault kind \"goaway\": phase: unknown value \"mid_response\"; allowed: before, after");
}

// ---- grpc_status ----

TEST(grpc_status_kind, answers_a_grpc_call_trailers_only_with_its_code_message_and_pushback) {
    sequence_random random = sequence_random::of_units({0.5});
    attempt_builder call;
    call.target = "/bank.Payments/Charge";
    call.headers = {{"content-type", "application/grpc+proto"}};
    const fault_plan plan = plan_of(one_rule("[[fault]]\nkind = \"grpc_status\"\ncode = \"UNAVAILABLE\"\n"
                                             "message = \"busy, 100%\"\npushback_ms = -1\nphase = \"after\"\n"),
                                    random, call);
    EXPECT_EQ(plan.phase, commit_phase::after);
    const auto& reply = std::get<respond_action>(plan.what);
    EXPECT_EQ(reply.status, 200);
    EXPECT_TRUE(reply.body.empty());
    const header_list expected{{"content-type", "application/grpc"},
                               {"grpc-status", "14"},
                               {"grpc-message", "busy, 100%25"},
                               {"grpc-retry-pushback-ms", "-1"}};
    EXPECT_EQ(reply.headers, expected);
}

TEST(grpc_status_kind, answers_a_plain_http_request_with_the_status_the_code_maps_to) {
    sequence_random random = sequence_random::of_units({0.5});
    const attempt_builder request;
    const fault_plan plan = plan_of(
        one_rule("[[fault]]\nkind = \"grpc_status\"\ncode = \"RESOURCE_EXHAUSTED\"\npushback_ms = 1500\n"), random,
        request);
    EXPECT_EQ(plan.phase, commit_phase::before);
    const auto& reply = std::get<respond_action>(plan.what);
    EXPECT_EQ(reply.status, 429);
    const header_list expected{{"content-type", "application/json"}, {"Retry-After", "2"}};
    EXPECT_EQ(reply.headers, expected);
}

TEST(grpc_status_kind, bad_config) {
    EXPECT_EQ(one_error("[[fault]]\nkind = \"grpc_status\"\n"),
              "rules.toml:1:1: fault kind \"grpc_status\": missing required key \"code\"");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"grpc_status\"\ncode = \"UNAVAILABEL\"\n"),
              "rules.toml:3:8: fault kind \"grpc_status\": code: unknown value \"UNAVAILABEL\"; allowed: OK, CANCELLED, "
              "UNKNOWN, INVALID_ARGUMENT, DEADLINE_EXCEEDED, NOT_FOUND, ALREADY_EXISTS, PERMISSION_DENIED, "
              "RESOURCE_EXHAUSTED, FAILED_PRECONDITION, ABORTED, OUT_OF_RANGE, UNIMPLEMENTED, INTERNAL, UNAVAILABLE, "
              "DATA_LOSS, UNAUTHENTICATED");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"grpc_status\"\ncode = \"ABORTED\"\npushback_ms = -5\n"),
              "rules.toml:4:15: fault kind \"grpc_status\": pushback_ms: must be in [-1, 86400000], got -5");
}

// ---- lost_response ----

TEST(lost_response_kind, commits_then_drops) {
    const fault_plan reset = plan_of("[[fault]]\nkind = \"lost_response\"\n");
    EXPECT_EQ(reset.phase, commit_phase::after);
    EXPECT_EQ(std::get<drop_action>(reset.what).mode, drop_mode::reset);

    const fault_plan close = plan_of("[[fault]]\nkind = \"lost_response\"\nthen = \"close\"\n");
    EXPECT_EQ(close.phase, commit_phase::after);
    EXPECT_EQ(std::get<drop_action>(close.what).mode, drop_mode::close);

    const fault_plan hang = plan_of("[[fault]]\nkind = \"lost_response\"\nthen = \"hang\"\nhang_limit = \"5s\"\n");
    EXPECT_EQ(hang.phase, commit_phase::after);
    EXPECT_EQ(std::get<drop_action>(hang.what).mode, drop_mode::hang);
    EXPECT_EQ(std::get<drop_action>(hang.what).hang_limit, 5s);
}

TEST(lost_response_kind, bad_config) {
    EXPECT_EQ(one_error("[[fault]]\nkind = \"lost_response\"\nthen = \"explode\"\n"),
              "rules.toml:3:8: fault kind \"lost_response\": then: unknown value \"explode\"; allowed: reset, close, "
              "hang");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"lost_response\"\nhang_limit = \"5s\"\n"),
              "rules.toml:3:1: fault kind \"lost_response\": unknown key \"hang_limit\"; allowed: kind, match, "
              "min_fired, name, then, when");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"lost_response\"\nthen = \"hang\"\nhang_limit = \"0s\"\n"),
              "rules.toml:4:14: fault kind \"lost_response\": hang_limit: must be longer than 0, got \"0s\"");
}

// ---- hang ----

TEST(hang_kind, never_answers_until_the_limit) {
    const fault_plan plan = plan_of("[[fault]]\nkind = \"hang\"\nlimit = \"10s\"\n");
    EXPECT_EQ(plan.phase, commit_phase::before);
    EXPECT_EQ(std::get<drop_action>(plan.what).mode, drop_mode::hang);
    EXPECT_EQ(std::get<drop_action>(plan.what).hang_limit, 10s);
    EXPECT_EQ(std::get<drop_action>(plan_of("[[fault]]\nkind = \"hang\"\n").what).hang_limit, 30s);
}

TEST(hang_kind, bad_config) {
    EXPECT_EQ(one_error("[[fault]]\nkind = \"hang\"\nlimit = \"abc\"\n"),
              "rules.toml:3:9: fault kind \"hang\": limit: bad duration \"abc\": expected digits then a unit (ns, us, "
              "ms, s, m, h)");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"hang\"\nlimit = \"-1s\"\n"),
              "rules.toml:3:9: fault kind \"hang\": limit: bad duration \"-1s\": expected digits then a unit (ns, us, "
              "ms, s, m, h)");
}

// ---- slow_body ----

TEST(slow_body_kind, dribbles_the_committed_response) {
    const fault_plan plan = plan_of("[[fault]]\nkind = \"slow_body\"\nbytes_per_second = 100\nchunk_bytes = 10\n");
    EXPECT_EQ(plan.phase, commit_phase::after);
    EXPECT_EQ(std::get<slow_body_action>(plan.what).bytes_per_second, 100U);
    EXPECT_EQ(std::get<slow_body_action>(plan.what).chunk_bytes, 10U);
}

TEST(slow_body_kind, bad_config) {
    EXPECT_EQ(one_error("[[fault]]\nkind = \"slow_body\"\n"),
              "rules.toml:1:1: fault kind \"slow_body\": missing required key \"bytes_per_second\"");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"slow_body\"\nbytes_per_second = 0\n"),
              "rules.toml:3:20: fault kind \"slow_body\": bytes_per_second: must be in [1, 1099511627776], got 0");
}

// ---- truncate ----

TEST(truncate_kind, sends_fewer_body_bytes_than_promised) {
    const fault_plan plan = plan_of("[[fault]]\nkind = \"truncate\"\nbody_bytes = 5\n");
    EXPECT_EQ(plan.phase, commit_phase::after);
    EXPECT_EQ(std::get<truncate_action>(plan.what).body_bytes, 5U);
    EXPECT_FALSE(std::get<truncate_action>(plan.what).reset);
}

TEST(truncate_kind, bad_config) {
    EXPECT_EQ(one_error("[[fault]]\nkind = \"truncate\"\nbody_bytes = 1.5\n"),
              "rules.toml:3:14: fault kind \"truncate\": body_bytes: expected an integer, got a float");
}

// ---- tls_truncate ----

TEST(tls_truncate_kind, cuts_a_body_framed_by_the_connection_after_the_commit) {
    const fault_plan plan = plan_of("[[fault]]\nkind = \"tls_truncate\"\nbody_bytes = 7\n");
    EXPECT_EQ(plan.phase, commit_phase::after);
    const auto& cut = std::get<truncate_action>(plan.what);
    EXPECT_EQ(cut.body_bytes, 7U);
    EXPECT_TRUE(cut.framed_by_close);
    EXPECT_FALSE(cut.reset);
    EXPECT_FALSE(std::get<truncate_action>(plan_of("[[fault]]\nkind = \"truncate\"\n").what).framed_by_close);
}

TEST(tls_truncate_kind, bad_config) {
    EXPECT_EQ(one_error("[[fault]]\nkind = \"tls_truncate\"\nbody_bytes = -1\n"),
              "rules.toml:3:14: fault kind \"tls_truncate\": body_bytes: must be in [0, 1099511627776], got -1");
}

// ---- malformed ----

TEST(malformed_kind, sends_garbage_instead_of_a_status_line) {
    const fault_plan plan = plan_of("[[fault]]\nkind = \"malformed\"\nbytes = \"HTTP/9 ???\"\n");
    EXPECT_EQ(plan.phase, commit_phase::before);
    EXPECT_EQ(std::get<malformed_action>(plan.what).bytes, "HTTP/9 ???");
    const fault_plan after = plan_of("[[fault]]\nkind = \"malformed\"\nphase = \"after\"\n");
    EXPECT_EQ(after.phase, commit_phase::after);
    EXPECT_FALSE(std::get<malformed_action>(after.what).bytes.empty());
}

TEST(malformed_kind, bad_config) {
    EXPECT_EQ(one_error("[[fault]]\nkind = \"malformed\"\nbytes = \"\"\n"),
              "rules.toml:3:9: fault kind \"malformed\": bytes: must not be empty");
}

// ---- refuse ----

TEST(refuse_kind, resets_connections_on_accept) {
    const rule r = one_rule("[[fault]]\nkind = \"refuse\"\n[fault.when]\nfrom = \"1s\"\nfor = \"2s\"\n");
    EXPECT_EQ(r.level, fault_level::connection);
    EXPECT_EQ(r.fault->on_connection({}), connection_verdict::reset);
}

TEST(refuse_kind, reset_on_accept_is_the_default_how) {
    const rule r = one_rule("[[fault]]\nkind = \"refuse\"\nhow = \"reset_on_accept\"\n[fault.when]\nfirst = 1\n");
    EXPECT_EQ(r.level, fault_level::connection);
    EXPECT_EQ(r.fault->on_connection({}), connection_verdict::reset);
    EXPECT_EQ(r.fault->on_listener(), std::nullopt);
}

TEST(refuse_kind, closed_port_and_unanswered_syn_act_on_the_listener) {
    const rule closed = one_rule("[[fault]]\nkind = \"refuse\"\nhow = \"closed_port\"\n[fault.when]\nfrom = \"1s\"\n"
                                 "for = \"2s\"\n");
    EXPECT_EQ(closed.level, fault_level::listener);
    EXPECT_EQ(closed.fault->on_listener(), listener_verdict::closed_port);
    const rule unanswered = one_rule("[[fault]]\nkind = \"refuse\"\nhow = \"unanswered_syn\"\nmin_fired = 1\n");
    EXPECT_EQ(unanswered.level, fault_level::listener);
    EXPECT_EQ(unanswered.fault->on_listener(), listener_verdict::unanswered_syn);
}

TEST(refuse_kind, listener_level_takes_time_triggers_only) {
    for (const char* key : {"probability = 0.5", "first = 1", "every = 2", "attempts = [1]", "barrier = 2"}) {
        const std::string toml = std::string{"[[fault]]\nkind = \"refuse\"\nhow = \"closed_port\"\n[fault.when]\n"} +
                                 key + "\n";
        const std::string name = std::string{key}.substr(0, std::string{key}.find(' '));
        EXPECT_EQ(one_error(toml), "rules.toml:5:" + std::to_string(name.size() + 4) + ": [fault.when]: " + name +
                                       ": a listener-level fault (\"refuse\" with how = \"closed_port\" here) takes "
                                       "time triggers only (from, for): it acts on the listening port for a window, "
                                       "with no connection or attempt to count or draw for")
            << key;
    }
    EXPECT_EQ(one_error("[[fault]]\nkind = \"refuse\"\nhow = \"unanswered_syn\"\n[fault.match]\npath = \"/x\"\n"),
              "rules.toml:4:1: fault rule: match: a listener-level fault (\"refuse\" with how = \"unanswered_syn\" "
              "here) acts on the listening port and cannot match on a request");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"refuse\"\nhow = \"unanswered_syn\"\nmin_fired = 2\n"),
              "rules.toml:4:13: fault rule: min_fired: a listener-level fault (\"refuse\" with how = "
              "\"unanswered_syn\" here) fires once, when its window begins (the connects refused or left unanswered "
              "in it never reach the server to be counted), got 2");
}

TEST(tls_kind, every_how_is_a_connection_verdict) {
    const std::pair<const char*, connection_verdict> cases[] = {
        {"abort_handshake", connection_verdict::tls_abort_handshake},
        {"stall_handshake", connection_verdict::tls_stall_handshake},
        {"expired_certificate", connection_verdict::tls_expired_certificate},
        {"wrong_name", connection_verdict::tls_wrong_name},
        {"untrusted_issuer", connection_verdict::tls_untrusted_issuer},
    };
    for (const auto& [how, verdict] : cases) {
        const rule r = one_rule(std::string{"[[fault]]\nkind = \"tls\"\nhow = \""} + how + "\"\n");
        EXPECT_EQ(r.level, fault_level::connection) << how;
        EXPECT_EQ(r.fault->on_connection({}), verdict) << how;
    }
}

TEST(tls_kind, bad_config) {
    EXPECT_EQ(one_error("[[fault]]\nkind = \"tls\"\n"),
              "rules.toml:1:1: fault kind \"tls\": missing required key \"how\"");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"tls\"\nhow = \"expired\"\n"),
              "rules.toml:3:7: fault kind \"tls\": how: unknown value \"expired\"; allowed: abort_handshake, "
              "stall_handshake, expired_certificate, wrong_name, untrusted_issuer");
}

TEST(refuse_kind, bad_config) {
    EXPECT_EQ(one_error("[[fault]]\nkind = \"refuse\"\nmode = \"drop\"\n"),
              "rules.toml:3:1: fault kind \"refuse\": unknown key \"mode\"; allowed: how, kind, match, min_fired, "
              "name, when");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"refuse\"\nhow = \"blackhole\"\n"),
              "rules.toml:3:7: fault kind \"refuse\": how: unknown value \"blackhole\"; allowed: reset_on_accept, "
              "closed_port, unanswered_syn");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"refuse\"\nhow = 1\n"),
              "rules.toml:3:7: fault kind \"refuse\": how: expected a string, got an integer");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"refuse\"\n[fault.match]\npath = \"/x\"\n"),
              "rules.toml:3:1: fault rule: match: a connection-level fault (\"refuse\" here) acts before the request "
              "is read and cannot match on it");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"refuse\"\n[fault.when]\nattempts = [1]\n"),
              "rules.toml:3:1: [fault.when]: attempts: a connection-level fault (\"refuse\" here) has no attempts to "
              "count");
}

// ---- overload ----

TEST(overload_kind, admits_within_in_flight_capacity_and_rejects_beyond) {
    const rule r = one_rule("[[fault]]\nkind = \"overload\"\nmax_in_flight = 1\nretry_after = \"2s\"\n");
    const attempt_builder attempt;
    sequence_random random = sequence_random::of_units({0.5});
    kind_outcome first = r.fault->on_attempt(attempt.build(), random);
    EXPECT_FALSE(first.plan);
    EXPECT_TRUE(first.hold.holds());

    const kind_outcome second = r.fault->on_attempt(attempt.build(), random);
    ASSERT_TRUE(second.plan);
    EXPECT_EQ(second.plan->phase, commit_phase::before);
    const auto& response = std::get<respond_action>(second.plan->what);
    EXPECT_EQ(response.status, 503);
    EXPECT_EQ(response.headers, (header_list{{"Retry-After", "2"}}));
    EXPECT_FALSE(second.hold.holds());

    first = kind_outcome{};  // the first attempt ends and frees its slot
    EXPECT_FALSE(r.fault->on_attempt(attempt.build(), random).plan);
}

TEST(overload_kind, bad_config) {
    EXPECT_EQ(one_error("[[fault]]\nkind = \"overload\"\n"),
              "rules.toml:1:1: fault kind \"overload\": max_in_flight: an overload needs \"max_in_flight\", \"rate\", "
              "or both");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"overload\"\nrate = 0\n"),
              "rules.toml:3:8: fault kind \"overload\": rate: must be in [1e-06, 1000000000], got 0");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"overload\"\nrate = 10\nexcess = \"drop\"\n"),
              "rules.toml:4:10: fault kind \"overload\": excess: unknown value \"drop\"; allowed: reject, queue");
    EXPECT_EQ(one_error("[[fault]]\nkind = \"overload\"\nrate = 10\nmax_queue_wait = \"1s\"\n"),
              "rules.toml:4:1: fault kind \"overload\": unknown key \"max_queue_wait\"; allowed: burst, excess, kind, "
              "match, max_in_flight, min_fired, name, rate, retry_after, status, when");
}

}  // namespace
}  // namespace faultline::faults
