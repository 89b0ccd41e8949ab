// Several instances, one history: the journals of several `serve` / `proxy` instances (a chain of
// tiers, a fleet of sidecars) merged into one journal that the checks judge as a whole. Operation
// identity is the journal's own ("op"), so an operation that passed through several instances is one
// operation in the merged history. Each journal is put on one timeline by its wall-clock anchor (its
// `started` event, server_event.hpp): its times are shifted by how much later than the earliest
// anchor it started. Every record keeps or gets its instance tag (the journal's name when the
// writer gave none); connection ids are renumbered per (instance, connection) and seq numbers
// reassigned in merged time order, so both stay unique; attempt numbers stay as each instance
// counted them, and so do rounds (each journal's own resets).
#pragma once

#include "faultline/record/journal_record.hpp"
#include "faultline/record/server_event.hpp"

#include <optional>
#include <string>
#include <vector>

namespace faultline::record {

struct named_journal {
    std::string name;  // the instance tag for records without one (e.g. the file name)
    std::vector<journal_record> records;
    std::vector<server_event> server_events;
    std::vector<wire_detail> wire;  // the records' wire details in the same order, or none
};

struct merged_journal {
    std::vector<journal_record> records;      // in merged time order (t_request), seq 1..N with the events
    std::vector<wire_detail> wire;            // the wire details there were, in the same order (by seq)
    std::vector<server_event> server_events;  // in merged time order
    std::vector<std::string> warnings;        // a journal without an anchor among anchored ones
};

// The wall clock at a journal's t = 0 (Unix ns), from its first `started` event with a numeric detail.
std::optional<std::int64_t> wall_anchor_ns(const std::vector<server_event>& events);
// The seed a journal's writer decided its faults with, from its first `started` event that names one.
std::optional<std::uint64_t> journal_seed(const std::vector<server_event>& events);

merged_journal merge_journals(std::vector<named_journal> journals);

}  // namespace faultline::record
