// A journal's rounds: `POST /__faultline/reset` (a `reset` server event) ends one round and starts
// the next, so the test cases of a suite, reset between them, are judged each on its own and an
// operation never spans two of them. Rounds are numbered from 1 by the resets: an item (attempt or
// server event) is in round 1 + the number of resets at or before its seq, a reset being the first
// event of the round it starts. The server stamps every item with its round and the JSON form writes
// it from round 2 on (journal_json.hpp); a reader numbers the rounds from the reset events, in files
// written before rounds too, and holds a written round to what the resets say. A reset that names its
// round starts that one, so an excerpt (`GET /__faultline/journal?round=3`, a round's journal report)
// reads back as the rounds it holds.
#pragma once

#include "faultline/core/config_error.hpp"
#include "faultline/record/journal_record.hpp"
#include "faultline/record/server_event.hpp"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace faultline::record {

// Where a journal's rounds begin: the seq and number of each reset. Not thread-safe (the server's
// journal holds one under its lock).
class round_boundaries {
public:
    // The reset with `reset_seq` (above every seq passed before) starts the next round; returns its
    // number, or nullopt when max_round rounds have begun (nothing is recorded then).
    std::optional<round_number> start_round(std::uint64_t reset_seq);
    // The reset starts round `number`, which must be above current() (a journal excerpt begins at a
    // later round); nullopt, recording nothing, when it is not.
    std::optional<round_number> start_round(std::uint64_t reset_seq, round_number number);
    // The round of the item with `seq`; before the first reset, the round before the one it starts.
    round_number round_of(std::uint64_t seq) const;
    round_number current() const { return starts_.empty() ? round_number{1} : starts_.back().round; }

private:
    struct round_start {
        std::uint64_t seq;
        round_number round;
    };
    std::vector<round_start> starts_;  // ascending in both
};

// Sets each record's and event's round from the reset events among `events` (in any order): a reset
// that names its round (one above 1, as writers write only those) starts that round, one that does
// not (a file from before rounds) the next. A round an item wrote must be the resets' round: a line
// that says otherwise was edited or moved, and the first one is reported (seq, both rounds); the
// rounds are then left as read. Also errors: resets whose rounds do not ascend, more than max_round.
std::optional<config_error> number_rounds(std::vector<journal_record>& records, std::vector<server_event>& events,
                                          std::string_view name);

// One round of a journal, judged on its own.
struct journal_round {
    round_number number = 1;
    std::vector<journal_record> records;      // its attempts, in the order given
    std::vector<server_event> server_events;  // its server events, in the order given
};

// The rounds that hold attempts, ascending, each with its attempts and events; the events of a round
// without attempts (before the first reset of a suite that resets before each case, two resets in a
// row) are nothing to judge and are left out. A journal without attempts is one round, whole, with
// every event. A journal of one round is moved, not copied.
std::vector<journal_round> split_rounds(std::vector<journal_record> records, std::vector<server_event> events);

}  // namespace faultline::record
