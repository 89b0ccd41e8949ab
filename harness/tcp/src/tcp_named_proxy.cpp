// A TCP proxy of a proxy set, with its toxics changed at runtime (tcp_named_proxy.hpp).
#include "faultline/tcp/tcp_named_proxy.hpp"

#include "faultline/faults/rules_toml.hpp"
#include "faultline/server/listener.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <chrono>
#include <system_error>
#include <utility>

namespace faultline::tcp {

namespace http = boost::beast::http;
namespace json = boost::json;
using server::control_error;
using server::control_method_not_allowed;
using server::control_reply;
using server::control_request;
using server::control_response;

namespace {

json::object describe(const configured_toxic& t) {
    json::object out{{"name", t.name}, {"kind", t.kind}, {"toxicity", t.toxicity}};
    if (t.stream) out["stream"] = std::string{to_string(*t.stream)};
    return out;
}

}  // namespace

tcp_named_proxy::tcp_named_proxy(toxic_set toxics, tcp_proxy_options options, const std::string& journal_path)
    : address_{options.address},
      proxy_{std::make_shared<const toxic_set>(std::move(toxics)), options,
             [this](const connection_record& r) { record(r); }} {
    if (journal_path.empty()) return;
    const auto& clock = steady_clock_source::instance();
    file_ = std::make_unique<connection_journal>(
        journal_path, std::chrono::duration_cast<std::chrono::nanoseconds>(clock.now() - proxy_.run_start()).count(),
        clock.wall_now(), options.instance);
}

tcp_named_proxy::~tcp_named_proxy() { proxy_.stop(); }

boost::system::error_code tcp_named_proxy::start() { return proxy_.start(); }

void tcp_named_proxy::stop() {
    proxy_.stop();
    if (file_) file_->flush();
}

std::uint16_t tcp_named_proxy::port() const { return proxy_.port(); }
std::string tcp_named_proxy::url() const {
    return "tcp://" + server::url_host(address_) + ":" + std::to_string(proxy_.port());
}

std::string tcp_named_proxy::journal_error() const { return file_ ? file_->error() : std::string{}; }

void tcp_named_proxy::record(const connection_record& r) {
    if (file_) file_->append(r);
    const std::lock_guard lock{records_mutex_};
    if (records_.size() < max_records_in_memory) {
        records_.push_back(r);
    } else {
        ++not_in_memory_;
    }
}

control_response tcp_named_proxy::control(const control_request& req, std::string_view target,
                                          std::string_view /*peer*/) {
    try {
        std::string_view path = target.substr(std::min(target.size(), server::control_prefix.size()));
        path = path.substr(0, path.find('?'));
        const http::verb method = req.method();
        if (path == "toxics" || path.starts_with("toxics/")) return toxics_route(req, path.substr(6));
        if (path == "health") {
            if (method != http::verb::get) return control_method_not_allowed(req, "GET");
            const std::string error = journal_error();
            const std::lock_guard lock{records_mutex_};
            return control_reply(req, http::status::ok,
                                 json::serialize(json::object{{"status", error.empty() ? "ok" : "failing"},
                                                              {"round", round_},
                                                              {"journal_error", error}}));
        }
        if (path == "reset") {
            if (method != http::verb::post) return control_method_not_allowed(req, "POST");
            const std::lock_guard lock{records_mutex_};
            records_.clear();
            not_in_memory_ = 0;
            ++round_;
            return control_reply(req, http::status::ok, json::serialize(json::object{{"reset", true}, {"round", round_}}));
        }
        if (path == "journal") {
            if (method != http::verb::get) return control_method_not_allowed(req, "GET");
            std::string lines;
            const std::lock_guard lock{records_mutex_};
            for (const connection_record& r : records_) lines += json::serialize(to_json(r)) + "\n";
            return control_reply(req, http::status::ok, std::move(lines), "application/x-ndjson");
        }
        if (path == "stats") {
            if (method != http::verb::get) return control_method_not_allowed(req, "GET");
            const tcp_proxy_counters c = proxy_.counters();
            const std::lock_guard lock{records_mutex_};
            const json::object out{
                {"proxy", json::object{{"connections", c.connections},
                                       {"toxic_connections", c.toxic_connections},
                                       {"upstream_failures", c.upstream_failures},
                                       {"bytes_up", c.bytes_up},
                                       {"bytes_down", c.bytes_down}}},
                {"journal", json::object{{"round", round_}, {"in_memory", records_.size()}, {"not_in_memory", not_in_memory_}}}};
            return control_reply(req, http::status::ok, json::serialize(out));
        }
        return control_error(req, http::status::not_found,
                             "unknown path '" + std::string{path} +
                                 "' of a tcp proxy's API; known: health, toxics, toxics/{name}, reset, journal, stats");
    } catch (const std::exception& e) {
        return control_error(req, http::status::internal_server_error, std::string{"control API failure: "} + e.what());
    }
}

// `rest`: "" (toxics) or "/{name}".
control_response tcp_named_proxy::toxics_route(const control_request& req, std::string_view rest) {
    const http::verb method = req.method();
    const std::lock_guard lock{toxics_mutex_};
    const std::shared_ptr<const toxic_set> current = proxy_.toxics();
    if (!rest.empty()) {
        if (method != http::verb::delete_) return control_method_not_allowed(req, "DELETE");
        const std::optional<std::string> name = server::percent_decode(rest.substr(1));
        if (!name) {
            return control_error(req, http::status::bad_request,
                                 "malformed percent-encoding in toxic name '" + std::string{rest.substr(1)} + "'");
        }
        auto changed = std::make_shared<toxic_set>(*current);
        const auto erased = std::erase_if(changed->toxics, [&name](const configured_toxic& t) { return t.name == *name; });
        if (erased == 0) return control_error(req, http::status::not_found, "no toxic named '" + *name + "'");
        proxy_.replace_toxics(std::move(changed));
        return control_reply(req, http::status::ok, json::serialize(json::object{{"removed", *name}}));
    }
    if (method == http::verb::get) {
        json::array list;
        for (const configured_toxic& t : current->toxics) list.push_back(describe(t));
        return control_reply(req, http::status::ok, json::serialize(json::object{{"toxics", std::move(list)}}));
    }
    if (method == http::verb::delete_) {
        proxy_.replace_toxics(std::make_shared<const toxic_set>());
        return control_reply(req, http::status::ok, json::serialize(json::object{{"removed", "all"}}));
    }
    if (method != http::verb::post) return control_method_not_allowed(req, "GET, POST, DELETE");
    std::string problem;
    const std::optional<toml::table> table = server::control_body_table(req, "one toxic", problem);
    if (!table) return control_error(req, http::status::bad_request, std::move(problem));
    config_errors errors;
    std::optional<configured_toxic> parsed = parse_toxic(*table, "", current->toxics.size() + 1, errors);
    if (!parsed) {
        json::array messages;
        for (const config_error& e : errors) messages.emplace_back(e.to_string());
        return control_reply(req, http::status::bad_request,
                             json::serialize(json::object{{"error", "invalid toxic"}, {"errors", std::move(messages)}}));
    }
    const std::string name = parsed->name;
    if (std::any_of(current->toxics.begin(), current->toxics.end(),
                    [&name](const configured_toxic& t) { return t.name == name; })) {
        return control_error(req, http::status::conflict, "a toxic named '" + name + "' exists already");
    }
    auto changed = std::make_shared<toxic_set>(*current);
    changed->toxics.push_back(std::move(*parsed));
    proxy_.replace_toxics(std::move(changed));
    return control_reply(req, http::status::created, json::serialize(json::object{{"added", name}}));
}

server::proxy_mode tcp_named_proxy::mode() {
    return {"tcp", [](const server::proxy_definition& definition,
                      config::table_reader& keys) -> std::shared_ptr<server::named_proxy> {
                tcp_proxy_options options;
                server::set_endpoints(options, definition);
                options.seed = definition.seed;
                if (const auto timeout = keys.duration("connect_timeout", std::chrono::milliseconds{1}, std::chrono::hours{1})) {
                    options.connect_timeout = std::chrono::duration_cast<std::chrono::milliseconds>(*timeout);
                }
                options.max_hold = keys.duration("max_hold", std::chrono::milliseconds{1}, std::chrono::hours{24})
                                       .value_or(options.max_hold);
                if (const auto most = keys.integer("max_connections", 1, 1'000'000)) {
                    options.max_connections = static_cast<std::size_t>(*most);
                }
                toxic_set toxics;
                if (const toml::node* node = keys.source().get("toxic")) {
                    keys.allow("toxic");
                    toxics_result parsed = parse_toxic_array(*node, keys.file());
                    keys.errors().insert(keys.errors().end(), parsed.errors.begin(), parsed.errors.end());
                    if (parsed.set) toxics = std::move(*parsed.set);
                }
                if (!keys.ok()) return nullptr;
                try {
                    return std::make_shared<tcp_named_proxy>(std::move(toxics), std::move(options), definition.journal);
                } catch (const std::system_error& e) {
                    keys.fail("journal", std::string{"cannot open the journal file: "} + e.what());
                }
                return nullptr;
            }};
}

}  // namespace faultline::tcp
