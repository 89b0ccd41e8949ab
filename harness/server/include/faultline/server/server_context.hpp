// What one server run works on, apart from sockets and threads: the `server_context` (fault engine,
// service model, ledger, idempotency layer, attempt counter, journal) and the `server_counters` the
// server keeps besides the journal. This is the narrow interface between the HTTP server
// (server.hpp) and the control API (control_api.hpp): both work on a context, neither includes the
// other's header, and nothing here depends on Asio or Beast.
#pragma once

#include "faultline/faults/engine.hpp"
#include "faultline/faults/rule.hpp"
#include "faultline/server/identity.hpp"
#include "faultline/server/idempotency.hpp"
#include "faultline/server/journal.hpp"
#include "faultline/server/ledger.hpp"
#include "faultline/server/model_config.hpp"
#include "faultline/server/service.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace faultline::server {

class relay;

// Everything one server run works on. Owns its parts; they are thread-safe, so tests and the
// control API read them while the server runs. Construct once per run; `start_round` starts a fresh
// round (the control API's POST /__faultline/reset).
class server_context {
public:
    // Throws std::system_error if the journal file cannot be opened, std::invalid_argument naming
    // every rule whose waits exceed model.limits.max_fault_wait.
    server_context(const model_config& model, std::vector<faults::rule> rules, std::uint64_t seed,
                   journal_options journal = {}, faults::engine_limits engine_cfg = {},
                   ledger_keeps ledger = ledger_keeps::entries);

    server_context(const server_context&) = delete;
    server_context& operator=(const server_context&) = delete;

    // Forgets the ledger, the journal's in-memory records, attempt counts, stored idempotency
    // results and the service's domain state. Rules stay, and so does the journal's round: this is an
    // in-process restart (testing::fault_server), which journals nothing.
    void reset();
    // What reset() forgets, and the journal starts its next round with `reset_event`, the reset's
    // evidence (journal::start_round). Returns the new round; nullopt, changing nothing, when the
    // journal has begun max_round rounds.
    std::optional<record::round_number> start_round(record::server_event reset_event);
    // Forgets (and frees) what the service keeps for its clients: attempt counts, stored idempotency
    // results and its domain state. Nothing judges them: a run frees them once its server has
    // stopped, before it takes the journal, so the two are never held at once.
    void release_service_state();

    std::uint64_t seed() const { return engine.seed(); }

    // What the server enforces on its clients ([server] header_timeout, …, max_fault_wait).
    const server_limits limits;

    // Declaration order is destruction order reversed: the service writes to the ledger.
    ledger effects;
    service model;
    idempotency_layer idempotency;
    attempt_counter attempts;
    identity_config identity;
    journal records;
    faults::fault_engine engine;

    // Set for a relay tier (relay.hpp): the attempts that reach the service are forwarded through it
    // instead of being handled by `model`. Not owned; it must outlive the server.
    relay* next_tier = nullptr;

private:
    // The ledger and the service state: what a round forgets besides the journal's records.
    void forget_effects();
};

// Counters the server keeps besides the journal (control API /stats, tests).
struct server_counters {
    std::uint64_t connections = 0;        // accepted
    std::uint64_t refused = 0;            // reset or closed by a connection verdict
    std::uint64_t attempts = 0;           // journaled
    std::uint64_t control_requests = 0;   // served by the control API
    std::uint64_t bad_requests = 0;       // unparseable HTTP answered with 400/413/431/501 and closed
    std::uint64_t open = 0;               // service connections open now
    std::uint64_t over_limit = 0;         // closed at accept: max_connections were open
    std::uint64_t header_timeouts = 0;    // closed: a request not read within header_timeout
    std::uint64_t idle_timeouts = 0;      // closed: kept alive and idle for idle_timeout
    std::uint64_t write_timeouts = 0;     // reset: a response not taken within write_timeout
    std::uint64_t idle_evicted = 0;       // closed: kept alive and idle, to make room at the cap
    std::uint64_t events_not_journaled = 0;  // limit events counted here but rate-limited out of the journal
    std::uint64_t tls_handshake_failures = 0;  // TLS ports: handshakes that failed (certificate rejected, not TLS)
};

}  // namespace faultline::server
