// The fault-kind contract and registry. A fault kind is one small file (faults/src/kinds/<name>.cpp):
// a type that holds only its configuration, read and validated from its rule's TOML table through a
// `kind_config`, and that turns an attempt (or a new connection) into an action from action.hpp.
// Probability, triggers and caps belong to the engine, never to a kind. Each file registers its kind
// with one `kind_registration` object; the faults library is linked whole-archive so those objects
// survive static linking. See faults/README.md for the recipe.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "faultline/core/config_error.hpp"
#include "faultline/core/random.hpp"
#include "faultline/core/registry.hpp"
#include "faultline/faults/action.hpp"
#include "faultline/faults/request.hpp"

namespace faultline::faults {

// One unit of a bounded capacity, held for as long as this object lives (an active-fault slot, an
// overload in-flight slot). Move-only; releasing is lock-free and safe from any thread, and the
// counter it points to stays alive while any slot does.
class held_slot {
public:
    held_slot() = default;
    held_slot(held_slot&& other) noexcept;
    held_slot& operator=(held_slot&& other) noexcept;
    held_slot(const held_slot&) = delete;
    held_slot& operator=(const held_slot&) = delete;
    ~held_slot();

    bool holds() const { return counter_ != nullptr; }

private:
    friend class capacity;
    explicit held_slot(std::shared_ptr<std::atomic<std::int64_t>> counter) : counter_{std::move(counter)} {}
    void release();

    std::shared_ptr<std::atomic<std::int64_t>> counter_;
};

// A counting limit: at most `limit` slots out at once. Thread-safe. Copies share the same count.
class capacity {
public:
    explicit capacity(std::int64_t limit);

    // A slot, or nothing when `limit` slots are already out.
    std::optional<held_slot> try_acquire();
    std::int64_t in_use() const { return counter_->load(std::memory_order_relaxed); }
    std::int64_t limit() const { return limit_; }

private:
    std::int64_t limit_;
    std::shared_ptr<std::atomic<std::int64_t>> counter_;
};

// Whether a kind acts on a new connection (before any request is read: refuse, reset/close with
// phase before_read) or on an attempt. The engine asks each kind only at its own level.
enum class fault_level { connection, attempt };

// What a kind decides for one attempt: a plan (the fault fired) or none (serve normally). `hold`
// is capacity the kind keeps for the attempt's lifetime (overload's in-flight slot), whether or
// not a plan is returned; the engine moves it into the fault_decision.
struct kind_outcome {
    std::optional<fault_plan> plan;
    held_slot hold;
};

// A configured fault kind. Instances are immutable after construction except for explicitly
// synchronised capacity state (overload), so one instance is shared by every thread of a server.
class fault_kind {
public:
    virtual ~fault_kind() = default;

    virtual fault_level level() const { return fault_level::attempt; }
    // Connection-level kinds: what to do with the connection. Called only when the rule fires.
    virtual connection_verdict on_connection(const connection_context&) const { return connection_verdict::accept; }
    // Attempt-level kinds: the action for this attempt. `random` is seeded from (seed, rule,
    // operation, attempt) and private to this call; draw from it only through core's helpers.
    virtual kind_outcome on_attempt(const attempt_context&, random_source&) const { return {}; }
};

// Whether a key must be present.
enum class need { optional, required };

// A kind's typed, validating view of its rule's TOML table. Every accessor records its key as
// allowed; `finish` (called by the rule parser) then reports each key nobody asked for, listing the
// allowed ones. Errors name the key and carry file:line:column of the value (or of the table when
// the key is missing). Accessors return nothing when the key is absent or invalid. Not thread-safe.
// How an error message names a TOML value's type ("a string", "an array", …).
std::string_view toml_type_name(const toml::node& node);

class kind_config {
public:
    // `context` starts every message (e.g. `fault kind "delay"`); `reserved` are keys of the same
    // table read by someone else (the rule-level name, kind, match, when), allowed but not read here.
    kind_config(const toml::table& table, std::string file, std::string context,
                std::initializer_list<std::string_view> reserved, config_errors& errors);

    std::optional<std::int64_t> integer(std::string_view key, need n, std::int64_t min, std::int64_t max);
    std::optional<double> number(std::string_view key, need n, double min, double max);  // integer or float
    std::optional<std::string> string(std::string_view key, need n);
    // A duration string ("250ms", see duration.hpp) within [min, max].
    std::optional<std::chrono::nanoseconds> duration(std::string_view key, need n,
                                                     std::chrono::nanoseconds min = std::chrono::nanoseconds{0},
                                                     std::chrono::nanoseconds max = std::chrono::nanoseconds::max());
    // A string that must be one of `allowed` (the error lists them).
    std::optional<std::string> choice(std::string_view key, need n, std::initializer_list<std::string_view> allowed);
    // An inline table of string values, e.g. headers = { "X-A" = "1" }, in file order.
    std::optional<header_list> string_table(std::string_view key, need n);
    // A string or an array of strings (a lone string is a list of one).
    std::optional<std::vector<std::string>> string_list(std::string_view key, need n);
    // An array of integers, each within [min, max].
    std::optional<std::vector<std::int64_t>> integer_list(std::string_view key, need n, std::int64_t min,
                                                          std::int64_t max);

    // Reports a problem with a key's value (a rule spanning several keys), at that key's position.
    void fail(std::string_view key, std::string message);
    // Reports every key not asked for. Called once, after the kind's factory returns.
    void finish();

    bool ok() const { return errors_.size() == errors_at_start_; }
    const std::string& context() const { return context_; }
    const std::string& file() const { return file_; }

private:
    const toml::node* lookup(std::string_view key, need n);
    source_position position_of(const toml::node& node) const;
    void add_error(source_position where, std::string message);

    const toml::table& table_;
    std::string file_;
    std::string context_;
    std::vector<std::string> allowed_;
    config_errors& errors_;
    std::size_t errors_at_start_;
};

// Builds a kind from its configuration. Returns a kind even when `config` recorded errors (the
// parser discards it); must not throw for bad input.
using kind_factory = std::function<std::shared_ptr<const fault_kind>(kind_config&)>;

struct kind_info {
    std::string name;     // the TOML `kind = "..."`, equal to the file name
    std::string summary;  // one line, for `faultline list faults`
    kind_factory make;
};

// The registered kinds, by name (core/registry.hpp): filled during static initialisation by one
// `kind_registration` object per kind file, read-only afterwards.
using kind_registry = core::registry<kind_info>;
// `const kind_registration registered{"delay", "one-line summary", &delay::make};` at namespace scope
// in the kind's file.
using kind_registration = core::registration<kind_info>;

}  // namespace faultline::faults
