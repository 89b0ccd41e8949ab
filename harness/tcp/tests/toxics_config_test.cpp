// The toxics file (every key strict, errors at file:line:column), the exact list of registered toxics,
// each toxic's effect on a plan with pinned randomness, and the engine's seeded per-connection
// decisions (toxicity 0 and 1, windows, first/every, the same seed giving the same decisions).
#include "faultline/tcp/toxics_config.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace faultline::tcp {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;

toxic_set parsed(std::string_view text) {
    auto result = parse_toxics(text, "toxics.toml");
    EXPECT_TRUE(result.ok()) << (result.errors.empty() ? "" : result.errors.front().to_string());
    return result.set ? std::move(*result.set) : toxic_set{};
}

// Every error of a bad file, as printed.
std::vector<std::string> errors_of(std::string_view text) {
    std::vector<std::string> out;
    for (const auto& e : parse_toxics(text, "toxics.toml").errors) out.push_back(e.to_string());
    return out;
}

TEST(toxics_registry, lists_exactly_the_toxics) {
    EXPECT_THAT(toxic_registry::instance().names(),
                ElementsAre("bandwidth", "latency", "limit_data", "refused", "reset_peer", "slicer", "timeout"));
}

TEST(toxics_config, reads_the_engine_keys_and_names_toxics_by_position) {
    const auto set = parsed(R"(
[[toxic]]
kind = "latency"
latency = "100ms"

[[toxic]]
kind = "refused"
name = "first-ten"
toxicity = 0.5
from = "1s"
for = "2s"
first = 10
every = 2
)");
    ASSERT_EQ(set.toxics.size(), 2U);
    EXPECT_EQ(set.toxics[0].name, "latency-1");
    EXPECT_EQ(set.toxics[0].stream, stream_direction::downstream);
    EXPECT_EQ(set.toxics[0].toxicity, 1.0);
    const auto& r = set.toxics[1];
    EXPECT_EQ(r.name, "first-ten");
    EXPECT_FALSE(r.stream);
    EXPECT_EQ(r.toxicity, 0.5);
    EXPECT_EQ(r.from, 1s);
    EXPECT_EQ(r.for_duration, 2s);
    EXPECT_EQ(r.first, 10U);
    EXPECT_EQ(r.every, 2U);
}

TEST(toxics_config, an_empty_file_is_no_toxics) { EXPECT_TRUE(parsed("").toxics.empty()); }

TEST(toxics_config, bad_files_are_errors_at_the_key) {
    EXPECT_THAT(errors_of("[[toxic]]\nkind = \"latency\"\nlatncy = \"1ms\"\n"),
                ElementsAre("toxics.toml:1:1: [[toxic]] \"latency-1\": missing required key \"latency\"",
                            "toxics.toml:3:1: [[toxic]] \"latency-1\": unknown key \"latncy\"; allowed: every, first, "
                            "for, from, jitter, kind, latency, name, stream, toxicity"));
    EXPECT_THAT(errors_of("[[toxic]]\nkind = \"bandwidth\"\nrate = \"fast\"\n"),
                ElementsAre("toxics.toml:3:8: [[toxic]] \"bandwidth-1\": rate: expected an integer, got a string"));
    EXPECT_THAT(errors_of("[[toxic]]\nkind = \"latency\"\nlatency = \"1ms\"\ntoxicity = 1.5\n"),
                ElementsAre("toxics.toml:4:12: [[toxic]] \"latency-1\": toxicity: must be in [0, 1], got 1.5"));
    EXPECT_THAT(errors_of("[[toxic]]\nkind = \"latency\"\nlatency = \"1ms\"\nstream = \"sideways\"\n"),
                ElementsAre("toxics.toml:4:10: [[toxic]] \"latency-1\": stream: unknown value \"sideways\"; "
                            "allowed: upstream, downstream"));
    EXPECT_THAT(errors_of("[[toxic]]\nkind = \"refused\"\nstream = \"upstream\"\n"),
                ElementsAre("toxics.toml:3:10: [[toxic]] \"refused-1\": stream: \"refused\" acts on the whole "
                            "connection, not on one stream"));
    EXPECT_THAT(errors_of("[[toxic]]\nkind = \"slicer\"\naverage_size = 4\nsize_variation = 4\n"),
                ElementsAre("toxics.toml:4:18: [[toxic]] \"slicer-1\": size_variation: must be less than "
                            "average_size = 4, got 4"));
    EXPECT_THAT(errors_of("[[toxic]]\nkind = \"limit_data\"\nbytes = -1\n"),
                ElementsAre(::testing::StartsWith("toxics.toml:3:9: [[toxic]] \"limit_data-1\": bytes: must be in")));
    EXPECT_THAT(errors_of("[[toxic]]\nkind = \"timeout\"\ntimeout = \"5\"\n"),
                ElementsAre(::testing::StartsWith("toxics.toml:3:11: [[toxic]] \"timeout-1\": timeout: ")));
    EXPECT_THAT(errors_of("[[toxic]]\nkind = \"poison\"\n"),
                ElementsAre(::testing::StartsWith("toxics.toml:2:8: [[toxic]]: kind: unknown value \"poison\"; "
                                                  "allowed: bandwidth, latency,")));
    EXPECT_THAT(errors_of("[[toxic]]\nkind = \"refused\"\nname = \"a\"\n[[toxic]]\nkind = \"refused\"\nname = \"a\"\n"),
                ElementsAre("toxics.toml:4:1: [[toxic]]: duplicate name \"a\" (first at toxics.toml:1:1)"));
    EXPECT_THAT(errors_of("[toxics]\n"),
                ElementsAre("toxics.toml:1:2: toxics file: unknown key \"toxics\"; allowed: toxic"));
    EXPECT_THAT(errors_of("[[toxic]\n"), ElementsAre(::testing::StartsWith("toxics.toml:1:")));
}

// A toxic's effect on one chunk of `n` bytes, `forwarded` bytes into its stream.
chunk_plan plan_of(const configured_toxic& t, std::size_t n, std::uint64_t forwarded, random_source& random) {
    chunk_plan plan;
    plan.forward = n;
    t.behaviour->on_chunk(plan, stream_state{forwarded}, random);
    return plan;
}

TEST(toxics, latency_holds_each_chunk_latency_plus_the_jitter_draw) {
    const auto set = parsed("[[toxic]]\nkind = \"latency\"\nlatency = \"100ms\"\njitter = \"10ms\"\n");
    auto random = sequence_random::of_units({0.0, 0.5, 0.75});
    EXPECT_EQ(plan_of(set.toxics[0], 10, 0, random).delay, 90ms);
    EXPECT_EQ(plan_of(set.toxics[0], 10, 0, random).delay, 100ms);
    EXPECT_EQ(plan_of(set.toxics[0], 10, 0, random).delay, 105ms);
    EXPECT_EQ(plan_of(set.toxics[0], 10, 0, random).forward, 10U);
}

TEST(toxics, limit_data_forwards_up_to_the_limit_then_ends_the_connection) {
    const auto set = parsed("[[toxic]]\nkind = \"limit_data\"\nbytes = 100\nthen = \"reset\"\n");
    sequence_random random{{0}};
    const auto under = plan_of(set.toxics[0], 60, 0, random);
    EXPECT_EQ(under.forward, 60U);
    EXPECT_FALSE(under.end);
    const auto reaching = plan_of(set.toxics[0], 60, 60, random);
    EXPECT_EQ(reaching.forward, 40U);
    EXPECT_EQ(reaching.end, link_end::reset);
    EXPECT_EQ(reaching.end_after, 0ns);
}

TEST(toxics, reset_peer_drops_the_first_chunk_and_resets_after_its_timeout) {
    const auto set = parsed("[[toxic]]\nkind = \"reset_peer\"\ntimeout = \"250ms\"\n");
    sequence_random random{{0}};
    const auto plan = plan_of(set.toxics[0], 60, 0, random);
    EXPECT_EQ(plan.forward, 0U);
    EXPECT_EQ(plan.end, link_end::reset);
    EXPECT_EQ(plan.end_after, 250ms);
}

TEST(toxics, timeout_is_a_black_hole_with_a_lifetime) {
    const auto set = parsed("[[toxic]]\nkind = \"timeout\"\ntimeout = \"3s\"\n");
    sequence_random random{{0}};
    EXPECT_EQ(plan_of(set.toxics[0], 60, 0, random).forward, 0U);
    EXPECT_EQ(set.toxics[0].behaviour->lifetime(), 3s);
    EXPECT_FALSE(set.toxics[0].behaviour->passes_eof());
}

TEST(toxics, slicer_pieces_are_the_average_plus_the_variation_draw_with_the_delay_between) {
    const auto set = parsed("[[toxic]]\nkind = \"slicer\"\naverage_size = 10\nsize_variation = 3\ndelay = \"2ms\"\n");
    const toxic& slicer = *set.toxics[0].behaviour;
    // uniform_below(7) of these words: 0 -> 7 bytes; 6 -> 13 bytes.
    sequence_random random{{0, 6}};
    EXPECT_EQ(slicer.piece_limit(random), 7U);
    EXPECT_EQ(slicer.piece_limit(random), 13U);
    EXPECT_EQ(slicer.piece_wait(7, true), 0ns);
    EXPECT_EQ(slicer.piece_wait(7, false), 2ms);
}

TEST(toxics, bandwidth_pays_for_each_piece_at_the_rate) {
    const auto set = parsed("[[toxic]]\nkind = \"bandwidth\"\nrate = 1000\n");
    const toxic& bandwidth = *set.toxics[0].behaviour;
    sequence_random random{{0}};
    EXPECT_EQ(bandwidth.piece_limit(random), 50U);  // 1/20 s worth
    EXPECT_EQ(bandwidth.piece_wait(50, true), 50ms);
    EXPECT_EQ(bandwidth.piece_wait(1, false), 1ms);
}

TEST(toxics, refused_ends_the_connection_on_accept) {
    const auto set = parsed("[[toxic]]\nkind = \"refused\"\n[[toxic]]\nkind = \"refused\"\nthen = \"close\"\n");
    EXPECT_EQ(set.toxics[0].behaviour->on_accept(), link_end::reset);
    EXPECT_EQ(set.toxics[1].behaviour->on_accept(), link_end::close);
}

std::vector<bool> decisions(const configured_toxic& t, std::uint64_t seed, std::uint64_t connections,
                            std::chrono::nanoseconds at = 0ns) {
    std::vector<bool> out;
    for (std::uint64_t n = 1; n <= connections; ++n) out.push_back(toxic_applies(t, seed, n, at));
    return out;
}

TEST(toxic_decisions, toxicity_zero_never_and_one_always) {
    const auto set = parsed("[[toxic]]\nkind = \"refused\"\ntoxicity = 0.0\n[[toxic]]\nkind = \"refused\"\n");
    EXPECT_EQ(decisions(set.toxics[0], 7, 200), std::vector<bool>(200, false));
    EXPECT_EQ(decisions(set.toxics[1], 7, 200), std::vector<bool>(200, true));
}

TEST(toxic_decisions, the_same_seed_gives_the_same_connections_and_another_seed_others) {
    const auto set = parsed("[[toxic]]\nkind = \"refused\"\ntoxicity = 0.5\n");
    const auto first = decisions(set.toxics[0], 42, 400);
    EXPECT_EQ(decisions(set.toxics[0], 42, 400), first);
    EXPECT_NE(decisions(set.toxics[0], 43, 400), first);
    const auto hit = std::count(first.begin(), first.end(), true);
    EXPECT_GT(hit, 150);  // about half of 400: far outside these bounds only if the roll were broken
    EXPECT_LT(hit, 250);
    // A connection's decision does not depend on the others: n = 17 alone decides the same.
    EXPECT_EQ(toxic_applies(set.toxics[0], 42, 17, 0ns), first[16]);
}

TEST(toxic_decisions, windows_first_and_every_select_connections) {
    const auto set = parsed(R"(
[[toxic]]
kind = "refused"
from = "1s"
for = "2s"
[[toxic]]
kind = "refused"
every = 3
[[toxic]]
kind = "refused"
first = 2
)");
    EXPECT_FALSE(toxic_applies(set.toxics[0], 1, 1, 999ms));
    EXPECT_TRUE(toxic_applies(set.toxics[0], 1, 1, 1s));
    EXPECT_TRUE(toxic_applies(set.toxics[0], 1, 1, 2999ms));
    EXPECT_FALSE(toxic_applies(set.toxics[0], 1, 1, 3s));
    EXPECT_EQ(decisions(set.toxics[1], 1, 7), (std::vector<bool>{false, false, true, false, false, true, false}));
    EXPECT_EQ(decisions(set.toxics[2], 1, 4), (std::vector<bool>{true, true, false, false}));
}

}  // namespace
}  // namespace faultline::tcp
