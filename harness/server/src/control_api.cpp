#include "faultline/server/control_api.hpp"

#include "faultline/config/document.hpp"
#include "faultline/faults/rules_toml.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <charconv>
#include <exception>
#include <string>

namespace faultline::harness {

namespace http = boost::beast::http;
namespace json = boost::json;

bool is_control_target(std::string_view target) { return target.starts_with(control_prefix); }

namespace {

using request = control_api::request;
using response = control_api::response;

constexpr std::string_view control_source = "control-api";

response make_response(const request& req, http::status status, std::string body,
                       std::string_view content_type = "application/json") {
    response res{status, req.version()};
    res.set(http::field::server, "faultline");
    res.set(http::field::content_type, content_type);
    res.set(http::field::cache_control, "no-store");
    res.body() = std::move(body);
    res.keep_alive(req.keep_alive());
    res.prepare_payload();
    return res;
}

response json_response(const request& req, http::status status, const json::value& v) {
    return make_response(req, status, json::serialize(v));
}

response error_response(const request& req, http::status status, std::string message) {
    return json_response(req, status, json::object{{"error", std::move(message)}});
}

response method_not_allowed(const request& req, std::string_view allow) {
    response res = error_response(
        req, http::status::method_not_allowed,
        "method " + std::string{req.method_string()} + " not allowed on " + std::string{req.target()} +
            "; allowed: " + std::string{allow});
    res.set(http::field::allow, allow);
    return res;
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

control_api::control_api(server_context& context, std::function<server_counters()> counters)
    : context_{context}, counters_{std::move(counters)} {}

control_api::response control_api::handle(const request& req) const {
    try {
        return route(req);
    } catch (const std::exception& e) {
        return error_response(req, http::status::internal_server_error, std::string{"control API failure: "} + e.what());
    }
}

control_api::response control_api::route(const request& req) const {
    const std::string_view target{req.target().data(), req.target().size()};
    if (!is_control_target(target)) return error_response(req, http::status::not_found, "not a control API path");
    std::string_view path = target.substr(control_prefix.size());
    std::string_view query;
    if (const auto q = path.find('?'); q != std::string_view::npos) {
        query = path.substr(q + 1);
        path = path.substr(0, q);
    }
    const http::verb method = req.method();

    if (path == "health") {
        if (method != http::verb::get) return method_not_allowed(req, "GET");
        return json_response(req, http::status::ok,
                             json::object{{"status", context_.records.failed() ? "failing" : "ok"},
                                          {"seed", context_.seed()},
                                          {"journal_error", context_.records.error()}});
    }

    if (path == "rules") {
        if (method == http::verb::get) {
            return json_response(req, http::status::ok, json::object{{"rules", context_.engine.list()}});
        }
        if (method == http::verb::delete_) {
            context_.engine.clear();
            return json_response(req, http::status::ok, json::object{{"removed", "all"}});
        }
        if (method != http::verb::post) return method_not_allowed(req, "GET, POST, DELETE");

        std::optional<std::size_t> position;
        if (const auto p = query_value(query, "position")) {
            std::size_t value = 0;
            const auto [end, ec] = std::from_chars(p->data(), p->data() + p->size(), value);
            if (ec != std::errc{} || end != p->data() + p->size()) {
                return error_response(req, http::status::bad_request,
                                      "query parameter 'position' must be a non-negative integer, got '" +
                                          std::string{*p} + "'");
            }
            position = value;
        }
        if (req.body().empty()) {
            return error_response(req, http::status::bad_request,
                                  "empty body: send one rule as a JSON object or a TOML table");
        }
        const std::size_t index = context_.engine.rules().size() + 1;
        faults::rules_result parsed;
        if (is_toml(req)) {
            const config::document doc = config::parse_document(req.body(), std::string{control_source});
            if (!doc.table) {
                return error_response(req, http::status::bad_request,
                                      "bad TOML body: " + doc.errors.front().to_string());
            }
            parsed = faults::parse_rule(*doc.table, std::string{control_source}, index);
        } else {
            json::error_code ec;
            const json::value body = json::parse(req.body(), ec);
            if (ec) return error_response(req, http::status::bad_request, "bad JSON body: " + ec.message());
            if (!body.is_object()) {
                return error_response(req, http::status::bad_request, "the body must be a JSON object (one rule)");
            }
            parsed = faults::parse_rule_json(body, index);
        }
        if (!parsed.ok() || parsed.rules.size() != 1) {
            json::object out{{"error", "invalid rule"}, {"errors", error_list(parsed.errors)}};
            return json_response(req, http::status::bad_request, out);
        }
        std::string name = parsed.rules.front().name;
        const auto added = context_.engine.add(std::move(parsed.rules.front()), position);
        if (!added.ok) return error_response(req, http::status::conflict, added.error);
        return json_response(req, http::status::created, json::object{{"added", name}});
    }

    if (path.starts_with("rules/")) {
        const std::string_view name = path.substr(6);
        if (method != http::verb::delete_) return method_not_allowed(req, "DELETE");
        if (name.empty()) return error_response(req, http::status::bad_request, "missing rule name after rules/");
        if (!context_.engine.remove(name)) {
            return error_response(req, http::status::not_found, "no rule named '" + std::string{name} + "'");
        }
        return json_response(req, http::status::ok, json::object{{"removed", name}});
    }

    if (path == "reset") {
        if (method != http::verb::post) return method_not_allowed(req, "POST");
        context_.reset();
        return json_response(req, http::status::ok, json::object{{"reset", true}});
    }

    if (path == "journal") {
        if (method != http::verb::get) return method_not_allowed(req, "GET");
        return make_response(req, http::status::ok, context_.records.to_jsonl(), "application/x-ndjson");
    }

    if (path == "ledger") {
        if (method != http::verb::get) return method_not_allowed(req, "GET");
        return json_response(req, http::status::ok, context_.effects.to_json());
    }

    if (path == "stats") {
        if (method != http::verb::get) return method_not_allowed(req, "GET");
        json::object out{{"faults", context_.engine.counters_json()}};
        out["journal"] = json::object{{"appended", context_.records.appended()},
                                      {"in_memory", context_.records.size()},
                                      {"memory_complete", context_.records.memory_complete()},
                                      {"lost", context_.records.lost()},
                                      {"failed", context_.records.failed()}};
        out["ledger"] = json::object{{"entries", context_.effects.size()}};
        if (counters_) {
            const server_counters c = counters_();
            out["server"] = json::object{{"connections", c.connections},
                                         {"refused", c.refused},
                                         {"attempts", c.attempts},
                                         {"control_requests", c.control_requests},
                                         {"bad_requests", c.bad_requests}};
        }
        return json_response(req, http::status::ok, out);
    }

    return error_response(req, http::status::not_found,
                          "unknown control path '" + std::string{target} +
                              "'; known: health, rules, rules/{name}, reset, journal, ledger, stats");
}

}  // namespace faultline::harness
