// Rounds in the journal: written from round 2 on (a journal of one round is what it was), numbered by
// the reset events when read (in files from before rounds too), held to them, split for judging.
#include "faultline/record/journal_json.hpp"
#include "faultline/record/journal_merge.hpp"
#include "faultline/record/journal_rounds.hpp"

#include <boost/json/parse.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <string>
#include <vector>

namespace faultline::record {
namespace {

journal_record attempt(std::uint64_t seq, std::string op, round_number round = 1) {
    journal_record r;
    r.seq = seq;
    r.connection = 1;
    r.request_ns = static_cast<std::int64_t>(seq) * 100;
    r.finished_ns = r.request_ns + 10;
    r.method = "PUT";
    r.target = "/kv/" + op;
    r.operation = std::move(op);
    r.round = round;
    return r;
}

server_event reset_event(std::uint64_t seq, round_number round = 1) {
    server_event e;
    e.kind = server_event_kind::reset;
    e.seq = seq;
    e.round = round;
    return e;
}

// The lines of a journal: the records and events in seq order, as a writer gives them.
std::string lines(const std::vector<journal_record>& records, const std::vector<server_event>& events) {
    std::string out;
    auto event = events.begin();
    for (const journal_record& r : records) {
        for (; event != events.end() && event->seq < r.seq; ++event) append_jsonl_line(out, *event);
        append_jsonl_line(out, r);
    }
    for (; event != events.end(); ++event) append_jsonl_line(out, *event);
    return out;
}

jsonl_read_result read_text(const std::string& text) {
    std::istringstream in{text};
    return read_jsonl(in, "j.jsonl");
}

TEST(journal_rounds, a_round_is_written_from_round_2_on_after_seq) {
    EXPECT_EQ(to_jsonl_line(attempt(3, "a")).find("round"), std::string::npos);
    EXPECT_EQ(to_jsonl_line(attempt(3, "a", 2)).substr(0, 20), R"({"seq":3,"round":2,")");
    EXPECT_FALSE(to_json(attempt(3, "a")).contains("round"));
    EXPECT_EQ(to_json(attempt(3, "a", 2)).at("round").to_number<int>(), 2);
    std::string event;
    append_jsonl_line(event, reset_event(5, 2));
    EXPECT_EQ(event, R"({"event":"reset","seq":5,"round":2,"t":0,"rule":"","detail":"","peer":""})"
                     "\n");
    EXPECT_EQ(to_json(reset_event(5, 2)).at("round").to_number<int>(), 2);
}

TEST(journal_rounds, the_anchor_names_the_seed_and_reads_back) {
    const server_event anchor =
        wall_clock_anchor(0, std::chrono::system_clock::time_point{std::chrono::nanoseconds{1'000}}, "", 7);
    std::string line;
    append_jsonl_line(line, anchor);
    EXPECT_EQ(line, R"({"event":"started","seq":0,"t":0,"rule":"","detail":"1000","peer":"","seed":7})"
                    "\n");
    const jsonl_read_result read = read_text(line);
    ASSERT_TRUE(read.ok()) << read.errors.front().to_string();
    EXPECT_EQ(journal_seed(read.server_events), 7U);
    // A seed past 2^63 and the object form read the same.
    server_event big = anchor;
    big.seed = 18'446'744'073'709'551'615ULL;
    std::string error;
    const auto from_object = server_event_from_json(boost::json::value(to_json(big)), error);
    ASSERT_TRUE(from_object) << error;
    EXPECT_EQ(from_object->seed, big.seed);
    // An anchor from before seeds were written names none.
    EXPECT_FALSE(journal_seed({wall_clock_anchor(0, {}, "", std::nullopt)}));
}

// A file written before rounds: no "round" anywhere; its resets still number them.
TEST(journal_rounds, reset_events_number_the_rounds_of_a_file_from_before_rounds) {
    const jsonl_read_result read =
        read_text(lines({attempt(2, "a"), attempt(3, "a"), attempt(5, "a"), attempt(6, "a")}, {reset_event(4)}));
    ASSERT_TRUE(read.ok()) << read.errors.front().to_string();
    ASSERT_EQ(read.records.size(), 4U);
    EXPECT_EQ(read.records[0].round, 1);
    EXPECT_EQ(read.records[1].round, 1);
    EXPECT_EQ(read.records[2].round, 2);
    EXPECT_EQ(read.records[3].round, 2);
    EXPECT_EQ(read.server_events.at(0).round, 2);  // a reset is the first event of the round it starts
}

TEST(journal_rounds, written_rounds_read_back_in_either_path) {
    const std::string text = lines({attempt(2, "a"), attempt(4, "a", 2)}, {reset_event(3, 2)});
    const jsonl_read_result fast = read_text(text);
    ASSERT_TRUE(fast.ok()) << fast.errors.front().to_string();
    EXPECT_EQ(fast.records.at(1).round, 2);
    // The same lines with a space after each colon go through Boost.JSON.
    std::string spaced;
    for (const char c : text) spaced += c == ':' ? std::string{": "} : std::string{c};
    const jsonl_read_result slow = read_text(spaced);
    ASSERT_TRUE(slow.ok()) << slow.errors.front().to_string();
    EXPECT_EQ(slow.records.at(0).round, 1);
    EXPECT_EQ(slow.records.at(1).round, 2);
    EXPECT_EQ(slow.server_events.at(0).round, 2);
}

TEST(journal_rounds, a_round_the_resets_do_not_make_is_an_error_naming_both) {
    const jsonl_read_result moved = read_text(lines({attempt(2, "a"), attempt(4, "a", 3)}, {reset_event(3, 2)}));
    ASSERT_EQ(moved.errors.size(), 1U);
    EXPECT_EQ(moved.errors[0].to_string(),
              "j.jsonl: bad journal: seq 4 says round 3, but the reset events before it put it in round 2 (a reset "
              "starts the next round): lines were edited, moved or merged from another journal");
    // A round without the reset that starts it.
    EXPECT_FALSE(read_text(lines({attempt(2, "a", 2)}, {})).ok());
    // Round 0 is no round.
    const jsonl_read_result zero = read_text(R"({"seq":1,"round":0,"conn":1})"
                                             "\n");
    ASSERT_EQ(zero.errors.size(), 1U);
    EXPECT_NE(zero.errors[0].to_string().find(R"(field "round": expected a round number (1 or more))"),
              std::string::npos)
        << zero.errors[0].to_string();
}

// `GET /__faultline/journal?round=3`: one round, its reset first; the reset names the round it starts.
TEST(journal_rounds, an_excerpt_of_later_rounds_reads_back_as_those_rounds) {
    const jsonl_read_result read =
        read_text(lines({attempt(7, "a", 3), attempt(9, "a", 4)}, {reset_event(6, 3), reset_event(8, 4)}));
    ASSERT_TRUE(read.ok()) << read.errors.front().to_string();
    EXPECT_EQ(read.records.at(0).round, 3);
    EXPECT_EQ(read.records.at(1).round, 4);
    // A reset from before rounds (none named) after named ones starts the next.
    const jsonl_read_result mixed = read_text(lines({attempt(9, "a")}, {reset_event(6, 3), reset_event(8)}));
    ASSERT_TRUE(mixed.ok()) << mixed.errors.front().to_string();
    EXPECT_EQ(mixed.records.at(0).round, 4);
}

TEST(journal_rounds, resets_whose_rounds_do_not_ascend_are_an_error) {
    const jsonl_read_result read = read_text(lines({attempt(9, "a", 3)}, {reset_event(6, 3), reset_event(8, 3)}));
    ASSERT_EQ(read.errors.size(), 1U);
    EXPECT_EQ(read.errors[0].to_string(),
              "j.jsonl: bad journal: the reset at seq 8 starts round 3, but round 3 began before it: lines were "
              "edited, moved or merged from another journal");
}

TEST(journal_rounds, boundaries_put_an_item_in_the_round_of_the_resets_before_it) {
    round_boundaries rounds;
    EXPECT_EQ(rounds.current(), 1);
    EXPECT_EQ(rounds.round_of(7), 1);
    EXPECT_EQ(rounds.start_round(10), 2);
    EXPECT_EQ(rounds.start_round(20), 3);
    EXPECT_EQ(rounds.round_of(9), 1);   // its request was read before the reset, its record came after
    EXPECT_EQ(rounds.round_of(10), 2);  // the reset itself
    EXPECT_EQ(rounds.round_of(15), 2);
    EXPECT_EQ(rounds.round_of(25), 3);
    EXPECT_FALSE(rounds.start_round(30, 3));  // a round that has begun
    round_boundaries excerpt;
    EXPECT_EQ(excerpt.start_round(10, 5), 5);
    EXPECT_EQ(excerpt.round_of(9), 4);  // before the excerpt's first reset: the round before it
    for (std::uint64_t seq = 21; rounds.current() < max_round; ++seq) ASSERT_TRUE(rounds.start_round(seq));
    EXPECT_FALSE(rounds.start_round(1'000'000));
    EXPECT_EQ(rounds.current(), max_round);
}

TEST(journal_rounds, split_gives_each_round_with_attempts_its_own_records_and_events) {
    server_event anchor = wall_clock_anchor(0, {}, "", 7);
    anchor.seq = 1;
    std::vector<journal_record> records{attempt(3, "a", 2), attempt(4, "a", 2), attempt(7, "a", 4), attempt(8, "a", 4)};
    std::vector<server_event> events{anchor, reset_event(2, 2), reset_event(5, 3), reset_event(6, 4)};
    const std::vector<journal_round> rounds = split_rounds(records, events);
    ASSERT_EQ(rounds.size(), 2U);  // round 1 (the anchor) and round 3 (a reset, then another) hold no attempts
    EXPECT_EQ(rounds[0].number, 2);
    ASSERT_EQ(rounds[0].records.size(), 2U);
    EXPECT_EQ(rounds[0].records[1].seq, 4U);
    ASSERT_EQ(rounds[0].server_events.size(), 1U);
    EXPECT_EQ(rounds[0].server_events[0].seq, 2U);
    EXPECT_EQ(rounds[1].number, 4);
    EXPECT_EQ(rounds[1].records.size(), 2U);
    EXPECT_EQ(rounds[1].server_events.at(0).seq, 6U);
}

TEST(journal_rounds, a_journal_with_attempts_in_one_round_is_one_round_with_every_event) {
    std::vector<server_event> events{reset_event(1, 2)};
    server_event anchor = wall_clock_anchor(0, {}, "", 7);
    events.insert(events.begin(), anchor);
    const std::vector<journal_round> rounds = split_rounds({attempt(2, "a", 2)}, events);
    ASSERT_EQ(rounds.size(), 1U);
    EXPECT_EQ(rounds[0].number, 2);
    EXPECT_EQ(rounds[0].server_events.size(), 2U);
    const std::vector<journal_round> empty = split_rounds({}, events);
    ASSERT_EQ(empty.size(), 1U);
    EXPECT_EQ(empty[0].number, 1);
}

TEST(journal_rounds, merged_journals_keep_each_ones_rounds) {
    named_journal a{"a", {attempt(1, "x"), attempt(3, "x", 2)}, {reset_event(2, 2)}, {}};
    named_journal b{"b", {attempt(1, "y")}, {}, {}};
    const merged_journal merged = merge_journals({a, b});
    ASSERT_EQ(merged.records.size(), 3U);
    for (const journal_record& r : merged.records) EXPECT_EQ(r.round, r.operation == "x" && r.request_ns == 300 ? 2 : 1);
    EXPECT_EQ(merged.server_events.at(0).round, 2);
}

}  // namespace
}  // namespace faultline::record
