#include "faultline/record/journal_merge.hpp"

#include <gtest/gtest.h>

namespace faultline::record {
namespace {

journal_record attempt(std::uint64_t seq, std::uint64_t conn, std::int64_t t, std::string op) {
    journal_record r;
    r.seq = seq;
    r.connection = static_cast<std::uint32_t>(conn);
    r.request_ns = t;
    r.finished_ns = t + 10;
    r.operation = std::move(op);
    return r;
}

server_event anchor(std::int64_t wall_ns) {
    server_event e;
    e.kind = server_event_kind::started;
    e.seq = 1;
    e.detail = std::to_string(wall_ns);
    return e;
}

TEST(journal_merge, wall_anchor_is_read_from_the_started_event) {
    EXPECT_EQ(wall_anchor_ns({anchor(5'000)}), 5'000);
    server_event late = anchor(5'000);
    late.at_ns = 1'000;  // the wall clock at t = 1000: t = 0 was 4000
    EXPECT_EQ(wall_anchor_ns({late}), 4'000);
    EXPECT_FALSE(wall_anchor_ns({}));
    server_event garbled = anchor(0);
    garbled.detail = "soon";
    EXPECT_FALSE(wall_anchor_ns({garbled}));
}

TEST(journal_merge, journals_go_on_one_timeline_by_their_anchors) {
    // b started 1000 ns after a: its t = 100 is a's t = 1100.
    named_journal a{"a", {attempt(2, 1, 500, "x"), attempt(3, 1, 2'000, "y")}, {anchor(1'000'000)}, {}};
    named_journal b{"b", {attempt(2, 1, 100, "x")}, {anchor(1'001'000)}, {}};
    const merged_journal m = merge_journals({a, b});
    ASSERT_EQ(m.records.size(), 3U);
    EXPECT_TRUE(m.warnings.empty());
    EXPECT_EQ(m.records[0].request_ns, 500);
    EXPECT_EQ(m.records[0].instance, "a");
    EXPECT_EQ(m.records[1].request_ns, 1'100);
    EXPECT_EQ(m.records[1].finished_ns, 1'110);
    EXPECT_EQ(m.records[1].instance, "b");
    EXPECT_EQ(m.records[2].operation, "y");
    // Connection 1 of a and connection 1 of b are different connections.
    EXPECT_NE(m.records[0].connection, m.records[1].connection);
    EXPECT_EQ(m.records[0].connection, m.records[2].connection);
    // seq is unique over records and events, in merged order: the two anchors come first (t = 0 and 1000 on a's clock).
    ASSERT_EQ(m.server_events.size(), 2U);
    EXPECT_EQ(m.server_events[0].seq, 1U);
    EXPECT_EQ(m.server_events[0].peer, "a");
    EXPECT_EQ(m.records[0].seq, 2U);
    EXPECT_EQ(m.server_events[1].seq, 3U);
    EXPECT_EQ(m.records[1].seq, 4U);
    EXPECT_EQ(m.records[2].seq, 5U);
}

TEST(journal_merge, wire_details_follow_their_records_onto_the_timeline) {
    // b started 1000 ns after a; only b kept wire details.
    wire_detail w;
    w.seq = 2;
    w.accepted_ns = 90;
    w.bytes_in = 77;
    named_journal a{"a", {attempt(2, 1, 500, "x")}, {anchor(1'000'000)}, {}};
    journal_record answered = attempt(2, 1, 100, "x");
    answered.response_ns = 105;
    named_journal b{"b", {answered}, {anchor(1'001'000)}, {w}};
    const merged_journal m = merge_journals({a, b});
    ASSERT_EQ(m.records.size(), 2U);
    ASSERT_EQ(m.wire.size(), 1U);
    EXPECT_EQ(m.wire[0].seq, m.records[1].seq);
    EXPECT_EQ(m.records[1].instance, "b");
    EXPECT_EQ(m.wire[0].accepted_ns, 1'090);
    EXPECT_EQ(m.records[1].response_ns, 1'105);
    EXPECT_EQ(m.wire[0].bytes_in, 77U);
}

TEST(journal_merge, a_writer_given_instance_tag_is_kept) {
    journal_record r = attempt(1, 1, 0, "x");
    r.instance = "tier-b";
    const merged_journal m = merge_journals({{"file.jsonl", {r}, {}, {}}});
    EXPECT_EQ(m.records.front().instance, "tier-b");
}

TEST(journal_merge, a_journal_without_an_anchor_among_anchored_ones_is_a_warning) {
    const merged_journal m = merge_journals({{"a", {attempt(1, 1, 5, "x")}, {anchor(1'000)}, {}},
                                             {"old", {attempt(1, 1, 7, "x")}, {}, {}}});
    ASSERT_EQ(m.warnings.size(), 1U);
    EXPECT_NE(m.warnings.front().find("old"), std::string::npos);
    EXPECT_EQ(m.records.size(), 2U);
}

}  // namespace
}  // namespace faultline::record
