// The ledger: every effect the service committed, with the operation identity and attempt that
// committed it. It is the ground truth for "did the client cause a double side effect": a double
// side effect is two or more commits of a non-idempotent effect for one operation identity. Commits
// of idempotent writes (PUT/DELETE) are recorded too, so repeated writes stay visible, but they are
// not double effects unless asked for with `commit_scope::all`. An entry's operation, method and
// target are symbols (faultline/record/symbol.hpp), shared with the journal's records.
#pragma once

#include "faultline/core/enum_names.hpp"
#include "faultline/record/symbol.hpp"

#include <boost/json/value.hpp>

#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace faultline::server {

// What committing a request does to the domain; declared per endpoint.
enum class effect_semantics : std::uint8_t {
    non_idempotent,    // each commit creates a new effect (a charge, an increment)
    idempotent_write,  // PUT/DELETE: repeating leaves the domain as it was; still one ledger entry per commit
    read,              // no effect
    none,              // no effect (catch-all, health)
};

inline constexpr enum_names effect_semantics_names{std::to_array<enum_name<effect_semantics>>({
    {effect_semantics::non_idempotent, "non_idempotent"},
    {effect_semantics::idempotent_write, "idempotent_write"},
    {effect_semantics::read, "read"},
    {effect_semantics::none, "none"},
})};
inline std::string_view to_string(effect_semantics v) { return effect_semantics_names(v); }
inline std::optional<effect_semantics> effect_semantics_from_string(std::string_view s) {
    return effect_semantics_names.from(s);
}

struct ledger_entry {
    record::symbol operation;            // operation identity of the committing attempt
    std::uint32_t attempt = 1;   // its attempt number; (operation, attempt) joins it to the journal
    std::uint64_t seq = 0;       // the attempt's request number (service_request::seq), 0 if unknown
    std::uint64_t connection = 0;
    std::int64_t time_ns = 0;    // ns since run start, monotonic
    record::symbol method;               // "POST"
    record::symbol target;               // "/payments"
    effect_semantics semantics{};
    std::string effect;          // what was committed: "charge ch_3 amount=100", "kv put k", "counter c=4"
    friend bool operator==(const ledger_entry&, const ledger_entry&) = default;
};

// Which commits count towards a double effect.
enum class commit_scope {
    non_idempotent,  // only effects that each create something new (the default)
    all,             // idempotent writes too
};

struct double_effect {
    std::string operation;
    std::vector<ledger_entry> commits;  // in commit order, two or more
};

// What a ledger keeps. A run's checks judge the journal, whose records carry each commit's effect, so
// `faultline run` keeps only the count (the entries were a tenth of its memory, 68 bytes an attempt);
// `serve`'s control API and the GoogleTest fault_server read the entries.
enum class ledger_keeps { entries, count };

// Thread-safe: every member may be called from any thread (one mutex; `record` holds it only for a
// push_back).
class ledger {
public:
    explicit ledger(ledger_keeps keeps = ledger_keeps::entries) : keeps_{keeps} {}

    void record(ledger_entry entry);
    // Commits recorded since the start or the last reset, in either mode.
    std::size_t size() const;

    // The entries: these throw std::logic_error on a ledger that keeps only the count, rather than
    // answer "no commits".

    // Commits recorded for one operation identity, in the given scope.
    std::size_t commits_for(std::string_view operation, commit_scope scope = commit_scope::non_idempotent) const;
    // Operations with two or more commits in the scope, ordered by their first commit.
    std::vector<double_effect> double_effects(commit_scope scope = commit_scope::non_idempotent) const;

    std::vector<ledger_entry> snapshot() const;
    void reset();

    // {"entries":[{...}], "double_effects":[{"op":..., "commits":N, "seqs":[...]}]}: entries as in
    // entry_to_json, double effects in the default (non-idempotent) scope.
    boost::json::value to_json() const;

private:
    void require_entries() const;

    const ledger_keeps keeps_;
    mutable std::mutex mutex_;
    std::vector<ledger_entry> entries_;
    std::size_t recorded_ = 0;
};

// {"op","attempt","seq","conn","t","method","target","semantics","effect"}
boost::json::object entry_to_json(const ledger_entry& entry);

}  // namespace faultline::server
