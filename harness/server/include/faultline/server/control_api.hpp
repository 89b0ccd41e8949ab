// The REST control API, served under the reserved path prefix `/__faultline/` on the server's control
// listener only (never on the service port, whose client is the one under test). It changes fault
// rules at runtime and exports what the run recorded; its requests are never faulted and are not
// attempts, but every action that changes what the checks see (reset, rule added / removed /
// cleared) is journaled as a server_event. Endpoints:
//   GET    /__faultline/health             {"status":"ok","seed":S,"round":N,"journal_error":"…"}
//   GET    /__faultline/rules              the rules in order, as JSON (each as written, with name/kind)
//   POST   /__faultline/rules[?position=N] add one rule: a JSON object or a TOML table (Content-Type
//                                          application/toml or text/x-toml) with the keys of a
//                                          scenario's [[fault]] table; 201 with the rule's name
//   DELETE /__faultline/rules/{name}       remove a rule (404 if there is none by that name)
//   DELETE /__faultline/rules              remove every rule
//   POST   /__faultline/reset              forget ledger, journal, attempt counts, stored results;
//                                          start the next round: {"reset":true,"round":N}
//   GET    /__faultline/journal[?round=N|all]  the current round's journal (in memory) as JSON Lines
//   GET    /__faultline/ledger             the ledger as JSON
//   GET    /__faultline/stats              fault counts per kind and per rule, overflow, server counters
// Errors are JSON objects {"error": "..."} naming the problem: 400 for a bad body or query, 404 for
// an unknown path or rule, 405 (with Allow) for a method a path does not take.
// Access, checked before anything else: a `Host` that is not loopback or an `Origin` that is not a
// loopback http(s) origin is 403 (DNS rebinding, cross-site requests); then, when a token is set,
// no `Authorization: Bearer T` (or `Faultline-Control-Token: T`) is 401 with WWW-Authenticate and a
// wrong one 403 (compared in constant time). A control port that listens beyond loopback (a
// container's port published with `docker run -p`) requires a token and then takes any Host: the
// token guards it, and its clients name it by whatever address reaches it.
// It knows the server only through server_context.hpp (the context it works on, and a callback for
// the server's counters), so the server includes this header and not the other way round.
#pragma once

#include "faultline/server/server_context.hpp"

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <toml++/toml.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace faultline::server {

inline constexpr std::string_view control_prefix = "/__faultline/";

// True when `target` is addressed to the control API.
bool is_control_target(std::string_view target);

// A `Host` header value naming this machine's loopback: 127.0.0.1, localhost or [::1], with or
// without a port.
bool is_loopback_host(std::string_view host);
// An `Origin` header value that is a loopback http(s) origin ("http://localhost:8080").
bool is_loopback_origin(std::string_view origin);
// Equal strings, in time that depends only on the lengths (a token compared byte by byte would leak
// its prefix through timing).
bool constant_time_equal(std::string_view a, std::string_view b);
// A fresh control token: 128 bits from the operating system's random source, as 32 hex digits.
std::string make_control_token();
// `%XX` sequences decoded; nullopt for a malformed one ("%4", "%zz").
std::optional<std::string> percent_decode(std::string_view text);

using control_request = boost::beast::http::request<boost::beast::http::string_body>;
using control_response = boost::beast::http::response<boost::beast::http::string_body>;

// What answers a control port's requests (http_core serves it): one server's control_api, or a proxy
// set's (proxy_set.hpp). `peer` ("address:port") is who asked.
using control_handler = std::function<control_response(const control_request&, std::string_view peer)>;

// A control reply: JSON (or `content_type`) with the request's HTTP version and keep-alive, never cached.
control_response control_reply(const control_request& req, boost::beast::http::status status, std::string body,
                               std::string_view content_type = "application/json");
// {"error": message}.
control_response control_error(const control_request& req, boost::beast::http::status status, std::string message);
// 405 naming the methods `allow` lists, with Allow.
control_response control_method_not_allowed(const control_request& req, std::string_view allow);

// A control request's body as one TOML table: a TOML document when the Content-Type says toml, else a
// JSON object with the same keys (converted, so both go through one validation). nullopt, with a
// 400's message in `problem`, when it is neither; `what` names what it should hold ("one toxic").
std::optional<toml::table> control_body_table(const control_request& req, std::string_view what,
                                              std::string& problem);

// Who may use a control port (the access rules above): checked before any path is looked at.
struct control_access {
    std::string token;      // required bearer token; "" = none
    bool any_host = false;  // the port listens beyond loopback: Host is not checked

    // The refusal (403 / 401), or nullopt when `req` may go on.
    std::optional<control_response> refuse(const control_request& req) const;
};

// Answers control requests for one server_context. Holds references only; thread-safe because the
// context's parts are.
class control_api {
public:
    using request = control_request;
    using response = control_response;

    struct options {
        control_access access;                         // who may ask (handle() checks it)
        std::function<server_counters()> counters;     // the server's own counters for /stats (optional)
        std::function<std::int64_t()> elapsed_ns;      // the journal's clock for server events (optional: 0)
    };

    control_api(server_context& context, options opts);

    // Access first, then answer(). Never throws (an unexpected failure is a 500 naming it); the
    // response carries the request's HTTP version and keep-alive. `peer` ("address:port") is who
    // asked, for the server events.
    response handle(const request& req, std::string_view peer = {}) const;
    // Answers `req` as if its target were `target` (a path under control_prefix, with its query),
    // without checking access: for a handler that checked it and owns the path above this API's
    // (a proxy set's /__faultline/proxies/{name}/…). Never throws.
    response answer(const request& req, std::string_view target, std::string_view peer = {}) const;

private:
    response route(const request& req, std::string_view target, std::string_view peer) const;
    void journal_event(record::server_event_kind kind, std::string_view peer, std::string rule, std::string detail) const;
    record::server_event control_event(record::server_event_kind kind, std::string_view peer, std::string rule, std::string detail) const;

    server_context& context_;
    options options_;
};

}  // namespace faultline::server
