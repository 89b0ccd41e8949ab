#include "faultline/server/journal.hpp"
#include "faultline/record/journal_json.hpp"
#include "sample_records.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <unistd.h>
#include <vector>

namespace faultline::server {
namespace {

using record::testing::sample;
using record::testing::sample_wire;
using record::testing::same;

std::string temp_path(std::string_view name) {
    return (std::filesystem::temp_directory_path() /
            ("faultline_h1_" + std::string{name} + "_" + std::to_string(::getpid()) + ".jsonl"))
        .string();
}

TEST(journal, assigns_seq_in_append_order_and_keeps_reserved_ones) {
    journal j;
    EXPECT_EQ(j.append(record::testing::sample(0)), 1U);
    EXPECT_EQ(j.append(record::testing::sample(1)), 2U);
    const auto reserved = j.next_seq();
    EXPECT_EQ(reserved, 3U);
    EXPECT_EQ(j.append(record::testing::sample(2)), 4U);
    auto r = record::testing::sample(3);
    r.seq = reserved;
    EXPECT_EQ(j.append(r), 3U);
    const auto snap = j.snapshot();
    ASSERT_EQ(snap.size(), 4U);
    EXPECT_EQ(snap[0].seq, 1U);
    EXPECT_EQ(snap[2].seq, 4U);
    EXPECT_EQ(snap[3].seq, 3U);
    EXPECT_EQ(j.appended(), 4U);
    EXPECT_FALSE(j.failed());
}

TEST(journal, overflow_without_file_fails_loudly_and_counts) {
    journal j{journal_options{3, ""}};
    for (std::uint64_t n = 0; n < 5; ++n) j.append(record::testing::sample(n));
    EXPECT_EQ(j.size(), 3U);
    EXPECT_EQ(j.appended(), 5U);
    EXPECT_EQ(j.lost(), 2U);
    EXPECT_TRUE(j.failed());
    EXPECT_FALSE(j.memory_complete());
    EXPECT_NE(j.error().find("in-memory bound of 3 records"), std::string::npos) << j.error();
    EXPECT_NE(j.error().find("2 records were not kept"), std::string::npos) << j.error();
    j.reset();
    EXPECT_FALSE(j.failed());
    EXPECT_EQ(j.error(), "");
    EXPECT_EQ(j.size(), 0U);
    EXPECT_EQ(j.append(record::testing::sample(9)), 6U);  // seq keeps counting across reset
}

TEST(journal, with_a_file_spills_past_the_bound_and_the_file_holds_everything) {
    const auto path = temp_path("spill");
    {
        journal j{journal_options{2, path}};
        for (std::uint64_t n = 0; n < 5; ++n) j.append(record::testing::sample(n));
        j.flush();
        EXPECT_EQ(j.size(), 2U);
        EXPECT_FALSE(j.memory_complete());
        EXPECT_FALSE(j.failed());
        EXPECT_EQ(j.lost(), 0U);
        const auto read = record::read_jsonl(path);
        ASSERT_TRUE(read.ok());
        EXPECT_EQ(read.records.size(), 5U);
    }
    std::filesystem::remove(path);
}

TEST(journal, jsonl_round_trip_through_a_file) {
    const auto path = temp_path("round_trip");
    std::vector<record::journal_record> written;
    {
        journal j{journal_options{1000, path}};
        for (std::uint64_t n = 0; n < 30; ++n) {
            auto r = record::testing::sample(n);
            r.seq = j.append(r, record::testing::sample_wire(n));
            written.push_back(r);
        }
        EXPECT_EQ(j.snapshot().size(), 30U);
    }  // the destructor writes everything
    const auto read = record::read_jsonl(path);
    ASSERT_TRUE(read.ok()) << read.errors.front().to_string();
    ASSERT_EQ(read.records.size(), written.size());
    for (std::size_t i = 0; i < written.size(); ++i) EXPECT_TRUE(record::testing::same(read.records[i], written[i])) << i;
    // Each line holds its record's wire detail too, with its seq.
    std::ifstream in{path};
    std::size_t n = 0;
    for (std::string line; std::getline(in, line); ++n) {
        std::string error;
        record::wire_detail wire;
        ASSERT_TRUE(record::record_from_json(boost::json::parse(line), error, &wire)) << error;
        record::wire_detail expected = record::testing::sample_wire(n);
        expected.seq = written[n].seq;
        EXPECT_TRUE(record::testing::same(wire, expected)) << n;
    }
    EXPECT_EQ(n, written.size());
    std::filesystem::remove(path);
}

TEST(journal, one_told_to_keep_no_wire_details_keeps_records_only) {
    journal_options options;
    options.wire_details = false;
    journal j{options};
    // Past one chunk of records with details: the chunks hold more records each without them.
    constexpr std::uint64_t count = 60'000;
    for (std::uint64_t n = 0; n < count; ++n) j.append(record::testing::sample(n), record::testing::sample_wire(n));
    EXPECT_TRUE(j.wire_snapshot().empty());
    const std::string lines = j.to_jsonl();
    EXPECT_EQ(lines.find("t_accept"), std::string::npos);
    EXPECT_EQ(lines.find("bytes_in"), std::string::npos);
    const auto [records, wire] = j.take();
    EXPECT_TRUE(wire.empty());
    ASSERT_EQ(records.size(), count);
    for (std::uint64_t n = 0; n < count; ++n) ASSERT_TRUE(record::testing::same(records[n], [&] {
        auto r = record::testing::sample(n);
        r.seq = n + 1;
        return r;
    }())) << n;
}

TEST(journal, concurrent_appends_all_reach_the_file_with_unique_seqs) {
    const auto path = temp_path("concurrent");
    constexpr int threads = 4;
    constexpr int per_thread = 2000;
    {
        journal j{journal_options{1000, path}};
        std::vector<std::thread> pool;
        for (int t = 0; t < threads; ++t) {
            pool.emplace_back([&j, t] {
                for (int i = 0; i < per_thread; ++i) j.append(record::testing::sample(static_cast<std::uint64_t>(t * per_thread + i)));
            });
        }
        for (auto& th : pool) th.join();
        j.flush();
        EXPECT_EQ(j.appended(), static_cast<std::uint64_t>(threads * per_thread));
        EXPECT_FALSE(j.failed());
    }
    const auto read = record::read_jsonl(path);
    ASSERT_TRUE(read.ok());
    ASSERT_EQ(read.records.size(), static_cast<std::size_t>(threads * per_thread));
    std::vector<bool> seen(threads * per_thread + 1, false);
    for (const auto& r : read.records) {
        ASSERT_GE(r.seq, 1U);
        ASSERT_LE(r.seq, static_cast<std::uint64_t>(threads * per_thread));
        EXPECT_FALSE(seen[r.seq]);
        seen[r.seq] = true;
    }
    std::filesystem::remove(path);
}

TEST(journal, many_chunks_keep_append_order_in_memory_and_file) {
    // 50,000 records span several of the journal's storage chunks (about 20,000 records each).
    const auto path = temp_path("chunks");
    constexpr std::uint64_t count = 50'000;
    {
        journal j{journal_options{count, path}};
        for (std::uint64_t n = 0; n < count; ++n) j.append(record::testing::sample(n));
        const auto snap = j.snapshot();
        ASSERT_EQ(snap.size(), count);
        for (std::uint64_t n = 0; n < count; ++n) ASSERT_EQ(snap[n].seq, n + 1) << n;
        EXPECT_EQ(snap[count - 1].target, "/payments?n=" + std::to_string(count - 1));
    }
    const auto read = record::read_jsonl(path);
    ASSERT_TRUE(read.ok());
    ASSERT_EQ(read.records.size(), count);
    for (std::uint64_t n = 0; n < count; ++n) ASSERT_EQ(read.records[n].seq, n + 1) << n;
    std::filesystem::remove(path);
}

TEST(journal, reset_with_a_file_forgets_memory_but_the_file_keeps_every_record_in_order) {
    const auto path = temp_path("reset_file");
    constexpr std::uint64_t before = 45'000;  // past two chunks: reset frees what the writer is done with
    constexpr std::uint64_t after = 30'000;
    {
        journal j{journal_options{40'000, path}};
        for (std::uint64_t n = 0; n < before; ++n) j.append(record::testing::sample(n));
        EXPECT_FALSE(j.memory_complete());
        j.reset();
        EXPECT_TRUE(j.memory_complete());
        EXPECT_EQ(j.size(), 0U);
        for (std::uint64_t n = before; n < before + after; ++n) j.append(record::testing::sample(n));
        const auto snap = j.snapshot();
        ASSERT_EQ(snap.size(), after);
        EXPECT_EQ(snap.front().seq, before + 1);
        EXPECT_EQ(snap.back().seq, before + after);
        j.flush();
        EXPECT_FALSE(j.failed());
    }
    const auto read = record::read_jsonl(path);
    ASSERT_TRUE(read.ok());
    ASSERT_EQ(read.records.size(), before + after);
    for (std::uint64_t n = 0; n < before + after; ++n) ASSERT_EQ(read.records[n].seq, n + 1) << n;
    std::filesystem::remove(path);
}

TEST(journal, memory_window_after_reset_without_a_file_holds_only_new_records) {
    journal j{journal_options{25'000, ""}};
    for (std::uint64_t n = 0; n < 25'000; ++n) j.append(record::testing::sample(n));
    j.reset();
    for (std::uint64_t n = 0; n < 25'001; ++n) j.append(record::testing::sample(n));
    EXPECT_EQ(j.size(), 25'000U);
    EXPECT_EQ(j.lost(), 1U);
    const auto snap = j.snapshot();
    EXPECT_EQ(snap.front().seq, 25'001U);
    EXPECT_EQ(snap.back().seq, 50'000U);
}

TEST(journal, take_hands_over_every_record_once_in_order_and_seq_keeps_counting) {
    // 50,000 records span several chunks: take() frees each one as it empties it.
    constexpr std::uint64_t count = 50'000;
    journal j;
    for (std::uint64_t n = 0; n < count; ++n) j.append(record::testing::sample(n), record::testing::sample_wire(n));
    const auto [taken, wire] = j.take();
    ASSERT_EQ(taken.size(), count);
    ASSERT_EQ(wire.size(), count);
    for (std::uint64_t n = 0; n < count; ++n) {
        ASSERT_EQ(taken[n].seq, n + 1) << n;
        ASSERT_EQ(wire[n].seq, n + 1) << n;
        ASSERT_EQ(wire[n].bytes_in, record::testing::sample_wire(n).bytes_in) << n;
    }
    EXPECT_EQ(taken[count - 1].target, "/payments?n=" + std::to_string(count - 1));
    EXPECT_EQ(j.size(), 0U);
    EXPECT_TRUE(j.take().records.empty());
    EXPECT_TRUE(j.snapshot().empty());
    EXPECT_TRUE(j.memory_complete());
    EXPECT_EQ(j.appended(), count);
    EXPECT_EQ(j.append(record::testing::sample(0)), count + 1);
    const auto later = j.take().records;
    ASSERT_EQ(later.size(), 1U);
    EXPECT_EQ(later[0].seq, count + 1);
}

journal_options spilling(std::string directory) {
    journal_options options;
    options.spill_directory = std::move(directory);
    return options;
}

// Appends records 0..count-1, each with its wire detail.
void append_samples(journal& j, std::uint64_t from, std::uint64_t count) {
    for (std::uint64_t n = from; n < from + count; ++n) j.append(record::testing::sample(n), record::testing::sample_wire(n));
}

// Records and wire details [from, from + count) as appended by append_samples (seq = n + 1).
void expect_samples(const std::vector<record::journal_record>& records, const std::vector<record::wire_detail>& wire,
                    std::uint64_t from, std::uint64_t count) {
    ASSERT_EQ(records.size(), count);
    ASSERT_EQ(wire.size(), count);
    for (std::uint64_t i = 0; i < count; ++i) {
        auto expected = record::testing::sample(from + i);
        expected.seq = from + i + 1;
        auto expected_wire = record::testing::sample_wire(from + i);
        expected_wire.seq = from + i + 1;
        ASSERT_TRUE(record::testing::same(records[i], expected)) << i;
        ASSERT_TRUE(record::testing::same(wire[i], expected_wire)) << i;
    }
}

TEST(journal, spilling_keeps_only_the_chunk_being_filled_in_memory_and_reads_the_rest_back) {
    // 50,000 attempts with wire details fill four chunks (about 12,500 each) and start a fifth.
    constexpr std::uint64_t count = 50'000;
    journal j{spilling(std::filesystem::temp_directory_path().string())};
    append_samples(j, 0, count);
    j.flush();
    EXPECT_GE(j.spilled(), count - 12'500);
    EXPECT_LT(j.spilled(), count);
    EXPECT_EQ(j.size(), count);
    expect_samples(j.snapshot(), j.wire_snapshot(), 0, count);
    journal_attempts taken = j.take();
    expect_samples(taken.records, taken.wire, 0, count);
    EXPECT_EQ(j.spilled(), 0U);
    EXPECT_EQ(j.size(), 0U);
    EXPECT_TRUE(j.memory_complete());
    // Appends go on after a take, and spill again.
    append_samples(j, count, count);
    j.flush();
    EXPECT_GT(j.spilled(), 0U);
    taken = j.take();
    expect_samples(taken.records, taken.wire, count, count);
}

// take() does not wait for the spiller: a chunk still being written out is read from memory, and
// the records come out whole and in order whichever chunks made it to the file.
TEST(journal, a_take_while_chunks_are_being_spilled_hands_over_every_record) {
    journal j{spilling(std::filesystem::temp_directory_path().string())};
    append_samples(j, 0, 40'000);
    const journal_attempts taken = j.take();
    expect_samples(taken.records, taken.wire, 0, 40'000);
    EXPECT_EQ(j.size(), 0U);
}

TEST(journal, a_reset_forgets_spilled_records_too) {
    journal j{spilling(std::filesystem::temp_directory_path().string())};
    append_samples(j, 0, 30'000);
    j.flush();
    ASSERT_GT(j.spilled(), 0U);
    j.reset();
    EXPECT_EQ(j.spilled(), 0U);
    EXPECT_EQ(j.size(), 0U);
    append_samples(j, 30'000, 40'000);
    j.flush();
    expect_samples(j.snapshot(), j.wire_snapshot(), 30'000, 40'000);
    const journal_attempts taken = j.take();
    expect_samples(taken.records, taken.wire, 30'000, 40'000);
}

// The descriptor of this process's newest unlinked file in `directory`: the journal's spill file
// as a client under test would find it, through /proc/<pid>/fd.
int newest_unlinked_file(const std::filesystem::path& directory) {
    int newest = -1;
    for (const auto& entry : std::filesystem::directory_iterator{"/proc/self/fd"}) {
        std::error_code ec;
        const std::string target = std::filesystem::read_symlink(entry.path(), ec).string();
        if (ec || target.rfind(directory.string(), 0) != 0 || target.find("(deleted)") == std::string::npos) continue;
        newest = std::max(newest, std::stoi(entry.path().filename().string()));
    }
    return newest;
}

// Issue 27, item 7: a client running as the same user can reopen the spill file through
// /proc/<faultline pid>/fd and truncate or overwrite it. The journal notices when it reads the file
// back: the damaged records are not handed over as evidence, and a server event that
// evidence_intact counts says what happened.
TEST(journal, a_spill_file_changed_behind_its_back_is_detected_and_reported) {
    const auto directory = std::filesystem::temp_directory_path();
    for (const bool truncate : {true, false}) {
        journal j{spilling(directory.string())};
        append_samples(j, 0, 30'000);
        j.flush();
        ASSERT_GT(j.spilled(), 0U);
        const int spill_fd = newest_unlinked_file(directory);
        ASSERT_GE(spill_fd, 0);
        const std::string through_proc = "/proc/self/fd/" + std::to_string(spill_fd);
        int reopened = ::open(through_proc.c_str(), O_WRONLY);
        // It is read-only: a client must chmod it first (root needs not), which it can, as the owner.
        if (::geteuid() != 0) {
            EXPECT_LT(reopened, 0);
        }
        if (reopened < 0) {
            ASSERT_EQ(::chmod(through_proc.c_str(), 0600), 0);
            reopened = ::open(through_proc.c_str(), O_WRONLY);
        }
        ASSERT_GE(reopened, 0);
        if (truncate) {
            ASSERT_EQ(::ftruncate(reopened, 0), 0);
        } else {
            const std::string garbage(64, '\x7f');
            ASSERT_EQ(::pwrite(reopened, garbage.data(), garbage.size(), 4096), static_cast<ssize_t>(garbage.size()));
        }
        ::close(reopened);
        const journal_attempts taken = j.take();
        EXPECT_LT(taken.records.size(), 30'000U) << (truncate ? "truncated" : "overwritten");
        EXPECT_EQ(taken.records.size(), taken.wire.size());
        EXPECT_EQ(j.altered(), 30'000U - taken.records.size());
        const auto events = j.events();
        const auto altered = std::find_if(events.begin(), events.end(), [](const record::server_event& e) {
            return e.kind == record::server_event_kind::evidence_altered;
        });
        ASSERT_NE(altered, events.end());
        EXPECT_NE(altered->detail.find("spill file"), std::string::npos) << altered->detail;
        EXPECT_TRUE(record::is_control_action(altered->kind));
    }
}

TEST(journal, a_spill_directory_it_cannot_write_in_keeps_every_record_in_memory) {
    journal j{spilling("/nonexistent-dir-faultline-spill")};
    append_samples(j, 0, 30'000);
    j.flush();
    EXPECT_EQ(j.spilled(), 0U);
    EXPECT_FALSE(j.failed());
    const journal_attempts taken = j.take();
    expect_samples(taken.records, taken.wire, 0, 30'000);
}

TEST(journal, take_with_a_file_leaves_the_file_whole_and_keeps_reporting_overflow) {
    const auto path = temp_path("take_file");
    constexpr std::uint64_t count = 45'000;
    {
        journal j{journal_options{40'000, path}};
        for (std::uint64_t n = 0; n < count; ++n) j.append(record::testing::sample(n));
        const auto taken = j.take().records;
        ASSERT_EQ(taken.size(), 40'000U);  // the memory window; the rest went to the file only
        for (std::uint64_t n = 0; n < taken.size(); ++n) ASSERT_EQ(taken[n].seq, n + 1) << n;
        EXPECT_FALSE(j.memory_complete());  // take() does not hide the overflow
        EXPECT_EQ(j.size(), 0U);
        j.append(record::testing::sample(count));
        EXPECT_FALSE(j.failed());
    }
    const auto read = record::read_jsonl(path);
    ASSERT_TRUE(read.ok());
    ASSERT_EQ(read.records.size(), count + 1);
    for (std::uint64_t n = 0; n < count + 1; ++n) ASSERT_EQ(read.records[n].seq, n + 1) << n;
    EXPECT_EQ(read.records[0].target, "/payments?n=0");  // written before it was moved out
    std::filesystem::remove(path);
}

TEST(journal, take_after_reset_takes_only_the_new_records) {
    journal j;
    for (std::uint64_t n = 0; n < 10; ++n) j.append(record::testing::sample(n));
    j.reset();
    for (std::uint64_t n = 0; n < 5; ++n) j.append(record::testing::sample(n));
    const auto taken = j.take().records;
    ASSERT_EQ(taken.size(), 5U);
    EXPECT_EQ(taken.front().seq, 11U);
    EXPECT_EQ(taken.back().seq, 15U);
}

TEST(journal, unopenable_file_throws) {
    EXPECT_THROW(journal(journal_options{10, "/nonexistent-dir-h1/x.jsonl"}), std::system_error);
}

TEST(journal, to_jsonl_serves_the_memory) {
    journal j;
    j.append(record::testing::sample(1));
    j.append(record::testing::sample(2));
    std::istringstream in{j.to_jsonl()};
    const auto read = record::read_jsonl(in, "memory");
    ASSERT_TRUE(read.ok());
    ASSERT_EQ(read.records.size(), 2U);
    EXPECT_EQ(read.records[1].seq, 2U);
}

TEST(journal, server_events_share_the_sequence_survive_reset_and_reach_the_file) {
    const std::string path = temp_path("events");
    {
        journal j{journal_options{10, path}};
        j.append(record::testing::sample(0));
        record::server_event reset;
        reset.kind = record::server_event_kind::reset;
        reset.peer = "127.0.0.1:5";
        EXPECT_EQ(j.append_event(reset), 2U);
        j.reset();
        j.append(record::testing::sample(1));
        ASSERT_EQ(j.events().size(), 1U);
        EXPECT_EQ(j.events_appended(), 1U);
        // The download holds what memory holds, in seq order: the reset, then the new attempt.
        const std::string text = j.to_jsonl();
        EXPECT_EQ(text.find(R"({"event":"reset","seq":2)"), 0U) << text;
        EXPECT_NE(text.find(R"("seq":3)"), std::string::npos) << text;
        j.flush();
        const auto read = record::read_jsonl(path);
        ASSERT_TRUE(read.ok());
        EXPECT_EQ(read.records.size(), 2U);
        ASSERT_EQ(read.server_events.size(), 1U);
        EXPECT_EQ(read.server_events[0].seq, 2U);
        EXPECT_EQ(read.server_events[0].peer, "127.0.0.1:5");
    }
    std::filesystem::remove(path);
}

record::server_event reset_event() {
    record::server_event reset;
    reset.kind = record::server_event_kind::reset;
    reset.peer = "127.0.0.1:5";
    return reset;
}

std::size_t lines_in(const std::string& text) { return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')); }

TEST(journal, a_round_starts_with_its_reset_and_an_attempt_read_before_it_stays_in_the_round_before) {
    const std::string path = temp_path("rounds");
    {
        journal j{journal_options{10, path}};
        EXPECT_EQ(j.round(), 1);
        j.append(record::testing::sample(0));              // seq 1
        const auto early = j.next_seq();  // seq 2: its request was read before the reset…
        EXPECT_EQ(j.start_round(reset_event()), 2);  // seq 3
        EXPECT_EQ(j.round(), 2);
        auto late = record::testing::sample(1);
        late.seq = early;
        j.append(late);  // …and its record comes after it
        j.append(record::testing::sample(2));  // seq 4
        const auto events = j.events();
        ASSERT_EQ(events.size(), 1U);
        EXPECT_EQ(events[0].seq, 3U);
        EXPECT_EQ(events[0].round, 2);
        for (const record::journal_record& r : j.snapshot()) EXPECT_EQ(r.round, r.seq == early ? 1 : 2) << r.seq;

        const std::string current = j.to_jsonl(2);
        EXPECT_EQ(lines_in(current), 2U) << current;
        EXPECT_EQ(current.find(R"({"event":"reset","seq":3,"round":2,"t":0,)"), 0U) << current;
        EXPECT_NE(current.find(R"({"seq":4,"round":2,)"), std::string::npos) << current;
        const std::string before = j.to_jsonl(1);  // what memory still holds of round 1: the late record
        EXPECT_EQ(lines_in(before), 1U) << before;
        EXPECT_EQ(before.find(R"({"seq":2,"conn")"), 0U) << before;
        EXPECT_EQ(lines_in(j.to_jsonl()), 3U);

        // The file keeps every round, and reads back with the rounds the journal gave.
        j.flush();
        const auto read = record::read_jsonl(path);
        ASSERT_TRUE(read.ok()) << read.errors.front().to_string();
        ASSERT_EQ(read.records.size(), 3U);
        for (const record::journal_record& r : read.records) EXPECT_EQ(r.round, r.seq < 3 ? 1 : 2) << r.seq;
    }
    std::filesystem::remove(path);
}

TEST(journal, starting_a_round_forgets_the_records_of_the_rounds_before) {
    journal j;
    j.append(record::testing::sample(0));
    ASSERT_TRUE(j.start_round(reset_event()));
    EXPECT_EQ(j.size(), 0U);
    j.append(record::testing::sample(1));
    ASSERT_EQ(j.snapshot().size(), 1U);
    EXPECT_EQ(j.snapshot()[0].round, 2);
}

TEST(journal, past_max_round_a_round_is_refused_and_nothing_changes) {
    journal_options options;
    options.max_events = 1;
    journal j{options};
    while (j.round() < record::max_round) ASSERT_TRUE(j.start_round(reset_event()));
    j.append(record::testing::sample(0));
    const std::uint64_t events = j.events_appended();
    EXPECT_FALSE(j.start_round(reset_event()));
    EXPECT_EQ(j.round(), record::max_round);
    EXPECT_EQ(j.events_appended(), events);
    EXPECT_EQ(j.size(), 1U);
}

TEST(journal, server_events_in_memory_are_bounded_and_the_file_keeps_them_all) {
    const std::string path = temp_path("events_bound");
    {
        journal_options options{10, path};
        options.max_events = 2;
        journal j{options};
        for (int i = 0; i < 5; ++i) j.append_event(record::server_event{record::server_event_kind::idle_timeout, 0, 0, "", "", ""});
        EXPECT_EQ(j.events().size(), 2U);
        EXPECT_EQ(j.events_appended(), 5U);
        j.flush();
        EXPECT_EQ(record::read_jsonl(path).server_events.size(), 5U);
    }
    std::filesystem::remove(path);
}

}  // namespace
}  // namespace faultline::server
