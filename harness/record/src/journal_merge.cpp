#include "faultline/record/journal_merge.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <map>
#include <tuple>
#include <utility>

namespace faultline::record {

std::optional<std::int64_t> wall_anchor_ns(const std::vector<server_event>& events) {
    for (const server_event& e : events) {
        if (e.kind != server_event_kind::started) continue;
        std::int64_t wall = 0;
        const char* first = e.detail.data();
        const char* last = first + e.detail.size();
        const auto [end, ec] = std::from_chars(first, last, wall);
        if (ec == std::errc{} && end == last) return wall - e.at_ns;
    }
    return std::nullopt;
}

std::optional<std::uint64_t> journal_seed(const std::vector<server_event>& events) {
    for (const server_event& e : events) {
        if (e.kind == server_event_kind::started && e.seed) return e.seed;
    }
    return std::nullopt;
}

merged_journal merge_journals(std::vector<named_journal> journals) {
    merged_journal out;
    std::vector<std::optional<std::int64_t>> anchors;
    std::optional<std::int64_t> earliest;
    for (const auto& j : journals) {
        anchors.push_back(wall_anchor_ns(j.server_events));
        if (anchors.back() && (!earliest || *anchors.back() < *earliest)) earliest = anchors.back();
    }
    std::map<std::pair<std::size_t, std::uint64_t>, std::uint64_t> connections;
    // (time, journal, position) orders records and events of equal time the way each journal did.
    struct entry {
        std::int64_t at_ns;
        std::size_t journal;
        std::uint64_t original_seq;
        bool is_event;
        std::size_t index;
    };
    // A fleet's history is every instance's records at once: each is moved once into `records` and
    // once more into place, each journal's storage freed as soon as it was taken, and wire details
    // (only `faultline run` keeps them) indexed only when a journal has them.
    std::size_t total = 0;
    bool any_wire = false;
    for (const auto& j : journals) {
        total += j.records.size();
        any_wire = any_wire || (!j.wire.empty() && j.wire.size() == j.records.size());
    }
    std::vector<entry> order;
    order.reserve(total);
    std::vector<journal_record> records;
    records.reserve(total);
    std::vector<std::optional<wire_detail>> wires;  // by record index, when any_wire
    if (any_wire) wires.reserve(total);
    std::vector<server_event> events;
    for (std::size_t i = 0; i < journals.size(); ++i) {
        named_journal& j = journals[i];
        std::int64_t offset = 0;
        if (anchors[i]) {
            offset = *anchors[i] - *earliest;
        } else if (earliest) {
            out.warnings.push_back(j.name + ": no wall-clock anchor (a `started` event); its times are taken to begin "
                                            "with the earliest anchored journal's");
        }
        const symbol instance{j.name};
        const bool has_wire = j.wire.size() == j.records.size();
        for (std::size_t k = 0; k < j.records.size(); ++k) {
            journal_record& r = j.records[k];
            if (any_wire) {
                std::optional<wire_detail>& wire = wires.emplace_back();
                if (has_wire) {
                    wire = j.wire[k];
                    wire->accepted_ns += offset;
                }
            }
            r.request_ns += offset;
            if (r.response_ns >= 0) r.response_ns += offset;
            r.finished_ns += offset;
            if (!r.instance) r.instance = instance;
            const auto [it, fresh] = connections.try_emplace({i, r.connection}, connections.size() + 1);
            r.connection = static_cast<std::uint32_t>(it->second);
            order.push_back({r.request_ns, i, r.seq, false, records.size()});
            records.push_back(std::move(r));
        }
        std::vector<journal_record>{}.swap(j.records);
        std::vector<wire_detail>{}.swap(j.wire);
        for (server_event& e : j.server_events) {
            e.at_ns += offset;
            if (e.kind == server_event_kind::started && e.peer.empty()) e.peer = j.name;
            order.push_back({e.at_ns, i, e.seq, true, events.size()});
            events.push_back(std::move(e));
        }
    }
    std::stable_sort(order.begin(), order.end(), [](const entry& a, const entry& b) {
        return std::tie(a.at_ns, a.journal, a.original_seq) < std::tie(b.at_ns, b.journal, b.original_seq);
    });
    out.records.reserve(records.size());
    std::uint64_t seq = 0;
    for (const entry& e : order) {
        if (e.is_event) {
            events[e.index].seq = ++seq;
            out.server_events.push_back(std::move(events[e.index]));
        } else {
            records[e.index].seq = ++seq;
            out.records.push_back(std::move(records[e.index]));
            if (!any_wire) continue;
            if (std::optional<wire_detail>& wire = wires[e.index]) {
                wire->seq = seq;
                out.wire.push_back(*wire);
            }
        }
    }
    return out;
}

}  // namespace faultline::record
