#include "faultline/server/service.hpp"

#include "faultline/core/edit_distance.hpp"

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <charconv>
#include <utility>

namespace faultline::server {

namespace {

constexpr std::string_view json_type = "application/json";

std::vector<std::string_view> split_path(std::string_view target) {
    const auto end = target.find_first_of("?#");
    auto path = target.substr(0, end);
    std::vector<std::string_view> segments;
    // Bounded by the path length: each step consumes at least one character.
    while (!path.empty()) {
        if (path.front() == '/') {
            path.remove_prefix(1);
            continue;
        }
        const auto slash = path.find('/');
        segments.push_back(path.substr(0, slash));
        path = slash == std::string_view::npos ? std::string_view{} : path.substr(slash);
    }
    return segments;
}

bool is_capture(std::string_view part) { return part.size() >= 2 && part.front() == '{' && part.back() == '}'; }

bool pattern_matches(std::string_view pattern, const std::vector<std::string_view>& segments) {
    const auto parts = split_path(pattern);
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (parts[i] == "*" && i + 1 == parts.size()) return true;
        if (i >= segments.size()) return false;
        if (!is_capture(parts[i]) && parts[i] != segments[i]) return false;
    }
    return parts.size() == segments.size();
}

service_response json_response(int status, const boost::json::object& body, record::effect_kind effect) {
    return service_response{status, {{"Content-Type", std::string{json_type}}}, boost::json::serialize(body), effect};
}

// How far a request path is from an endpoint's pattern, in segments: a capture takes any segment
// for free, a literal costs the share of its characters that differ (a typo costs little, another
// word up to a whole segment), an extra segment or a missing literal costs a whole one, a missing
// capture half; segments past a final
// `*` are its own. Weighed by segments, not characters, so a short pattern with a capture is not
// nearer to every one-segment path than a literal word that differs in most of its letters.
double path_distance(const std::vector<std::string_view>& segments, std::string_view pattern) {
    constexpr double whole_segment = 2.0;
    auto parts = split_path(pattern);
    const bool rest = !parts.empty() && parts.back() == "*";
    if (rest) parts.pop_back();
    const std::size_t compared = rest ? std::min(segments.size(), parts.size()) : segments.size();
    const auto substitute = [&](std::string_view segment, std::string_view part) {
        if (is_capture(part)) return segment.empty() ? whole_segment : 0.0;
        const auto longer = std::max(segment.size(), part.size());
        if (longer == 0) return 0.0;
        return whole_segment * static_cast<double>(core::edit_distance(segment, part)) / static_cast<double>(longer);
    };
    // A missing capture (an id left out) is half as far as a missing word.
    const auto missing = [&](std::string_view part) { return is_capture(part) ? whole_segment / 2 : whole_segment; };
    std::vector<double> previous(parts.size() + 1), current(parts.size() + 1);
    previous[0] = 0;
    for (std::size_t j = 1; j <= parts.size(); ++j) previous[j] = previous[j - 1] + missing(parts[j - 1]);
    for (std::size_t i = 1; i <= compared; ++i) {
        current[0] = whole_segment * static_cast<double>(i);
        for (std::size_t j = 1; j <= parts.size(); ++j) {
            current[j] = std::min({previous[j] + whole_segment, current[j - 1] + missing(parts[j - 1]),
                                   previous[j - 1] + substitute(segments[i - 1], parts[j - 1])});
        }
        std::swap(previous, current);
    }
    return previous[parts.size()];
}

// What a write method would do to a resource: POST/PATCH non-idempotent, PUT/DELETE idempotent.
effect_semantics semantics_by_method(std::string_view method) {
    if (method == "POST" || method == "PATCH") return effect_semantics::non_idempotent;
    if (method == "PUT" || method == "DELETE") return effect_semantics::idempotent_write;
    return effect_semantics::none;
}

// The default service's endpoints, as the near-miss names them.
constexpr std::pair<std::string_view, std::string_view> builtin_endpoints[] = {
    {"POST", "/payments"},       {"GET", "/payments/{id}"},
    {"PUT", "/kv/{key}"},        {"GET", "/kv/{key}"},
    {"DELETE", "/kv/{key}"},     {"POST", "/counters/{name}/increment"},
    {"GET", "/counters/{name}"},
};

// Distinct unmatched routes told once each: beyond this many (a client making up a path per
// request), the rest are still answered 404 and journaled, only not told again.
constexpr std::size_t unmatched_routes_kept = 1000;

void replace_all(std::string& s, std::string_view what, std::string_view with) {
    for (auto pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + with.size())) {
        s.replace(pos, what.size(), with);
    }
}

}  // namespace

service_response problem(int status, std::string_view title, std::string_view detail) {
    boost::json::object body{{"type", "about:blank"}, {"title", title}, {"status", status}, {"detail", detail}};
    return service_response{status, {{"Content-Type", "application/problem+json"}}, boost::json::serialize(body),
                            record::effect_kind::none};
}

enum class service::route_kind {
    configured,
    payment_create,
    payment_get,
    kv_put,
    kv_get,
    kv_delete,
    counter_increment,
    counter_get,
    method_not_allowed,
    catch_all,
    unmatched,
};

struct service::route {
    route_kind kind = route_kind::catch_all;
    effect_semantics semantics = effect_semantics::none;
    std::size_t endpoint = 0;  // configured: index into config_.endpoints
    std::string_view param;    // the key, counter name or charge id
    std::string_view allow;    // method_not_allowed: the Allow header
};

service::service(service_config config, ledger& effects)
    : config_{std::move(config)}, ledger_{effects}, endpoint_runs_(config_.endpoints.size(), 0) {}

service::route service::find_route(std::string_view method, std::string_view target) const {
    const auto segments = split_path(target);
    for (std::size_t i = 0; i < config_.endpoints.size(); ++i) {
        const auto& e = config_.endpoints[i];
        if ((e.method == "*" || e.method == method) && pattern_matches(e.path, segments)) {
            return route{route_kind::configured, e.effect, i, {}, {}};
        }
    }
    if (config_.builtin_endpoints && !segments.empty()) {
        const auto n = segments.size();
        if (segments[0] == "payments" && n == 1) {
            if (method == "POST") return route{route_kind::payment_create, effect_semantics::non_idempotent, 0, {}, {}};
            return route{route_kind::method_not_allowed, effect_semantics::none, 0, {}, "POST"};
        }
        if (segments[0] == "payments" && n == 2) {
            if (method == "GET") return route{route_kind::payment_get, effect_semantics::read, 0, segments[1], {}};
            return route{route_kind::method_not_allowed, effect_semantics::none, 0, {}, "GET"};
        }
        if (segments[0] == "kv" && n == 2) {
            if (method == "PUT") return route{route_kind::kv_put, effect_semantics::idempotent_write, 0, segments[1], {}};
            if (method == "GET") return route{route_kind::kv_get, effect_semantics::read, 0, segments[1], {}};
            if (method == "DELETE") {
                return route{route_kind::kv_delete, effect_semantics::idempotent_write, 0, segments[1], {}};
            }
            return route{route_kind::method_not_allowed, effect_semantics::none, 0, {}, "GET, PUT, DELETE"};
        }
        if (segments[0] == "counters" && n == 3 && segments[2] == "increment") {
            if (method == "POST") {
                return route{route_kind::counter_increment, effect_semantics::non_idempotent, 0, segments[1], {}};
            }
            return route{route_kind::method_not_allowed, effect_semantics::none, 0, {}, "POST"};
        }
        if (segments[0] == "counters" && n == 2) {
            if (method == "GET") return route{route_kind::counter_get, effect_semantics::read, 0, segments[1], {}};
            return route{route_kind::method_not_allowed, effect_semantics::none, 0, {}, "GET"};
        }
    }
    if (config_.catch_all == catch_all_effect::not_found) return route{route_kind::unmatched, effect_semantics::none, 0, {}, {}};
    const auto semantics = config_.catch_all == catch_all_effect::by_method ? semantics_by_method(method)
                                                                            : effect_semantics::none;
    return route{route_kind::catch_all, semantics, 0, {}, {}};
}

std::string service::nearest_endpoint(std::string_view method, std::string_view target) const {
    const auto segments = split_path(target);
    std::string nearest;
    double best = 0;
    // Another method costs half a segment: the same path under another method is nearer than any
    // other path (WireMock's near-miss); ties go to the endpoint declared first.
    const auto consider = [&](std::string_view endpoint_method, std::string_view path) {
        const double distance =
            path_distance(segments, path) + (endpoint_method == "*" || endpoint_method == method ? 0.0 : 1.0);
        if (!nearest.empty() && distance >= best) return;
        best = distance;
        nearest = std::string{endpoint_method} + " " + std::string{path};
    };
    for (const auto& e : config_.endpoints) consider(e.method, e.path);
    if (config_.builtin_endpoints) {
        for (const auto& [m, path] : builtin_endpoints) consider(m, path);
    }
    return nearest;
}

effect_semantics service::classify(std::string_view method, std::string_view target) const {
    return find_route(method, target).semantics;
}

service_response service::handle(const service_request& request) {
    const auto r = find_route(request.method, request.target);
    // Parse outside the lock: only the commit itself is serialised.
    std::int64_t amount = 0;
    if (r.kind == route_kind::payment_create && !request.body.empty()) {
        boost::system::error_code ec;
        const auto body = boost::json::parse(request.body, ec);
        if (ec || !body.is_object()) return problem(400, "Bad Request", "the body is not a JSON object");
        if (const auto* a = body.as_object().if_contains("amount")) {
            if (!a->is_int64() && !a->is_uint64()) return problem(400, "Bad Request", "\"amount\" is not an integer");
            const auto v = a->to_number<std::int64_t>(ec);
            if (ec) return problem(400, "Bad Request", "\"amount\" is out of range");
            amount = v;
        }
    }

    std::lock_guard lock{mutex_};
    const auto commit = [&](std::string effect) {
        ledger_.record(ledger_entry{request.operation, request.attempt, request.seq, request.connection,
                                    request.time_ns, request.method, request.target, r.semantics,
                                    std::move(effect)});
    };
    switch (r.kind) {
        case route_kind::configured: {
            const auto& e = config_.endpoints[r.endpoint];
            const auto n = ++endpoint_runs_[r.endpoint];
            auto body = e.body;
            replace_all(body, "{n}", std::to_string(n));
            const bool writes = e.effect == effect_semantics::non_idempotent ||
                                e.effect == effect_semantics::idempotent_write;
            if (writes) commit(request.method + " " + e.path + " #" + std::to_string(n));
            header_list headers;
            if (!e.content_type.empty()) headers.push_back({"Content-Type", e.content_type});
            return service_response{e.status, std::move(headers), std::move(body),
                                    writes ? record::effect_kind::committed : record::effect_kind::none};
        }
        case route_kind::payment_create: {
            charge_amounts_.push_back(amount);
            const std::string id = "ch_" + std::to_string(charge_amounts_.size());
            commit("charge " + id + " amount=" + std::to_string(amount));
            return json_response(201, {{"id", id}, {"amount", amount}}, record::effect_kind::committed);
        }
        case route_kind::payment_get: {
            std::size_t n = 0;
            const auto digits = r.param.substr(std::min<std::size_t>(3, r.param.size()));
            const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
            if (!r.param.starts_with("ch_") || ec != std::errc{} || end != digits.data() + digits.size() || n == 0 ||
                n > charge_amounts_.size()) {
                return problem(404, "Not Found", "no such charge");
            }
            return json_response(200, {{"id", "ch_" + std::to_string(n)}, {"amount", charge_amounts_[n - 1]}},
                                 record::effect_kind::none);
        }
        case route_kind::kv_put: {
            kv_.insert_or_assign(std::string{r.param}, request.body);
            commit("kv put " + std::string{r.param});
            return json_response(200, {{"key", r.param}, {"value", request.body}}, record::effect_kind::committed);
        }
        case route_kind::kv_get: {
            const auto it = kv_.find(r.param);
            if (it == kv_.end()) return problem(404, "Not Found", "no such key");
            return service_response{200, {{"Content-Type", "application/octet-stream"}}, it->second, record::effect_kind::none};
        }
        case route_kind::kv_delete: {
            const auto it = kv_.find(r.param);
            const bool existed = it != kv_.end();
            if (existed) kv_.erase(it);
            commit("kv delete " + std::string{r.param});
            if (!existed) {
                auto response = problem(404, "Not Found", "no such key");
                response.effect = record::effect_kind::committed;
                return response;
            }
            return service_response{204, {}, {}, record::effect_kind::committed};
        }
        case route_kind::counter_increment: {
            auto [it, inserted] = counters_.try_emplace(std::string{r.param}, 0);
            const auto value = ++it->second;
            commit("counter " + it->first + "=" + std::to_string(value));
            return json_response(200, {{"name", it->first}, {"value", value}}, record::effect_kind::committed);
        }
        case route_kind::counter_get: {
            const auto it = counters_.find(r.param);
            const std::int64_t value = it == counters_.end() ? 0 : it->second;
            return json_response(200, {{"name", r.param}, {"value", value}}, record::effect_kind::none);
        }
        case route_kind::method_not_allowed: {
            auto response = problem(405, "Method Not Allowed", "the resource does not support " + request.method);
            response.headers.push_back({"Allow", std::string{r.allow}});
            return response;
        }
        case route_kind::catch_all: {
            const auto n = ++catch_all_runs_;
            const bool writes = r.semantics != effect_semantics::none;
            if (writes) commit("catch-all " + request.method + " #" + std::to_string(n));
            return service_response{200, {{"Content-Type", "text/plain"}}, "ok",
                                    writes ? record::effect_kind::committed : record::effect_kind::none};
        }
        case route_kind::unmatched: {
            const auto path = request.target.substr(0, request.target.find_first_of("?#"));
            unmatched_route told{{}, false};
            if (unmatched_seen_.size() < unmatched_routes_kept) {
                // Looked up in a reused buffer before a node is made: a load generator asks for the same
                // route every time.
                unmatched_route_.assign(request.method).append(" ").append(path);
                if (!unmatched_seen_.contains(unmatched_route_)) told.first = unmatched_seen_.insert(unmatched_route_).second;
            }
            const bool writes = semantics_by_method(request.method) != effect_semantics::none;
            // Looked for only when it is read (the route's first time, a write's 404): a load generator
            // reading "/" over and over must not pay for a search of the endpoints each request.
            if (told.first || writes) told.nearest = nearest_endpoint(request.method, request.target);
            // A write that reaches no endpoint commits nothing: answering it "ok" would tell the client
            // a lie no check could see. A read has no effect to judge, and health probes and load
            // generators read "/": it is still answered "ok" (but journaled and told as unmatched).
            service_response response{200, {{"Content-Type", "text/plain"}}, "ok", record::effect_kind::unmatched};
            if (writes) {
                response = problem(404, "Not Found",
                                   "no endpoint matches " + request.method + " " + path +
                                       (told.nearest.empty() ? "; the service declares none"
                                                             : "; nearest declared endpoint: " + told.nearest));
            }
            response.effect = record::effect_kind::unmatched;
            response.unmatched = std::move(told);
            return response;
        }
    }
    return problem(500, "Internal Server Error", "unrouted request");
}

std::uint64_t service::charge_count() const {
    std::lock_guard lock{mutex_};
    return charge_amounts_.size();
}

std::optional<std::string> service::kv_get(std::string_view key) const {
    std::lock_guard lock{mutex_};
    const auto it = kv_.find(key);
    if (it == kv_.end()) return std::nullopt;
    return it->second;
}

std::int64_t service::counter_value(std::string_view name) const {
    std::lock_guard lock{mutex_};
    const auto it = counters_.find(name);
    return it == counters_.end() ? 0 : it->second;
}

void service::reset() {
    std::lock_guard lock{mutex_};
    charge_amounts_ = {};  // its memory too, not only its elements
    kv_.clear();
    counters_.clear();
    std::fill(endpoint_runs_.begin(), endpoint_runs_.end(), 0);
    catch_all_runs_ = 0;
    unmatched_seen_.clear();
}

}  // namespace faultline::server
