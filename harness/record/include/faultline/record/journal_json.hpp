// The journal's JSON form — the stable interface for checks and third-party tooling. One attempt is one
// JSON object with exactly the field names given in journal_record.hpp, its record's and its wire
// detail's together; optional fields are omitted when absent, and so are all of the wire detail's
// when the writer kept none; enums are their to_string names. A journal file is JSON Lines: one
// object per line.
// `faultline check JOURNAL.jsonl` reads files back with `read_jsonl`; every bad line is reported with
// its line number, and a torn last line (a writer killed mid-line) is reported and left out. A record's
// and an event's "round" is written from round 2 on; reading, the reset events number the rounds
// (journal_rounds.hpp).
#pragma once

#include "faultline/core/config_error.hpp"
#include "faultline/record/server_event.hpp"
#include "faultline/record/journal_record.hpp"

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <istream>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace faultline::record {

// `wire`: the record's wire detail, or null to leave its fields out.
boost::json::object to_json(const journal_record& record, const wire_detail* wire = nullptr);
// One line of JSON Lines: serialize(to_json(record, wire)) and a '\n', written without building the
// object. Strings are written byte for byte (escaping only what JSON requires), so a target that is
// not valid UTF-8 stays as it came off the wire; read_jsonl accepts such lines.
std::string to_jsonl_line(const journal_record& record, const wire_detail* wire = nullptr);
void append_jsonl_line(std::string& out, const journal_record& record, const wire_detail* wire = nullptr);
// A server event's line ({"event":KIND,…}, server_event.hpp), and its object form.
void append_jsonl_line(std::string& out, const server_event& event);
boost::json::object to_json(const server_event& event);
// A whole journal as JSON Lines: `records` in seq order, each with its detail from `wire` (also in seq
// order; a record without one gets no wire fields), and the server `events` (in seq order) between
// them where their seqs put them, so the file reads back with its rounds (journal_rounds.hpp).
std::string to_jsonl(std::span<const journal_record> records, std::span<const wire_detail> wire = {},
                     std::span<const server_event> events = {});

// Parses one record, and into `wire` (when given) its wire detail. Every non-optional field of the
// record is required, the wire detail's are not; unknown fields are ignored (newer writers may add
// some). On failure returns nullopt and sets `error` (naming the field).
std::optional<journal_record> record_from_json(const boost::json::value& v, std::string& error,
                                               wire_detail* wire = nullptr);

// Parses one server event (an object with an "event" field); like record_from_json.
std::optional<server_event> server_event_from_json(const boost::json::value& v, std::string& error);

// What `faultline check` needs of a journal file: the records (wire details are checked, not kept).
struct jsonl_read_result {
    std::vector<journal_record> records;  // the lines that parsed, in file order
    std::vector<server_event> server_events;  // lines with an "event" field, in file order
    config_errors errors;                 // one per bad line: {file, line, 0}, "bad journal record: …"
    // Not errors: a torn last line, "journal ends in a torn line (N bytes) — ignored; the rest is judged".
    config_errors warnings;
    bool ok() const { return errors.empty(); }
};

// Blank lines are skipped. A file that cannot be opened gives one error with line 0. A last line
// without its '\n' that is not valid JSON is what a writer killed mid-line leaves behind: it is left
// out with a warning, and the lines before it still count. A bad line anywhere else, or a last line
// that is valid JSON but not a valid record, is an error: that is corruption, not an interrupted write.
// Lines in the writer's own form are read without building a JSON value first; any other line is
// parsed with Boost.JSON, with the same result.
// A file of `jsonl_two_halves_from` bytes or more is read in two halves at once, the second (from the
// first line that starts in it) on a thread of its own, into one vector; what comes out is what one
// thread would give, line numbers included. A stream is read on the calling thread.
// Once read, a seq seen twice is an error, and so is a round that is not the one the reset events
// before it make (number_rounds); every record and event then has its round.
jsonl_read_result read_jsonl(const std::string& path);
jsonl_read_result read_jsonl(std::istream& in, std::string_view name);

// Below this a second thread costs more than it saves (4 MiB read in ~5 ms on one).
inline constexpr std::uintmax_t jsonl_two_halves_from = std::uintmax_t{4} << 20;

}  // namespace faultline::record
