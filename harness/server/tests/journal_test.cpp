#include "faultline/server/journal.hpp"
#include "faultline/record/journal_json.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <unistd.h>
#include <vector>

namespace faultline::harness {
namespace {

journal_record sample(std::uint64_t n) {
    journal_record r;
    r.connection = n % 3 + 1;
    r.accepted_ns = static_cast<std::int64_t>(n) * 100;
    r.request_ns = r.accepted_ns + 10;
    r.response_started_ns = n % 2 == 0 ? -1 : r.request_ns + 5;
    r.finished_ns = r.request_ns + 20;
    r.method = "POST";
    r.target = "/payments?n=" + std::to_string(n);
    r.operation = "op-" + std::to_string(n / 2);
    r.identity = n % 2 == 0 ? identity_source::idempotency_key : identity_source::request_hash;
    r.attempt = static_cast<std::uint32_t>(n % 2 + 1);
    r.idempotency_key = n % 2 == 0 ? "k\"" + std::to_string(n) : "";
    if (n % 3 == 0) r.attempt_header = std::to_string(n);
    if (n % 4 == 0) r.previous_attempts = "1";
    if (n % 5 == 0) r.deadline_ms = 250;
    r.body_hash = 0xfedcba9876543210ULL + n;  // above 2^53: must survive the round trip exactly
    r.rule = n % 2 == 0 ? "lose-first" : "";
    r.fault = n % 2 == 0 ? "lost_response" : "";
    r.effect = n % 2 == 0 ? effect_kind::committed : effect_kind::replayed;
    r.outcome = n % 2 == 0 ? wire_outcome::reset : wire_outcome::responded;
    r.status = n % 2 == 0 ? 0 : 201;
    if (n % 7 == 0) r.retry_after_ms = 2000;
    r.bytes_in = 100 + n;
    r.bytes_out = 50 + n;
    return r;
}

bool same(const journal_record& a, const journal_record& b) {
    return a.seq == b.seq && a.connection == b.connection && a.accepted_ns == b.accepted_ns &&
           a.request_ns == b.request_ns && a.response_started_ns == b.response_started_ns &&
           a.finished_ns == b.finished_ns && a.method == b.method && a.target == b.target &&
           a.operation == b.operation && a.identity == b.identity && a.attempt == b.attempt &&
           a.idempotency_key == b.idempotency_key && a.attempt_header == b.attempt_header &&
           a.previous_attempts == b.previous_attempts && a.deadline_ms == b.deadline_ms &&
           a.body_hash == b.body_hash && a.rule == b.rule && a.fault == b.fault && a.effect == b.effect &&
           a.outcome == b.outcome && a.status == b.status && a.retry_after_ms == b.retry_after_ms &&
           a.bytes_in == b.bytes_in && a.bytes_out == b.bytes_out;
}

std::string temp_path(std::string_view name) {
    return (std::filesystem::temp_directory_path() /
            ("faultline_h1_" + std::string{name} + "_" + std::to_string(::getpid()) + ".jsonl"))
        .string();
}

TEST(journal, assigns_seq_in_append_order_and_keeps_reserved_ones) {
    journal j;
    EXPECT_EQ(j.append(sample(0)), 1U);
    EXPECT_EQ(j.append(sample(1)), 2U);
    const auto reserved = j.next_seq();
    EXPECT_EQ(reserved, 3U);
    EXPECT_EQ(j.append(sample(2)), 4U);
    auto r = sample(3);
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
    for (std::uint64_t n = 0; n < 5; ++n) j.append(sample(n));
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
    EXPECT_EQ(j.append(sample(9)), 6U);  // seq keeps counting across reset
}

TEST(journal, with_a_file_spills_past_the_bound_and_the_file_holds_everything) {
    const auto path = temp_path("spill");
    {
        journal j{journal_options{2, path}};
        for (std::uint64_t n = 0; n < 5; ++n) j.append(sample(n));
        j.flush();
        EXPECT_EQ(j.size(), 2U);
        EXPECT_FALSE(j.memory_complete());
        EXPECT_FALSE(j.failed());
        EXPECT_EQ(j.lost(), 0U);
        const auto read = read_jsonl(path);
        ASSERT_TRUE(read.ok());
        EXPECT_EQ(read.records.size(), 5U);
    }
    std::filesystem::remove(path);
}

TEST(journal, jsonl_round_trip_through_a_file) {
    const auto path = temp_path("round_trip");
    std::vector<journal_record> written;
    {
        journal j{journal_options{1000, path}};
        for (std::uint64_t n = 0; n < 30; ++n) {
            auto r = sample(n);
            r.seq = j.append(r);
            written.push_back(r);
        }
        EXPECT_EQ(j.snapshot().size(), 30U);
    }  // the destructor writes everything
    const auto read = read_jsonl(path);
    ASSERT_TRUE(read.ok()) << read.errors.front().to_string();
    ASSERT_EQ(read.records.size(), written.size());
    for (std::size_t i = 0; i < written.size(); ++i) EXPECT_TRUE(same(read.records[i], written[i])) << i;
    std::filesystem::remove(path);
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
                for (int i = 0; i < per_thread; ++i) j.append(sample(static_cast<std::uint64_t>(t * per_thread + i)));
            });
        }
        for (auto& th : pool) th.join();
        j.flush();
        EXPECT_EQ(j.appended(), static_cast<std::uint64_t>(threads * per_thread));
        EXPECT_FALSE(j.failed());
    }
    const auto read = read_jsonl(path);
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
        for (std::uint64_t n = 0; n < count; ++n) j.append(sample(n));
        const auto snap = j.snapshot();
        ASSERT_EQ(snap.size(), count);
        for (std::uint64_t n = 0; n < count; ++n) ASSERT_EQ(snap[n].seq, n + 1) << n;
        EXPECT_EQ(snap[count - 1].target, "/payments?n=" + std::to_string(count - 1));
    }
    const auto read = read_jsonl(path);
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
        for (std::uint64_t n = 0; n < before; ++n) j.append(sample(n));
        EXPECT_FALSE(j.memory_complete());
        j.reset();
        EXPECT_TRUE(j.memory_complete());
        EXPECT_EQ(j.size(), 0U);
        for (std::uint64_t n = before; n < before + after; ++n) j.append(sample(n));
        const auto snap = j.snapshot();
        ASSERT_EQ(snap.size(), after);
        EXPECT_EQ(snap.front().seq, before + 1);
        EXPECT_EQ(snap.back().seq, before + after);
        j.flush();
        EXPECT_FALSE(j.failed());
    }
    const auto read = read_jsonl(path);
    ASSERT_TRUE(read.ok());
    ASSERT_EQ(read.records.size(), before + after);
    for (std::uint64_t n = 0; n < before + after; ++n) ASSERT_EQ(read.records[n].seq, n + 1) << n;
    std::filesystem::remove(path);
}

TEST(journal, memory_window_after_reset_without_a_file_holds_only_new_records) {
    journal j{journal_options{25'000, ""}};
    for (std::uint64_t n = 0; n < 25'000; ++n) j.append(sample(n));
    j.reset();
    for (std::uint64_t n = 0; n < 25'001; ++n) j.append(sample(n));
    EXPECT_EQ(j.size(), 25'000U);
    EXPECT_EQ(j.lost(), 1U);
    const auto snap = j.snapshot();
    EXPECT_EQ(snap.front().seq, 25'001U);
    EXPECT_EQ(snap.back().seq, 50'000U);
}

TEST(journal, unopenable_file_throws) {
    EXPECT_THROW(journal(journal_options{10, "/nonexistent-dir-h1/x.jsonl"}), std::system_error);
}

TEST(journal, to_jsonl_serves_the_memory) {
    journal j;
    j.append(sample(1));
    j.append(sample(2));
    std::istringstream in{j.to_jsonl()};
    const auto read = read_jsonl(in, "memory");
    ASSERT_TRUE(read.ok());
    ASSERT_EQ(read.records.size(), 2U);
    EXPECT_EQ(read.records[1].seq, 2U);
}

TEST(journal_json, field_names_are_the_documented_ones) {
    auto r = sample(0);
    r.seq = 12;
    EXPECT_EQ(to_jsonl_line(r),
              R"({"seq":12,"conn":1,"t_accept":0,"t_request":10,"t_response":-1,"t_end":30,"method":"POST",)"
              R"("target":"/payments?n=0","op":"op-0","op_source":"idempotency_key","attempt":1,)"
              R"("idempotency_key":"k\"0","attempt_header":"0","grpc_previous_attempts":"1","deadline_ms":250,)"
              R"("body_hash":18364758544493064720,"rule":"lose-first","fault":"lost_response","effect":"committed",)"
              R"("outcome":"reset","status":0,"retry_after_ms":2000,"bytes_in":100,"bytes_out":50})"
              "\n");
    const auto plain = to_json(sample(1));
    EXPECT_FALSE(plain.contains("attempt_header"));
    EXPECT_FALSE(plain.contains("deadline_ms"));
    EXPECT_FALSE(plain.contains("retry_after_ms"));
}

TEST(journal_json, the_line_writer_matches_the_object_form) {
    for (std::uint64_t n = 0; n < 12; ++n) {
        auto r = sample(n);
        r.target = "/p?q=\"x\"\\\n\t\x01\x1f/\u00e9\u2603";
        r.rule = "r\b\f\r";
        EXPECT_EQ(to_jsonl_line(r), boost::json::serialize(to_json(r)) + "\n") << n;
    }
}

TEST(journal_json, bytes_that_are_not_utf8_survive_the_round_trip) {
    auto r = sample(1);
    r.target = "/p/\xff\xfe";
    std::istringstream in{to_jsonl_line(r)};
    const auto read = read_jsonl(in, "j.jsonl");
    ASSERT_TRUE(read.ok()) << read.errors.front().to_string();
    EXPECT_EQ(read.records.at(0).target, r.target);
}

TEST(journal_json, bad_lines_are_reported_with_their_numbers) {
    auto good = to_jsonl_line(sample(1));
    std::string bad_enum = good;
    bad_enum.replace(bad_enum.find("\"replayed\""), 10, "\"twice\"");
    std::string missing = good;
    missing.replace(missing.find("\"op\":"), 5, "\"xx\":");
    std::istringstream in{good + "\n" + "{not json\n" + bad_enum + "[1,2]\n" + missing +
                          R"({"seq":-1})" "\n" + good};
    const auto read = read_jsonl(in, "j.jsonl");
    EXPECT_EQ(read.records.size(), 2U);
    ASSERT_EQ(read.errors.size(), 5U);
    EXPECT_EQ(read.errors[0].to_string().rfind("j.jsonl:3: bad journal record: invalid JSON", 0), 0U)
        << read.errors[0].to_string();
    EXPECT_EQ(read.errors[1].to_string(), R"(j.jsonl:4: bad journal record: field "effect": unknown value "twice")");
    EXPECT_EQ(read.errors[2].to_string(), "j.jsonl:5: bad journal record: expected a JSON object");
    EXPECT_EQ(read.errors[3].to_string(), R"(j.jsonl:6: bad journal record: field "op" is missing)");
    EXPECT_EQ(read.errors[4].to_string(),
              R"(j.jsonl:7: bad journal record: field "seq": expected an unsigned integer)");
}

TEST(journal_json, null_optionals_read_as_absent) {
    auto v = boost::json::value(to_json(sample(1)));
    v.as_object()["deadline_ms"] = nullptr;
    std::string error;
    const auto r = record_from_json(v, error);
    ASSERT_TRUE(r) << error;
    EXPECT_FALSE(r->deadline_ms);
}

TEST(journal_json, missing_file_is_an_error) {
    const auto read = read_jsonl(std::string{"/nonexistent-dir-h1/j.jsonl"});
    ASSERT_EQ(read.errors.size(), 1U);
    EXPECT_EQ(read.errors[0].to_string(), "/nonexistent-dir-h1/j.jsonl: cannot open journal file");
}

}  // namespace
}  // namespace faultline::harness
