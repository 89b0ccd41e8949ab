// The fault-kind contract and registry. A fault kind is one small file (faults/src/kinds/<name>.cpp):
// a type that holds only its configuration, read and validated from its rule's TOML table through a
// `config::table_reader`, and that turns an attempt (or a new connection) into an action from
// action.hpp. Probability, triggers and caps belong to the engine, never to a kind. Each file
// registers its kind with one `kind_registration` object (a core::registration<kind_info>); the
// faults library is built with faultline_add_registering_library, which links it whole-archive so
// those objects survive static linking. See faults/README.md for the recipe.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "faultline/config/reader.hpp"
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
// phase before_read), on an attempt, or on the listening port itself for its rule's time window
// (refuse with how = closed_port / unanswered_syn). The engine asks each kind only at its own level.
enum class fault_level { connection, attempt, listener };

// What a kind decides for one attempt: a plan (the fault fired) or none (serve normally). `hold`
// is capacity the kind keeps for the attempt's lifetime (overload's in-flight slot), whether or
// not a plan is returned; the engine moves it into the fault_decision.
struct kind_outcome {
    std::optional<fault_plan> plan;
    held_slot hold;
};

// A configured fault kind. Instances are immutable after construction except for explicitly
// synchronised capacity state (overload), so one instance is shared by every thread of a server.
// The longest the server may be made to wait by a kind's configuration, and the key that sets it.
struct wait_bound {
    std::string_view key;  // e.g. "wait", "limit"
    std::chrono::nanoseconds longest{0};
};

class fault_kind {
public:
    virtual ~fault_kind() = default;

    // The longest wait this kind's configuration can ask of the server (a delay, a hang's limit, a
    // queue's wait), checked against [server] max_fault_wait at load; nullopt when it asks for none
    // or cannot bound it ahead (a normal-distributed delay without `max`: the server clamps it).
    virtual std::optional<wait_bound> longest_wait() const { return std::nullopt; }

    virtual fault_level level() const { return fault_level::attempt; }
    // Connection-level kinds: what to do with the connection. Called only when the rule fires.
    virtual connection_verdict on_connection(const connection_context&) const { return connection_verdict::accept; }
    // Listener-level kinds: what the listener does for the rule's window (none: it listens as usual).
    virtual std::optional<listener_verdict> on_listener() const { return std::nullopt; }
    // Attempt-level kinds: the action for this attempt. `random` is seeded from (seed, rule,
    // operation, attempt) and private to this call; draw from it only through core's helpers.
    virtual kind_outcome on_attempt(const attempt_context&, random_source&) const { return {}; }
};

// Builds a kind from its rule's TOML table, read through the project's one strict reader
// (config/reader.hpp). The rule parser has already declared the rule-level keys (name, kind, match,
// when) allowed, and calls `finish` after the factory returns, so the kind asks for each of its own
// keys through the typed accessors and the parser reports any other key with the allowed ones.
// Returns a kind even when the reader recorded errors (the parser discards it); must not throw for
// bad input.
using kind_factory = std::function<std::shared_ptr<const fault_kind>(config::table_reader&)>;

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
