// The service the fault-injecting server plays: endpoints with declared effect semantics and a small
// in-memory domain (charges, a key-value store, counters) whose commits are written to the ledger.
// The server engine decides whether an attempt reaches the service at all (a fault with commit phase
// `before` never calls `handle`; one with phase `after` calls it, then damages or drops the reply);
// `handle` is the commit point. The default service is:
//   POST   /payments                   non-idempotent: creates charge "ch_N"; 201 {"id":"ch_N","amount":A}
//   GET    /payments/{id}              read: 200 with the charge, or 404
//   PUT    /kv/{key}                   idempotent write: stores the body; 200 {"key":K,"value":V}
//   GET    /kv/{key}                   read: 200 with the stored body as is, or 404
//   DELETE /kv/{key}                   idempotent write: 204 if it existed, 404 otherwise
//   POST   /counters/{name}/increment  non-idempotent: 200 {"name":N,"value":V} (the new value)
//   GET    /counters/{name}            read: 200 {"name":N,"value":V} (0 when never incremented)
//   anything else                      unmatched: 404 naming the nearest endpoint, journaled as
//                                      effect "unmatched" (or a declared catch-all: `catch_all`)
// Endpoints declared in the `[server]` table (see model_config.hpp) are matched before these.
#pragma once

#include "faultline/core/enum_names.hpp"
#include "faultline/record/journal_record.hpp"
#include "faultline/server/ledger.hpp"

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace faultline::server {

struct http_header {
    std::string name;
    std::string value;
    friend bool operator==(const http_header&, const http_header&) = default;
};
using header_list = std::vector<http_header>;

// One attempt as handed to the service. `operation`, `attempt`, `seq`, `connection` and `time_ns` are
// copied into the ledger entry when the attempt commits.
struct service_request {
    std::string method;  // "POST"
    std::string target;  // "/payments?x=1" (the query is ignored for routing)
    std::string body;
    std::string operation;      // operation identity (identity.hpp)
    std::uint32_t attempt = 1;  // n-th attempt of the operation (attempt_counter)
    std::uint64_t seq = 0;      // the attempt's request number (journal::next_seq), 0 if unknown
    std::uint64_t connection = 0;
    std::int64_t time_ns = 0;  // ns since run start, monotonic: when the commit happens
};

// A request no endpoint matched (and no catch-all was declared to take): what the journal and the
// checks say about it.
struct unmatched_route {
    std::string nearest;  // the nearest declared endpoint, "POST /payments"; "" when none is declared
    bool first = false;   // the first time this method and path went unmatched since the last reset
    friend bool operator==(const unmatched_route&, const unmatched_route&) = default;
};

// The service's reply. The server adds framing headers (Content-Length, Date, Server) itself.
struct service_response {
    int status = 200;
    header_list headers;  // e.g. Content-Type
    std::string body;
    record::effect_kind effect = record::effect_kind::none;  // committed when the domain changed (or an idempotent write ran)
    // Interim (1xx) replies that came before this one, as received (status lines, fields, blank
    // lines): a proxied upstream's 103 Early Hints, sent ahead of the reply.
    std::string interim{};
    std::optional<unmatched_route> unmatched{};  // set when no endpoint matched (effect `unmatched`)
    friend bool operator==(const service_response&, const service_response&) = default;
};

// A problem+json (RFC 9457) reply with type "about:blank": the service's and the layers' errors.
service_response problem(int status, std::string_view title, std::string_view detail);

// An endpoint declared in configuration. Path patterns are matched segment by segment: a literal
// segment matches itself, `{name}` matches any one non-empty segment, and a final `*` matches the rest.
struct endpoint_config {
    std::string method;   // "POST"; "*" matches any method
    std::string path;     // "/orders/{id}/pay"
    effect_semantics effect = effect_semantics::non_idempotent;
    int status = 200;     // status returned when it commits
    std::string body;     // returned as is, but "{n}" becomes how many times the endpoint ran (this one included)
    std::string content_type = "application/json";
};

// How the service treats requests no endpoint matched.
enum class catch_all_effect {
    not_found,  // unmatched: 404 naming the nearest endpoint, journaled as such (default)
    none,       // a declared catch-all: 200 "ok", no effect (the default before unmatched requests were told)
    by_method,  // a declared catch-all: POST/PATCH non-idempotent, PUT/DELETE idempotent write, others no effect
};
// Their `catch_all` names.
inline constexpr enum_names catch_all_effect_names{std::to_array<enum_name<catch_all_effect>>({
    {catch_all_effect::not_found, "not_found"},
    {catch_all_effect::none, "none"},
    {catch_all_effect::by_method, "by_method"},
})};

struct service_config {
    bool builtin_endpoints = true;          // the default service's endpoints (`service = "default"`)
    std::vector<endpoint_config> endpoints;  // matched first, in order
    catch_all_effect catch_all = catch_all_effect::not_found;
};

// The service. Owns its domain state; writes commits to a ledger it does not own (the ledger must
// outlive it). Thread-safe: `handle` and the accessors may be called from any thread; the domain is
// guarded by one short-held mutex (the ledger has its own).
class service {
public:
    service(service_config config, ledger& effects);

    service(const service&) = delete;
    service& operator=(const service&) = delete;

    // The semantics of the endpoint a request would reach, without running it: the idempotency layer
    // uses it to decide whether a key is required, the server to describe the attempt.
    effect_semantics classify(std::string_view method, std::string_view target) const;

    // Runs the request: commits its effect (if any), records the commit in the ledger, and returns the
    // reply. Never throws for a bad request: it answers 400/404/405 with a problem+json body.
    service_response handle(const service_request& request);

    // Domain state, for tests and the control API.
    std::uint64_t charge_count() const;
    std::optional<std::string> kv_get(std::string_view key) const;
    std::int64_t counter_value(std::string_view name) const;

    // Forgets all domain state (charges, keys, counters, endpoint commit counts). The ledger is reset
    // separately.
    void reset();

    const service_config& config() const { return config_; }

private:
    enum class route_kind;
    struct route;

    route find_route(std::string_view method, std::string_view target) const;
    // The declared endpoint ("METHOD /path") nearest to a request no endpoint matched.
    std::string nearest_endpoint(std::string_view method, std::string_view target) const;

    const service_config config_;
    ledger& ledger_;
    mutable std::mutex mutex_;  // guards the domain below; the ledger is written while holding it
    std::vector<std::int64_t> charge_amounts_;  // charge "ch_N" has the amount charge_amounts_[N - 1]
    std::map<std::string, std::string, std::less<>> kv_;
    std::map<std::string, std::int64_t, std::less<>> counters_;
    std::vector<std::uint64_t> endpoint_runs_;  // one per config_.endpoints entry
    std::uint64_t catch_all_runs_ = 0;
    // Unmatched method-and-path pairs seen since the last reset, up to unmatched_routes_kept: the first
    // of each is told once (unmatched_route::first), so a client looping on a typo is one line.
    std::set<std::string, std::less<>> unmatched_seen_;
    std::string unmatched_route_;  // the route being looked up in unmatched_seen_
};

}  // namespace faultline::server
