#include "faultline/record/journal_rounds.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <string>
#include <utility>

namespace faultline::record {

std::optional<round_number> round_boundaries::start_round(std::uint64_t reset_seq) {
    if (current() == max_round) return std::nullopt;
    return start_round(reset_seq, static_cast<round_number>(current() + 1));
}

std::optional<round_number> round_boundaries::start_round(std::uint64_t reset_seq, round_number number) {
    if (number <= current()) return std::nullopt;
    starts_.push_back({reset_seq, number});
    return number;
}

round_number round_boundaries::round_of(std::uint64_t seq) const {
    // Resets are rare and an item is almost always of the current round: one comparison.
    if (starts_.empty() || seq >= starts_.back().seq) return current();
    const auto after = std::upper_bound(starts_.begin(), starts_.end(), seq,
                                        [](std::uint64_t s, const round_start& start) { return s < start.seq; });
    return after == starts_.begin() ? static_cast<round_number>(after->round - 1) : std::prev(after)->round;
}

namespace {

// The first item whose written round is not the resets' one, as an error; each item's round is set.
template <class Item>
std::optional<config_error> numbered(std::vector<Item>& items, const round_boundaries& rounds, std::string_view name) {
    for (Item& item : items) {
        const round_number by_resets = rounds.round_of(item.seq);
        if (item.round != 1 && item.round != by_resets) {
            return config_error{{std::string{name}, 0, 0},
                                "bad journal: seq " + std::to_string(item.seq) + " says round " +
                                    std::to_string(item.round) + ", but the reset events before it put it in round " +
                                    std::to_string(by_resets) +
                                    " (a reset starts the next round): lines were edited, moved or merged from "
                                    "another journal"};
        }
        item.round = by_resets;
    }
    return std::nullopt;
}

}  // namespace

std::optional<config_error> number_rounds(std::vector<journal_record>& records, std::vector<server_event>& events,
                                          std::string_view name) {
    std::vector<const server_event*> resets;
    for (const server_event& e : events) {
        if (e.kind == server_event_kind::reset) resets.push_back(&e);
    }
    std::sort(resets.begin(), resets.end(), [](const server_event* a, const server_event* b) { return a->seq < b->seq; });
    round_boundaries rounds;
    for (const server_event* reset : resets) {
        const round_number before = rounds.current();
        // A reset written before rounds names none (1): it starts the next.
        if (reset->round > 1 ? rounds.start_round(reset->seq, reset->round) : rounds.start_round(reset->seq)) continue;
        if (before == max_round) {
            return config_error{{std::string{name}, 0, 0},
                                "bad journal: more than " + std::to_string(max_round) +
                                    " rounds (reset events), the most a journal numbers"};
        }
        return config_error{{std::string{name}, 0, 0},
                            "bad journal: the reset at seq " + std::to_string(reset->seq) + " starts round " +
                                std::to_string(reset->round) + ", but round " + std::to_string(before) +
                                " began before it: lines were edited, moved or merged from another journal"};
    }
    if (auto error = numbered(records, rounds, name)) return error;
    return numbered(events, rounds, name);
}

std::vector<journal_round> split_rounds(std::vector<journal_record> records, std::vector<server_event> events) {
    std::map<round_number, journal_round> by_number;
    for (const journal_record& r : records) by_number[r.round].number = r.round;
    if (by_number.size() <= 1) {
        const round_number only = by_number.empty() ? round_number{1} : by_number.begin()->first;
        // The events of rounds without attempts go with the one that has them, as when nothing is split.
        std::vector<journal_round> out(1);
        out.front() = {only, std::move(records), std::move(events)};
        return out;
    }
    for (journal_record& r : records) by_number[r.round].records.push_back(r);
    records = {};  // held once more only while it is split
    for (server_event& e : events) {
        if (const auto it = by_number.find(e.round); it != by_number.end()) it->second.server_events.push_back(std::move(e));
    }
    std::vector<journal_round> out;
    out.reserve(by_number.size());
    for (auto& [number, round] : by_number) out.push_back(std::move(round));
    return out;
}

}  // namespace faultline::record
