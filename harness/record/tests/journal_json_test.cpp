#include "faultline/record/journal_json.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sample_records.hpp"

namespace faultline::record {
namespace {

using testing::sample;
using testing::sample_wire;
using testing::same;

// sample(n) with its seq set, as a journal writes it.
journal_record numbered_sample(std::uint64_t n) {
    journal_record r = sample(n);
    r.seq = n;
    return r;
}


TEST(journal_json, field_names_are_the_documented_ones) {
    auto r = sample(0);
    r.seq = 12;
    const wire_detail wire = sample_wire(0);
    EXPECT_EQ(to_jsonl_line(r, &wire),
              R"({"seq":12,"conn":1,"conn_req":1,"t_accept":0,"t_request":10,"t_response":-1,"t_end":30,"method":"POST",)"
              R"("target":"/payments?n=0","op":"op-0","op_source":"idempotency_key","attempt":1,)"
              R"("idempotency_key":"k\"0","attempt_header":"0","grpc_previous_attempts":"1","deadline_ms":250,)"
              R"("body_hash":18364758544493064720,"rule":"lose-first","fault":"lost_response","effect":"committed",)"
              R"("outcome":"reset","status":0,"retry_after_ms":2000,"bytes_in":100,"bytes_out":50})"
              "\n");
    const wire_detail proxied = sample_wire(1);
    const std::string upstream = to_jsonl_line(sample(1), &proxied);
    EXPECT_NE(upstream.find(R"("bytes_out":51,"upstream_status":503,"upstream_ns":7})"), std::string::npos) << upstream;
    const wire_detail stream = sample_wire(3);
    const std::string h2 = to_jsonl_line(sample(3), &stream);
    EXPECT_NE(h2.find(R"("bytes_out":53,"protocol":"h2","stream":7,"stream_reset":"CANCEL")"), std::string::npos)
        << h2;
    const auto plain = to_json(sample(1));
    EXPECT_FALSE(plain.contains("attempt_header"));
    EXPECT_FALSE(plain.contains("deadline_ms"));
    EXPECT_FALSE(plain.contains("retry_after_ms"));
    EXPECT_FALSE(plain.contains("conn_req"));
    // Without its wire detail (a journal that kept none), none of the wire's fields; t_response is the
    // record's (retry_after counts from it).
    EXPECT_EQ(plain.at("t_response"), 115);
    for (const char* wire_field : {"t_accept", "body_hash", "bytes_in", "bytes_out", "upstream_status", "protocol", "stream"}) {
        EXPECT_FALSE(plain.contains(wire_field)) << wire_field;
    }
}

TEST(journal_json, wire_fields_are_optional_but_checked_when_present) {
    // A line without them, as a journal that kept no wire details writes it, reads in both paths.
    auto r = sample(3);
    r.seq = 4;
    std::string bare = to_jsonl_line(r);
    std::string spaced = bare;
    spaced.replace(spaced.find("{\"seq\":4"), 8, "{ \"seq\":5");  // no longer the writer's form: Boost.JSON's path
    std::istringstream in{bare + spaced};
    const auto read = read_jsonl(in, "j.jsonl");
    ASSERT_TRUE(read.ok()) << read.errors.front().to_string();
    ASSERT_EQ(read.records.size(), 2U);
    EXPECT_TRUE(same(read.records[0], r));
    r.seq = 5;
    EXPECT_TRUE(same(read.records[1], r));
    // One of the wrong type is an error, in both paths.
    const wire_detail wire = sample_wire(3);
    std::string bad = to_jsonl_line(r, &wire);
    bad.replace(bad.find("\"bytes_in\":103"), 14, "\"bytes_in\":\"103\"");
    std::string bad_spaced = bad;
    bad_spaced.insert(1, " ");
    std::istringstream bad_in{bad + bad_spaced};
    const auto rejected = read_jsonl(bad_in, "j.jsonl");
    EXPECT_TRUE(rejected.records.empty());
    ASSERT_EQ(rejected.errors.size(), 2U);
    EXPECT_EQ(rejected.errors[1].to_string(), R"(j.jsonl:2: bad journal record: field "bytes_in": expected an unsigned integer)");
}

TEST(journal_json, journals_written_before_conn_req_still_read) {
    auto v = boost::json::value(to_json(sample(0)));
    v.as_object().erase("conn_req");
    std::string error;
    const auto r = record_from_json(v, error);
    ASSERT_TRUE(r) << error;
    EXPECT_FALSE(r->connection_request);
    EXPECT_EQ(r->connection, 1U);
}

// Before retry_after counted from it, t_response was a wire detail: a journal that kept none has no
// t_response, and its records read as having none (the check then counts from t_request).
TEST(journal_json, journals_written_before_t_response_was_the_records_still_read) {
    auto r = sample(1);
    r.seq = 4;
    std::string line = to_jsonl_line(r);
    const std::string field = R"("t_response":115,)";
    ASSERT_NE(line.find(field), std::string::npos) << line;
    line.erase(line.find(field), field.size());
    std::string spaced = line;
    spaced.replace(spaced.find("{\"seq\":4"), 8, "{ \"seq\":5");  // not the writer's form: Boost.JSON's path
    std::istringstream in{line + spaced};
    const auto read = read_jsonl(in, "j.jsonl");
    ASSERT_TRUE(read.ok()) << read.errors.front().to_string();
    ASSERT_EQ(read.records.size(), 2U);
    EXPECT_EQ(read.records[0].response_ns, -1);
    EXPECT_EQ(read.records[1].response_ns, -1);
    EXPECT_EQ(read.records[0].finished_ns, 130);
}

TEST(journal_json, the_line_writer_matches_the_object_form) {
    for (std::uint64_t n = 0; n < 12; ++n) {
        auto r = sample(n);
        r.target = "/p?q=\"x\"\\\n\t\x01\x1f/\u00e9\u2603";
        r.rule = "r\b\f\r";
        r.fault = "\"edge\\";  // escapes at both ends of a value
        EXPECT_EQ(to_jsonl_line(r), boost::json::serialize(to_json(r)) + "\n") << n;
    }
}

// The writer makes room ahead of each field: what `out` held stays, and a value longer than any room
// made so far (here 3,000 bytes, a third of them escaped to six) grows it as often as needed.
TEST(journal_json, the_line_writer_appends_after_what_the_buffer_holds_however_long_the_values) {
    auto r = sample(3);
    std::string target = "/";
    for (int i = 0; i < 1000; ++i) target += "a\x01\"";
    r.target = target;
    std::string out = "kept\n";
    append_jsonl_line(out, r, nullptr);
    append_jsonl_line(out, sample(4), nullptr);
    EXPECT_EQ(out, "kept\n" + boost::json::serialize(to_json(r)) + "\n" + boost::json::serialize(to_json(sample(4))) + "\n");
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
    auto good = to_jsonl_line(numbered_sample(1));
    std::string bad_enum = good;
    bad_enum.replace(bad_enum.find("\"replayed\""), 10, "\"twice\"");
    std::string missing = good;
    missing.replace(missing.find("\"op\":"), 5, "\"xx\":");
    std::istringstream in{good + "\n" + "{not json\n" + bad_enum + "[1,2]\n" + missing +
                          R"({"seq":-1})" "\n" + to_jsonl_line(numbered_sample(2))};
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

// A copied line is two attempts to a check: it would invent a double effect. Records and events
// share one seq counter, so an event's seq on a record is a repeat too.
TEST(journal_json, a_seq_seen_twice_is_an_error_whatever_the_order) {
    server_event reset{.kind = server_event_kind::reset, .seq = 2, .at_ns = 1200, .rule = "", .detail = "",
                       .peer = "127.0.0.1:40112"};
    std::string events;
    append_jsonl_line(events, reset);
    const std::string first = to_jsonl_line(numbered_sample(1));
    const std::string second = to_jsonl_line(numbered_sample(2));
    for (const std::string& text : {first + second + first, first + first + second, second + events + first}) {
        std::istringstream in{text};
        const auto read = read_jsonl(in, "j.jsonl");
        ASSERT_EQ(read.errors.size(), 1U) << text;
        EXPECT_EQ(read.errors[0].to_string().rfind("j.jsonl: bad journal: seq ", 0), 0U) << read.errors[0].to_string();
        EXPECT_NE(read.errors[0].message.find("appears 2 times"), std::string::npos) << read.errors[0].message;
    }
    std::istringstream in{second + events + first};
    EXPECT_EQ(read_jsonl(in, "j.jsonl").errors.at(0).message.find("seq 2 "), 13U);
    std::istringstream in_order{first + events.replace(events.find("\"seq\":2"), 7, "\"seq\":3") + second};
    EXPECT_TRUE(read_jsonl(in_order, "j.jsonl").ok());
}

TEST(journal_json, server_events_are_read_apart_from_attempts) {
    server_event reset{.kind = server_event_kind::reset, .seq = 3, .at_ns = 1200, .rule = "", .detail = "",
                       .peer = "127.0.0.1:40112"};
    server_event added{.kind = server_event_kind::rule_added, .seq = 4, .at_ns = 1300, .rule = "r\"1",
                       .detail = R"({"kind":"reset"})", .peer = "127.0.0.1:40113"};
    std::string text = to_jsonl_line(sample(1));
    append_jsonl_line(text, reset);
    append_jsonl_line(text, added);
    EXPECT_EQ(text.substr(text.find("{\"event\"")),
              R"({"event":"reset","seq":3,"t":1200,"rule":"","detail":"","peer":"127.0.0.1:40112"})"
              "\n"
              R"({"event":"rule_added","seq":4,"t":1300,"rule":"r\"1","detail":"{\"kind\":\"reset\"}","peer":"127.0.0.1:40113"})"
              "\n");
    EXPECT_EQ(boost::json::serialize(to_json(added)) + "\n", text.substr(text.rfind("{\"event\"")));
    std::istringstream in{text + R"({"event":"reboot","seq":5,"t":1,"rule":"","detail":"","peer":""})"};
    const auto read = read_jsonl(in, "j.jsonl");
    ASSERT_EQ(read.records.size(), 1U);
    ASSERT_EQ(read.server_events.size(), 2U);
    EXPECT_EQ(read.server_events[0].kind, server_event_kind::reset);
    EXPECT_EQ(read.server_events[0].peer, "127.0.0.1:40112");
    EXPECT_EQ(read.server_events[1].rule, "r\"1");
    EXPECT_EQ(read.server_events[1].detail, R"({"kind":"reset"})");
    ASSERT_EQ(read.errors.size(), 1U);
    EXPECT_EQ(read.errors[0].to_string(), R"(j.jsonl:4: bad journal record: field "event": unknown value "reboot")");
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

TEST(journal_json, every_field_survives_object_and_line_round_trips) {
    for (std::uint64_t n = 0; n < 12; ++n) {
        auto r = sample(n);
        r.seq = n + 1;
        wire_detail wire = sample_wire(n);
        wire.seq = r.seq;
        std::string error;
        wire_detail wire_read;
        const auto from_object = record_from_json(boost::json::value(to_json(r, &wire)), error, &wire_read);
        ASSERT_TRUE(from_object) << error;
        EXPECT_TRUE(same(*from_object, r)) << n;
        EXPECT_TRUE(same(wire_read, wire)) << n;
        std::istringstream in{to_jsonl_line(r)};
        const auto from_line = read_jsonl(in, "j.jsonl");
        ASSERT_TRUE(from_line.ok()) << from_line.errors.front().to_string();
        EXPECT_TRUE(same(from_line.records.at(0), r)) << n;
    }
}

TEST(journal_json, lines_in_the_writers_form_and_in_any_other_read_the_same) {
    for (std::uint64_t n = 0; n < 12; ++n) {
        auto r = sample(n);
        r.seq = n + 1;
        r.target = n % 2 == 0 ? "/p/\xff" : "/p?q=\"x\"\t";  // raw bytes; escapes (only Boost.JSON's path decodes them)
        const std::string line = to_jsonl_line(r);
        // The same object with a space after every comma: no longer the writer's form.
        std::string spaced;
        for (const char c : line) {
            spaced.push_back(c);
            if (c == ',') spaced.push_back(' ');
        }
        // Read apart, since one journal holds a seq once.
        for (const std::string& text : {line, spaced}) {
            std::istringstream in{text};
            const auto read = read_jsonl(in, "j.jsonl");
            ASSERT_TRUE(read.ok()) << read.errors.front().to_string();
            ASSERT_EQ(read.records.size(), 1U);
            EXPECT_TRUE(same(read.records[0], r)) << n;
        }
    }
}

// sample(n)'s journal line (seq n) with the first `from` in it replaced by `to`.
std::string sample_line_with(std::string_view from, std::string_view to, std::uint64_t n = 1) {
    std::string line = to_jsonl_line(numbered_sample(n));
    line.replace(line.find(from), from.size(), to);
    return line;
}

TEST(journal_json, numbers_outside_json_or_the_fields_type_are_reported_as_before) {
    const auto with = [](std::string_view from, std::string_view to) { return sample_line_with(from, to); };
    std::istringstream in{with("\"attempt\":2", "\"attempt\":4294967296") + with("\"status\":201", "\"status\":0201") +
                          with("\"status\":201", "\"status\":2.5") + with("\"t_end\":", "\"t_end\":+")};
    const auto read = read_jsonl(in, "j.jsonl");
    EXPECT_TRUE(read.records.empty());
    ASSERT_EQ(read.errors.size(), 4U);
    EXPECT_EQ(read.errors[0].to_string(), R"(j.jsonl:1: bad journal record: field "attempt": expected an unsigned integer)");
    EXPECT_EQ(read.errors[1].to_string().rfind("j.jsonl:2: bad journal record: invalid JSON", 0), 0U);
    EXPECT_EQ(read.errors[2].to_string(), R"(j.jsonl:3: bad journal record: field "status": expected an unsigned integer)");
    EXPECT_EQ(read.errors[3].to_string().rfind("j.jsonl:4: bad journal record: invalid JSON", 0), 0U);
}

// A record keeps the status in 16 bits and the connection id in 32: a journal holding more is refused
// line by line, never cut short.
TEST(journal_json, status_and_connection_past_their_widths_are_refused) {
    std::uint64_t seq = 0;
    const auto with = [&](std::string_view from, std::string_view to) {
        return sample_line_with(from, to, 1 + 6 * seq++);  // distinct seqs; n % 6 == 1 keeps the fields replaced
    };
    std::istringstream in{with("\"status\":201", "\"status\":65535") + with("\"status\":201", "\"status\":65536") +
                          with("\"status\":201", "\"status\":-1") + with("\"conn\":2", "\"conn\":4294967295") +
                          with("\"conn\":2", "\"conn\":4294967296")};
    const auto read = read_jsonl(in, "j.jsonl");
    ASSERT_EQ(read.records.size(), 2U);
    EXPECT_EQ(read.records[0].status, 65535);
    EXPECT_EQ(read.records[1].connection, 4294967295U);
    ASSERT_EQ(read.errors.size(), 3U);
    EXPECT_EQ(read.errors[0].to_string(), R"(j.jsonl:2: bad journal record: field "status": expected an unsigned integer)");
    EXPECT_EQ(read.errors[1].to_string(), R"(j.jsonl:3: bad journal record: field "status": expected an unsigned integer)");
    EXPECT_EQ(read.errors[2].to_string(), R"(j.jsonl:5: bad journal record: field "conn": expected an unsigned integer)");
}

TEST(journal_json, a_torn_last_line_is_reported_and_the_rest_is_read) {
    const std::string complete = to_jsonl_line(numbered_sample(1)) + to_jsonl_line(numbered_sample(2));
    const std::string torn = to_jsonl_line(numbered_sample(3)).substr(0, 57);
    std::istringstream in{complete + torn};
    const auto read = read_jsonl(in, "j.jsonl");
    EXPECT_TRUE(read.ok());
    EXPECT_EQ(read.records.size(), 2U);
    ASSERT_EQ(read.warnings.size(), 1U);
    EXPECT_EQ(read.warnings[0].to_string(), "j.jsonl:3: journal ends in a torn line (57 bytes) — ignored; the rest is judged");
}

TEST(journal_json, a_complete_last_line_without_its_newline_is_a_record) {
    std::string text = to_jsonl_line(numbered_sample(1)) + to_jsonl_line(numbered_sample(2));
    text.pop_back();
    std::istringstream in{text};
    const auto read = read_jsonl(in, "j.jsonl");
    EXPECT_TRUE(read.ok());
    EXPECT_TRUE(read.warnings.empty());
    EXPECT_EQ(read.records.size(), 2U);
}

TEST(journal_json, a_bad_line_before_the_last_is_corruption) {
    const std::string torn = to_jsonl_line(numbered_sample(3)).substr(0, 57);
    std::istringstream in{to_jsonl_line(numbered_sample(1)) + torn + "\n" + to_jsonl_line(numbered_sample(2))};
    const auto read = read_jsonl(in, "j.jsonl");
    EXPECT_TRUE(read.warnings.empty());
    ASSERT_EQ(read.errors.size(), 1U);
    EXPECT_EQ(read.errors[0].to_string().rfind("j.jsonl:2: bad journal record: invalid JSON", 0), 0U);
    // A torn line that was then terminated is corruption too: the writer went on after it.
    std::istringstream terminated{to_jsonl_line(numbered_sample(1)) + torn + "\n"};
    EXPECT_EQ(read_jsonl(terminated, "j.jsonl").errors.size(), 1U);
    // So is a last line that is JSON but no record: no interrupted write leaves one.
    std::istringstream wrong{to_jsonl_line(numbered_sample(1)) + "[1,2]"};
    EXPECT_EQ(read_jsonl(wrong, "j.jsonl").errors.size(), 1U);
}

TEST(journal_json, lines_longer_than_a_read_block_are_read_whole) {
    auto r = numbered_sample(1);
    r.target = "/" + std::string(3'000'000, 'x');
    std::istringstream in{to_jsonl_line(numbered_sample(2)) + to_jsonl_line(r) + to_jsonl_line(numbered_sample(3))};
    const auto read = read_jsonl(in, "j.jsonl");
    ASSERT_TRUE(read.ok()) << read.errors.front().to_string();
    ASSERT_EQ(read.records.size(), 3U);
    EXPECT_EQ(read.records[1].target, r.target);
    EXPECT_TRUE(same(read.records[2], numbered_sample(3)));
}

// Files of jsonl_two_halves_from bytes or more are read in two halves at once. These write such files
// and hold what comes back to what one thread reading the same bytes as a stream gives.

// Writer-form lines of distinct records (seq = 1, 2, …), together at least `bytes` long.
std::vector<std::string> numbered_lines(std::uintmax_t bytes) {
    std::vector<std::string> lines;
    for (std::uintmax_t total = 0; total < bytes;) {
        auto r = sample(lines.size());
        r.seq = lines.size() + 1;
        lines.push_back(to_jsonl_line(r));
        total += lines.back().size();
    }
    return lines;
}

std::string joined(const std::vector<std::string>& lines) {
    std::string out;
    for (const auto& l : lines) out += l;
    return out;
}

// Makes a line invalid JSON without changing its length, so the offsets of the others stay.
void spoil(std::string& line) { line.front() = '['; }

class journal_file {
public:
    explicit journal_file(const std::string& text)
        : path_{(std::filesystem::temp_directory_path() /
                 ("faultline-journal-" + std::to_string(::getpid()) + "-" +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".jsonl"))
                    .string()} {
        std::ofstream{path_, std::ios::binary} << text;
    }
    ~journal_file() { std::filesystem::remove(path_); }
    journal_file(const journal_file&) = delete;
    journal_file& operator=(const journal_file&) = delete;

    const std::string& path() const { return path_; }

private:
    std::string path_;
};

std::vector<std::string> texts(const config_errors& errors) {
    std::vector<std::string> out;
    for (const auto& e : errors) out.push_back(e.to_string());
    return out;
}

// Reads `text` from a file and as a stream, and checks the two agree in every record, event, error
// and warning, in order. Returns the file's result.
jsonl_read_result read_both_ways(const std::string& text) {
    const journal_file file{text};
    auto from_file = read_jsonl(file.path());
    std::istringstream in{text};
    const auto from_stream = read_jsonl(in, file.path());
    EXPECT_EQ(texts(from_file.errors), texts(from_stream.errors));
    EXPECT_EQ(texts(from_file.warnings), texts(from_stream.warnings));
    EXPECT_EQ(from_file.records.size(), from_stream.records.size());
    for (std::size_t i = 0; i < std::min(from_file.records.size(), from_stream.records.size()); ++i) {
        if (!same(from_file.records[i], from_stream.records[i])) {
            ADD_FAILURE() << "record " << i << " differs";
            break;
        }
    }
    EXPECT_EQ(from_file.server_events.size(), from_stream.server_events.size());
    for (std::size_t i = 0; i < std::min(from_file.server_events.size(), from_stream.server_events.size()); ++i) {
        EXPECT_EQ(from_file.server_events[i].seq, from_stream.server_events[i].seq) << i;
    }
    // Messages name the file; the tests compare them with the name they expect.
    for (auto* errors : {&from_file.errors, &from_file.warnings}) {
        for (auto& e : *errors) e.where.file = "j.jsonl";
    }
    return from_file;
}

std::string event_line(std::uint64_t seq) {
    std::string out;
    append_jsonl_line(out, server_event{.kind = server_event_kind::rule_added, .seq = seq, .at_ns = 0, .rule = "r",
                                        .detail = "{}", .peer = "127.0.0.1:1"});
    return out;
}

TEST(journal_json_two_halves, records_and_events_keep_file_order) {
    auto lines = numbered_lines(jsonl_two_halves_from + 100'000);
    // Events among the records, in both halves; their seq is their line number.
    for (std::size_t i = 0; i < lines.size(); i += 997) lines[i] = event_line(i + 1);
    const auto read = read_both_ways(joined(lines));
    ASSERT_TRUE(read.ok());
    std::vector<std::uint64_t> record_seqs;
    std::vector<std::uint64_t> event_seqs;
    for (std::size_t i = 0; i < lines.size(); ++i) (i % 997 == 0 ? event_seqs : record_seqs).push_back(i + 1);
    ASSERT_EQ(read.records.size(), record_seqs.size());
    for (std::size_t i = 0; i < record_seqs.size(); ++i) {
        auto expected = sample(record_seqs[i] - 1);
        expected.seq = record_seqs[i];
        ASSERT_TRUE(same(read.records[i], expected)) << i;
    }
    ASSERT_EQ(read.server_events.size(), event_seqs.size());
    for (std::size_t i = 0; i < event_seqs.size(); ++i) EXPECT_EQ(read.server_events[i].seq, event_seqs[i]);
}

TEST(journal_json_two_halves, bad_lines_keep_their_numbers_in_either_half) {
    auto lines = numbered_lines(jsonl_two_halves_from + 100'000);
    const std::size_t n = lines.size();
    spoil(lines[2]);
    spoil(lines[n * 3 / 4]);
    lines[n - 2] = R"({"seq":"x"})" "\n";
    const auto read = read_both_ways(joined(lines));
    ASSERT_EQ(read.errors.size(), 3U);
    EXPECT_EQ(read.errors[0].to_string().rfind("j.jsonl:3: bad journal record: invalid JSON", 0), 0U);
    EXPECT_EQ(read.errors[1].to_string().rfind("j.jsonl:" + std::to_string(n * 3 / 4 + 1) + ": bad journal record: invalid JSON", 0), 0U);
    EXPECT_EQ(read.errors[2].to_string(),
              "j.jsonl:" + std::to_string(n - 1) + R"(: bad journal record: field "seq": expected an unsigned integer)");
    EXPECT_EQ(read.records.size(), n - 3);
}

TEST(journal_json_two_halves, a_torn_last_line_is_a_warning_with_its_number) {
    const auto lines = numbered_lines(jsonl_two_halves_from + 100'000);
    const auto read = read_both_ways(joined(lines) + to_jsonl_line(sample(3)).substr(0, 57));
    EXPECT_TRUE(read.ok());
    EXPECT_EQ(read.records.size(), lines.size());
    ASSERT_EQ(read.warnings.size(), 1U);
    EXPECT_EQ(read.warnings[0].to_string(), "j.jsonl:" + std::to_string(lines.size() + 1) +
                                                ": journal ends in a torn line (57 bytes) — ignored; the rest is judged");
}

TEST(journal_json_two_halves, crlf_lines_read_as_lf_lines) {
    auto lines = numbered_lines(jsonl_two_halves_from + 100'000);
    for (auto& l : lines) l.insert(l.size() - 1, "\r");
    spoil(lines[lines.size() - 10]);
    const auto read = read_both_ways(joined(lines));
    ASSERT_EQ(read.errors.size(), 1U);
    EXPECT_EQ(read.errors[0].to_string().rfind("j.jsonl:" + std::to_string(lines.size() - 9) + ": bad journal record: invalid JSON", 0), 0U);
    EXPECT_EQ(read.records.size(), lines.size() - 1);
}

TEST(journal_json_two_halves, the_line_across_the_middle_is_read_once) {
    auto lines = numbered_lines(jsonl_two_halves_from + 100'000);
    const std::uintmax_t middle = joined(lines).size() / 2;
    std::size_t across = 0;  // the line holding the middle byte
    std::uintmax_t start = 0;
    for (; start + lines[across].size() <= middle; start += lines[across++].size()) {
    }
    ASSERT_LT(start, middle);  // it starts before the middle: the split must not cut it
    spoil(lines[across]);
    const auto read = read_both_ways(joined(lines));
    ASSERT_EQ(read.errors.size(), 1U);
    EXPECT_EQ(read.errors[0].to_string().rfind("j.jsonl:" + std::to_string(across + 1) + ": bad journal record: invalid JSON", 0), 0U);
    EXPECT_EQ(read.records.size(), lines.size() - 1);
}

TEST(journal_json_two_halves, a_line_starting_at_the_middle_begins_the_second_half) {
    auto lines = numbered_lines(jsonl_two_halves_from + 100'000);
    const std::uintmax_t total = joined(lines).size();
    // Lines [0, j) and a blank line of `pad` bytes in front make exactly half the file.
    std::size_t j = lines.size() / 2;
    std::uintmax_t before = 0;
    for (std::size_t i = 0; i < j; ++i) before += lines[i].size();
    while (total < 2 * before + 2) before -= lines[--j].size();
    const std::uintmax_t pad = total - 2 * before;
    lines.insert(lines.begin(), std::string(pad - 1, ' ') + "\n");
    // Now lines[j + 1] starts at the middle byte and lines[j] ends just before it.
    spoil(lines[j]);
    spoil(lines[j + 1]);
    const std::string text = joined(lines);
    ASSERT_EQ(text[text.size() / 2 - 1], '\n');
    const auto read = read_both_ways(text);
    ASSERT_EQ(read.errors.size(), 2U);
    EXPECT_EQ(read.errors[0].to_string().rfind("j.jsonl:" + std::to_string(j + 1) + ": bad journal record", 0), 0U);
    EXPECT_EQ(read.errors[1].to_string().rfind("j.jsonl:" + std::to_string(j + 2) + ": bad journal record", 0), 0U);
    EXPECT_EQ(read.records.size(), lines.size() - 3);
}

TEST(journal_json_two_halves, files_either_side_of_the_threshold_read_the_same) {
    for (const std::uintmax_t size : {jsonl_two_halves_from - 1, jsonl_two_halves_from, jsonl_two_halves_from + 1}) {
        auto lines = numbered_lines(size - 1000);
        const std::uintmax_t total = joined(lines).size();
        ASSERT_LT(total + 2, size);
        lines.push_back(std::string(size - total - 1, ' ') + "\n");  // blank: skipped, but it counts
        spoil(lines[lines.size() - 2]);
        const std::string text = joined(lines);
        ASSERT_EQ(text.size(), size);
        const auto read = read_both_ways(text);
        ASSERT_EQ(read.errors.size(), 1U) << size;
        EXPECT_EQ(read.errors[0].to_string().rfind("j.jsonl:" + std::to_string(lines.size() - 1) + ": bad journal record", 0), 0U);
        EXPECT_EQ(read.records.size(), lines.size() - 2) << size;
    }
}

TEST(journal_json_two_halves, a_last_line_longer_than_half_the_file_is_read_whole) {
    auto long_one = numbered_sample(5);
    long_one.target = "/" + std::string(jsonl_two_halves_from, 'x');
    const auto read = read_both_ways(to_jsonl_line(numbered_sample(1)) + to_jsonl_line(numbered_sample(2)) + to_jsonl_line(long_one));
    ASSERT_TRUE(read.ok());
    ASSERT_EQ(read.records.size(), 3U);
    EXPECT_TRUE(same(read.records[2], long_one));
}

// The records are placed in one vector reserved from the first block's lines; lines shorter later
// on overflow each half's share, and those records must still come out in file order.
TEST(journal_json_two_halves, records_beyond_the_first_blocks_estimate_keep_file_order) {
    std::vector<std::string> lines;
    std::uintmax_t total = 0;
    for (std::size_t i = 0; total < (std::uintmax_t{5} << 18); ++i) {  // 1.25 MiB: into both halves' shares
        auto r = sample(i);
        r.seq = i + 1;
        r.target = "/" + std::string(4000, static_cast<char>('a' + i % 26));
        lines.push_back(to_jsonl_line(r));
        total += lines.back().size();
    }
    for (std::size_t i = lines.size(); total < (std::uintmax_t{6} << 20); ++i) {
        auto r = sample(i);
        r.seq = i + 1;
        lines.push_back(to_jsonl_line(r));
        total += lines.back().size();
    }
    spoil(lines[lines.size() / 2 + 5]);
    const auto read = read_both_ways(joined(lines));
    ASSERT_EQ(read.errors.size(), 1U);
    ASSERT_EQ(read.records.size(), lines.size() - 1);
    for (std::size_t i = 1; i < read.records.size(); ++i) ASSERT_LT(read.records[i - 1].seq, read.records[i].seq) << i;
}

}  // namespace
}  // namespace faultline::record
