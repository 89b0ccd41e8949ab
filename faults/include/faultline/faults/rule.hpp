// A fault rule: match (which requests) + trigger (when) + a configured fault kind (what). Rules are
// values; the engine (engine.hpp) holds an ordered list of them and applies the first one that fires.
// They are built by the TOML parser (rules_toml.hpp) or by hand in tests.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "faultline/core/config_error.hpp"
#include "faultline/faults/barrier.hpp"
#include "faultline/faults/kind.hpp"
#include "faultline/faults/request.hpp"

namespace faultline::faults {

// `*` matches any run of characters (including '/' and none), `?` exactly one; everything else
// literally. Worst case O(pattern x text): only the last `*` is ever revisited.
bool glob_match(std::string_view pattern, std::string_view text);

struct header_equals {
    std::string name;   // case-insensitive
    std::string value;  // compared exactly
};

// Which requests a rule applies to. Every present condition must hold; an empty match matches all.
struct request_match {
    std::vector<std::string> methods;          // any of these (exact); empty: any method
    std::optional<std::string> path;           // glob on the target's path (before '?')
    std::vector<header_equals> headers;        // each header present with exactly this value
    std::vector<std::string> headers_present;  // each header present, any value

    bool empty() const { return methods.empty() && !path && headers.empty() && headers_present.empty(); }
    bool matches(const request_view& request) const;
};

// When a matching rule fires. Every present condition must hold (a combination is their "and");
// an empty trigger always fires.
//  - probability: a draw from the decision key (seed, rule, operation, attempt) is below it, so an
//    operation's n-th attempt gets the same answer in every run with the same seed.
//  - attempts: the attempt number within the operation is one of these.
//  - first / every: on the server-wide request_seq (connection_seq for connection-level kinds):
//    seq <= first, seq % every == 0. These depend on arrival order by nature.
//  - from / for_duration: since_start in [from, from + for). These depend on arrival time by nature.
//    They are the only conditions a listener-level rule takes: its window (fault_engine::on_listener).
// `barrier` is not a condition: it says when a fired rule's fault is delivered. The attempt is held
// until `count` fired attempts of the rule have gathered or the timeout passes (barrier.hpp).
struct trigger {
    std::optional<double> probability;
    std::vector<std::uint32_t> attempts;
    std::optional<std::uint64_t> first;
    std::optional<std::uint64_t> every;
    std::optional<std::chrono::nanoseconds> from;
    std::optional<std::chrono::nanoseconds> for_duration;
    std::optional<barrier_config> barrier;

    // `trigger_draw` is unit_from_hash of the trigger subkey of the decision key.
    bool holds(double trigger_draw, std::uint32_t attempt, std::uint64_t seq,
               std::chrono::nanoseconds since_start) const;
};

struct rule {
    std::string name;  // unique within an engine; part of every decision key
    std::string kind;  // registered kind name
    request_match match;
    trigger when;
    std::shared_ptr<const fault_kind> fault;
    fault_level level = fault_level::attempt;  // == fault->level(), cached
    boost::json::object source;  // the rule as written (TOML table as JSON), for listing
    source_position where;       // where it was defined; empty file for rules added at runtime
    // `min_fired`: a scenario run in which the rule fired fewer times fails (the runner judges it;
    // the engine ignores it).
    std::optional<std::uint64_t> min_fired;
};

}  // namespace faultline::faults
