// The toxics file of `faultline proxy --mode tcp --rules FILE` and the engine's decision of which
// toxics act on a connection. The file is a list of `[[toxic]]` tables:
//
//   [[toxic]]
//   kind = "latency"          # a registered toxic (toxic.hpp); required
//   name = "slow-replies"     # default "<kind>-<position in the file>", e.g. "latency-1"; unique
//   stream = "downstream"     # upstream (client -> service) | downstream (default); not for `refused`
//   toxicity = 0.5            # share of connections it acts on, 0..1 (default 1)
//   from = "2s"               # a window after the proxy started (default: from the start) ...
//   for = "10s"               # ... this long (default: no end)
//   first = 100               # only connections 1..100
//   every = 3                 # only connections 3, 6, 9, ...
//   latency = "100ms"         # the kind's own keys
//
// Read through the one strict reader: problems are `file:line:column: [[toxic]] "name": key: …`, and
// unknown keys are errors listing the allowed ones.
//
// Decisions are seeded and order-independent: whether toxic T acts on connection n is a pure function
// of (seed, T's name, n) and, for a window, of the connection's accept time; so `--seed` replays the
// same decisions whatever else happens. Toxicity is rolled once per connection, as in Toxiproxy.
#pragma once

#include "faultline/core/config_error.hpp"
#include "faultline/tcp/toxic.hpp"

#include <toml++/toml.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace faultline::tcp {

struct configured_toxic {
    std::string name;
    std::string kind;
    std::optional<stream_direction> stream;  // none for a connection-level toxic (refused)
    double toxicity = 1.0;
    std::chrono::nanoseconds from{0};
    std::optional<std::chrono::nanoseconds> for_duration;
    std::optional<std::uint64_t> first;
    std::optional<std::uint64_t> every;
    std::shared_ptr<const toxic> behaviour;
};

struct toxic_set {
    std::vector<configured_toxic> toxics;  // in file order, which is the order they amend a plan
};

struct toxics_result {
    std::optional<toxic_set> set;  // empty when there were errors
    config_errors errors;
    bool ok() const { return errors.empty(); }
};

toxics_result parse_toxics(std::string_view text, const std::string& file);
// One [[toxic]] table (a toxic posted to a proxy set's control API); `index` (1-based) makes the
// default name. nullopt when it recorded errors.
std::optional<configured_toxic> parse_toxic(const toml::table& table, const std::string& file, std::size_t index,
                                            config_errors& errors);
// The value of a `toxic` key, an array of [[toxic]] tables (a toxics file's, a [[proxy]] table's):
// each parsed, names unique.
toxics_result parse_toxic_array(const toml::node& node, const std::string& file);
// A file that cannot be read or parsed is one error.
toxics_result load_toxics(const std::string& path);

// Whether `toxic` acts on connection `connection` (1-based), accepted `since_start` after the proxy
// started: its window and first/every, then its toxicity rolled from (seed, name, connection).
bool toxic_applies(const configured_toxic& toxic, std::uint64_t seed, std::uint64_t connection,
                   std::chrono::nanoseconds since_start);

// The key of the private random stream toxic `name` draws from on `connection` (jitter, slice sizes);
// independent of the toxicity roll's.
std::uint64_t toxic_stream_key(std::uint64_t seed, std::string_view name, std::uint64_t connection);

}  // namespace faultline::tcp
