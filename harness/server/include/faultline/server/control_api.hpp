// The REST control API, served under the reserved path prefix `/__faultline/` on the server's own
// port (and on the optional control port). It changes fault rules at runtime and exports what the
// run recorded; its requests are never faulted and never journaled. Endpoints:
//   GET    /__faultline/health             {"status":"ok","seed":S,"journal":{…}}
//   GET    /__faultline/rules              the rules in order, as JSON (each as written, with name/kind)
//   POST   /__faultline/rules[?position=N] add one rule: a JSON object or a TOML table (Content-Type
//                                          application/toml or text/x-toml) with the keys of a
//                                          scenario's [[fault]] table; 201 with the rule's name
//   DELETE /__faultline/rules/{name}       remove a rule (404 if there is none by that name)
//   DELETE /__faultline/rules              remove every rule
//   POST   /__faultline/reset              forget ledger, journal, attempt counts, stored results
//   GET    /__faultline/journal            the in-memory journal as JSON Lines
//   GET    /__faultline/ledger             the ledger as JSON
//   GET    /__faultline/stats              fault counts per kind and per rule, overflow, server counters
// Errors are JSON objects {"error": "..."} naming the problem: 400 for a bad body or query, 404 for
// an unknown path or rule, 405 (with Allow) for a method a path does not take.
// It knows the server only through server_context.hpp (the context it works on, and a callback for
// the server's counters), so the server includes this header and not the other way round.
#pragma once

#include "faultline/server/server_context.hpp"

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <functional>
#include <string_view>

namespace faultline::harness {

inline constexpr std::string_view control_prefix = "/__faultline/";

// True when `target` is addressed to the control API.
bool is_control_target(std::string_view target);

// Answers control requests for one server_context. Holds references only; thread-safe because the
// context's parts are. `counters` (optional) supplies the server's own counters for /stats.
class control_api {
public:
    using request = boost::beast::http::request<boost::beast::http::string_body>;
    using response = boost::beast::http::response<boost::beast::http::string_body>;

    explicit control_api(server_context& context, std::function<server_counters()> counters = {});

    // Never throws (an unexpected failure is a 500 naming it); the response carries the request's HTTP
    // version and keep-alive.
    response handle(const request& req) const;

private:
    response route(const request& req) const;

    server_context& context_;
    std::function<server_counters()> counters_;
};

}  // namespace faultline::harness
