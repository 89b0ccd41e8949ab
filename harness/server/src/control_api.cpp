#include "faultline/server/control_api.hpp"

#include "faultline/config/document.hpp"
#include "faultline/faults/rules_toml.hpp"

#include <boost/beast/core/string.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <sys/random.h>

#include <array>
#include <charconv>
#include <exception>
#include <stdexcept>
#include <string>

namespace faultline::server {

namespace http = boost::beast::http;
namespace json = boost::json;

bool is_control_target(std::string_view target) { return target.starts_with(control_prefix); }

namespace {

// ":PORT" (digits only) or nothing.
bool is_port_suffix(std::string_view rest) {
    if (rest.empty()) return true;
    if (rest.front() != ':' || rest.size() == 1 || rest.size() > 6) return false;
    return rest.substr(1).find_first_not_of("0123456789") == std::string_view::npos;
}

}  // namespace

bool is_loopback_host(std::string_view host) {
    for (std::string_view name : {"127.0.0.1", "localhost", "[::1]"}) {
        if (host.size() >= name.size() && boost::beast::iequals(host.substr(0, name.size()), name) &&
            is_port_suffix(host.substr(name.size()))) {
            return true;
        }
    }
    return false;
}

bool is_loopback_origin(std::string_view origin) {
    for (std::string_view scheme : {"http://", "https://"}) {
        if (origin.size() > scheme.size() && boost::beast::iequals(origin.substr(0, scheme.size()), scheme)) {
            return is_loopback_host(origin.substr(scheme.size()));
        }
    }
    return false;
}

bool constant_time_equal(std::string_view a, std::string_view b) {
    unsigned char diff = a.size() == b.size() ? 0 : 1;
    for (std::size_t i = 0; i < a.size(); ++i) {
        // b is read cyclically so that the loop's length is a's, whatever b is.
        diff |= static_cast<unsigned char>(a[i] ^ (b.empty() ? 0 : b[i % b.size()]));
    }
    return diff == 0;
}

std::string make_control_token() {
    std::array<unsigned char, 16> bytes{};
    std::size_t got = 0;
    while (got < bytes.size()) {
        const ssize_t n = ::getrandom(bytes.data() + got, bytes.size() - got, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw std::runtime_error{"control token: getrandom failed"};
        }
        got += static_cast<std::size_t>(n);
    }
    constexpr std::string_view hex = "0123456789abcdef";
    std::string out;
    for (const unsigned char b : bytes) {
        out.push_back(hex[b >> 4U]);
        out.push_back(hex[b & 15U]);
    }
    return out;
}

std::optional<std::string> percent_decode(std::string_view text) {
    const auto digit = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '%') {
            out.push_back(text[i]);
            continue;
        }
        if (i + 2 >= text.size()) return std::nullopt;
        const int high = digit(text[i + 1]);
        const int low = digit(text[i + 2]);
        if (high < 0 || low < 0) return std::nullopt;
        out.push_back(static_cast<char>(high * 16 + low));
        i += 2;
    }
    return out;
}

namespace {

using request = control_api::request;
using response = control_api::response;

constexpr std::string_view control_source = "control-api";

response json_response(const request& req, http::status status, const json::value& v) {
    return control_reply(req, status, json::serialize(v));
}

// `key=value` from a query string ("a=1&b=2"); nullopt when the key is absent.
std::optional<std::string_view> query_value(std::string_view query, std::string_view key) {
    while (!query.empty()) {
        const auto amp = query.find('&');
        const std::string_view pair = query.substr(0, amp);
        const auto eq = pair.find('=');
        if (pair.substr(0, eq) == key) return eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1);
        if (amp == std::string_view::npos) break;
        query.remove_prefix(amp + 1);
    }
    return std::nullopt;
}

// A query value that is a non-negative decimal integer, whole.
std::optional<std::uint64_t> non_negative_integer(std::string_view text) {
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
    return value;
}

bool is_toml(const request& req) {
    const auto it = req.find(http::field::content_type);
    if (it == req.end()) return false;
    const std::string_view type{it->value().data(), it->value().size()};
    return type.find("toml") != std::string_view::npos;
}

json::array error_list(const config_errors& errors) {
    json::array out;
    for (const auto& e : errors) out.emplace_back(e.to_string());
    return out;
}

}  // namespace

control_response control_reply(const control_request& req, http::status status, std::string body,
                               std::string_view content_type) {
    control_response res{status, req.version()};
    res.set(http::field::server, "faultline");
    res.set(http::field::content_type, content_type);
    res.set(http::field::cache_control, "no-store");
    res.body() = std::move(body);
    res.keep_alive(req.keep_alive());
    res.prepare_payload();
    return res;
}

control_response control_error(const control_request& req, http::status status, std::string message) {
    return control_reply(req, status, json::serialize(json::object{{"error", std::move(message)}}));
}

control_response control_method_not_allowed(const control_request& req, std::string_view allow) {
    control_response res = control_error(
        req, http::status::method_not_allowed,
        "method " + std::string{req.method_string()} + " not allowed on " + std::string{req.target()} +
            "; allowed: " + std::string{allow});
    res.set(http::field::allow, allow);
    return res;
}

std::optional<toml::table> control_body_table(const control_request& req, std::string_view what,
                                              std::string& problem) {
    if (req.body().empty()) {
        problem = "empty body: send " + std::string{what} + " as a JSON object or a TOML table";
        return std::nullopt;
    }
    if (is_toml(req)) {
        config::document doc = config::parse_document(req.body(), std::string{control_source});
        if (!doc.table) {
            problem = "bad TOML body: " + doc.errors.front().to_string();
            return std::nullopt;
        }
        return std::move(*doc.table);
    }
    json::error_code ec;
    const json::value body = json::parse(req.body(), ec);
    if (ec) {
        problem = "bad JSON body: " + ec.message();
        return std::nullopt;
    }
    if (!body.is_object()) {
        problem = "the body must be a JSON object (" + std::string{what} + ")";
        return std::nullopt;
    }
    config_errors errors;
    std::optional<toml::table> table = faults::json_as_toml(body.get_object(), errors);
    if (!table) problem = "bad JSON body: " + errors.front().to_string();
    return table;
}

std::optional<control_response> control_access::refuse(const control_request& req) const {
    const auto field = [&req](std::string_view name) -> std::optional<std::string_view> {
        const auto it = req.find(boost::beast::string_view{name.data(), name.size()});
        if (it == req.end()) return std::nullopt;
        return std::string_view{it->value().data(), it->value().size()};
    };
    // Before the token: a browser tricked into calling us (DNS rebinding names a foreign host; a
    // cross-site form or fetch carries a foreign Origin) is refused even where no token is set.
    if (const auto host = field("Host"); host && !any_host && !is_loopback_host(*host)) {
        return control_error(req, http::status::forbidden,
                              "control API: Host '" + std::string{*host} +
                                  "' is not loopback (127.0.0.1, localhost, [::1]); refused against DNS rebinding");
    }
    if (const auto origin = field("Origin"); origin && !is_loopback_origin(*origin)) {
        return control_error(req, http::status::forbidden,
                              "control API: Origin '" + std::string{*origin} +
                                  "' is not a loopback http(s) origin; cross-site requests are refused");
    }
    if (token.empty()) return std::nullopt;
    std::optional<std::string_view> presented = field("Faultline-Control-Token");
    if (const auto auth = field("Authorization")) {
        constexpr std::string_view bearer = "Bearer ";
        if (auth->size() >= bearer.size() && boost::beast::iequals(auth->substr(0, bearer.size()), bearer)) {
            presented = auth->substr(bearer.size());
        }
    }
    if (!presented) {
        response res = control_error(req, http::status::unauthorized,
                                      "control API: a token is required (Authorization: Bearer TOKEN, printed at start "
                                      "and in the ready file)");
        res.set(http::field::www_authenticate, "Bearer realm=\"faultline\"");
        return res;
    }
    if (!constant_time_equal(*presented, token)) {
        return control_error(req, http::status::forbidden, "control API: wrong token");
    }
    return std::nullopt;
}

control_api::control_api(server_context& context, options opts) : context_{context}, options_{std::move(opts)} {}

void control_api::journal_event(record::server_event_kind kind, std::string_view peer, std::string rule,
                                std::string detail) const {
    context_.records.append_event(control_event(kind, peer, std::move(rule), std::move(detail)));
}

record::server_event control_api::control_event(record::server_event_kind kind, std::string_view peer, std::string rule,
                                        std::string detail) const {
    record::server_event event;
    event.kind = kind;
    event.at_ns = options_.elapsed_ns ? options_.elapsed_ns() : 0;
    event.rule = std::move(rule);
    event.detail = std::move(detail);
    event.peer = std::string{peer};
    return event;
}

control_api::response control_api::handle(const request& req, std::string_view peer) const {
    if (auto refused = options_.access.refuse(req)) return std::move(*refused);
    return answer(req, {req.target().data(), req.target().size()}, peer);
}

control_api::response control_api::answer(const request& req, std::string_view target, std::string_view peer) const {
    try {
        return route(req, target, peer);
    } catch (const std::exception& e) {
        return control_error(req, http::status::internal_server_error, std::string{"control API failure: "} + e.what());
    }
}

control_api::response control_api::route(const request& req, std::string_view target, std::string_view peer) const {
    if (!is_control_target(target)) return control_error(req, http::status::not_found, "not a control API path");
    std::string_view path = target.substr(control_prefix.size());
    std::string_view query;
    if (const auto q = path.find('?'); q != std::string_view::npos) {
        query = path.substr(q + 1);
        path = path.substr(0, q);
    }
    const http::verb method = req.method();

    if (path == "health") {
        if (method != http::verb::get) return control_method_not_allowed(req, "GET");
        return json_response(req, http::status::ok,
                             json::object{{"status", context_.records.failed() ? "failing" : "ok"},
                                          {"seed", context_.seed()},
                                          {"round", context_.records.round()},
                                          {"journal_error", context_.records.error()}});
    }

    if (path == "rules") {
        if (method == http::verb::get) {
            return json_response(req, http::status::ok, json::object{{"rules", context_.engine.list()}});
        }
        if (method == http::verb::delete_) {
            std::string names;
            for (const faults::rule& r : context_.engine.rules()) names += (names.empty() ? "" : ",") + r.name;
            context_.engine.clear();
            journal_event(record::server_event_kind::rules_cleared, peer, "", std::move(names));
            return json_response(req, http::status::ok, json::object{{"removed", "all"}});
        }
        if (method != http::verb::post) return control_method_not_allowed(req, "GET, POST, DELETE");

        std::optional<std::size_t> position;
        if (const auto p = query_value(query, "position")) {
            const std::optional<std::uint64_t> value = non_negative_integer(*p);
            if (!value) {
                return control_error(req, http::status::bad_request,
                                      "query parameter 'position' must be a non-negative integer, got '" +
                                          std::string{*p} + "'");
            }
            position = static_cast<std::size_t>(*value);
        }
        std::string problem;
        const std::optional<toml::table> table = control_body_table(req, "one rule", problem);
        if (!table) return control_error(req, http::status::bad_request, std::move(problem));
        // A TOML body's errors name their line and column in it; a JSON body's name only the key.
        faults::rules_result parsed =
            faults::parse_rule(*table, is_toml(req) ? std::string{control_source} : std::string{},
                               context_.engine.rules().size() + 1, {context_.limits.max_fault_wait});
        if (!parsed.ok() || parsed.rules.size() != 1) {
            json::object out{{"error", "invalid rule"}, {"errors", error_list(parsed.errors)}};
            return json_response(req, http::status::bad_request, out);
        }
        std::string name = parsed.rules.front().name;
        std::string written = json::serialize(parsed.rules.front().source);
        const auto added = context_.engine.add(std::move(parsed.rules.front()), position);
        if (!added.ok) return control_error(req, http::status::conflict, added.error);
        journal_event(record::server_event_kind::rule_added, peer, name, std::move(written));
        return json_response(req, http::status::created, json::object{{"added", name}});
    }

    if (path.starts_with("rules/")) {
        const std::string_view encoded = path.substr(6);
        if (method != http::verb::delete_) return control_method_not_allowed(req, "DELETE");
        if (encoded.empty()) return control_error(req, http::status::bad_request, "missing rule name after rules/");
        const std::optional<std::string> name = percent_decode(encoded);
        if (!name) {
            return control_error(req, http::status::bad_request,
                                  "malformed percent-encoding in rule name '" + std::string{encoded} + "'");
        }
        if (!context_.engine.remove(*name)) {
            return control_error(req, http::status::not_found, "no rule named '" + *name + "'");
        }
        journal_event(record::server_event_kind::rule_removed, peer, *name, "");
        return json_response(req, http::status::ok, json::object{{"removed", *name}});
    }

    if (path == "reset") {
        if (method != http::verb::post) return control_method_not_allowed(req, "POST");
        // The reset event is the new round's first: the journal numbers both at once.
        const std::optional<record::round_number> round =
            context_.start_round(control_event(record::server_event_kind::reset, peer, "", ""));
        if (!round) {
            return control_error(req, http::status::conflict,
                                  "the journal has begun " + std::to_string(record::max_round) +
                                      " rounds, the most it numbers: restart faultline serve to reset again");
        }
        return json_response(req, http::status::ok, json::object{{"reset", true}, {"round", *round}});
    }

    if (path == "journal") {
        if (method != http::verb::get) return control_method_not_allowed(req, "GET");
        // The current round by default; memory holds no other round's attempts (a reset forgets them).
        const record::round_number current = context_.records.round();
        std::optional<record::round_number> round = current;
        if (const auto asked = query_value(query, "round")) {
            const std::optional<std::uint64_t> number = non_negative_integer(*asked);
            if (*asked == "all") {
                round = std::nullopt;
            } else if (!number || *number == 0) {
                return control_error(req, http::status::bad_request,
                                      "query parameter 'round' must be a round number (1, 2, …) or 'all', got '" +
                                          std::string{*asked} + "'");
            } else if (*number > current) {
                return control_error(req, http::status::not_found,
                                      "no round " + std::to_string(*number) + " yet: the current round is " +
                                          std::to_string(current));
            } else if (*number < current) {
                return control_error(req, http::status::not_found,
                                      "round " + std::to_string(*number) +
                                          " is no longer in memory: a reset forgets the attempts of the rounds "
                                          "before it (the journal file, --journal, keeps every round); the current "
                                          "round is " + std::to_string(current));
            }
        }
        return control_reply(req, http::status::ok, context_.records.to_jsonl(round), "application/x-ndjson");
    }

    if (path == "ledger") {
        if (method != http::verb::get) return control_method_not_allowed(req, "GET");
        return json_response(req, http::status::ok, context_.effects.to_json());
    }

    if (path == "stats") {
        if (method != http::verb::get) return control_method_not_allowed(req, "GET");
        json::object out{{"faults", context_.engine.counters_json()}};
        out["journal"] = json::object{{"round", context_.records.round()},
                                      {"appended", context_.records.appended()},
                                      {"in_memory", context_.records.size()},
                                      {"memory_complete", context_.records.memory_complete()},
                                      {"lost", context_.records.lost()},
                                      {"failed", context_.records.failed()}};
        out["ledger"] = json::object{{"entries", context_.effects.size()}};
        out["server_events"] = context_.records.events_appended();
        if (options_.counters) {
            const server_counters c = options_.counters();
            out["server"] = json::object{{"connections", c.connections},
                                         {"refused", c.refused},
                                         {"attempts", c.attempts},
                                         {"control_requests", c.control_requests},
                                         {"bad_requests", c.bad_requests},
                                         {"open", c.open},
                                         {"over_limit", c.over_limit},
                                         {"header_timeouts", c.header_timeouts},
                                         {"idle_timeouts", c.idle_timeouts},
                                         {"write_timeouts", c.write_timeouts},
                                         {"idle_evicted", c.idle_evicted},
                                         {"events_not_journaled", c.events_not_journaled},
                                         {"tls_handshake_failures", c.tls_handshake_failures}};
        }
        return json_response(req, http::status::ok, out);
    }

    return control_error(req, http::status::not_found,
                          "unknown control path '" + std::string{target} +
                              "'; known: health, rules, rules/{name}, reset, journal, ledger, stats");
}

}  // namespace faultline::server
