#include "faultline/server/model_config.hpp"

#include "faultline/config/reader.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <string>
#include <tuple>

namespace faultline::server {

namespace {

// A header name: an HTTP token. Reported at the value, in the reader's words.
std::optional<std::string> token(config::table_reader& r, std::string_view key,
                                 config::need n = config::need::optional) {
    auto s = r.string(key, n);
    if (!s) return s;
    const bool valid = !s->empty() && std::all_of(s->begin(), s->end(), [](char c) {
        return c > ' ' && c < 127 && std::string_view{"\"(),/:;<=>?@[\\]{}"}.find(c) == std::string_view::npos;
    });
    if (!valid) {
        r.fail(key, "must be an HTTP token (letters, digits, -), got \"" + *s + "\"");
        return std::nullopt;
    }
    return s;
}

std::optional<endpoint_config> parse_endpoint(config::table_reader r) {
    endpoint_config e;
    // "*" is itself a token, so it needs no special case here.
    if (auto method = token(r, "method", config::need::required)) e.method = std::move(*method);
    if (const auto path = r.string("path", config::need::required)) {
        if (path->empty() || path->front() != '/') {
            r.fail("path", "must start with '/', got \"" + *path + "\"");
        } else {
            e.path = std::move(*path);
        }
    }
    if (const auto effect =
            r.choice("effect", {"non_idempotent", "idempotent_write", "read", "none"}, config::need::required)) {
        e.effect = *effect_semantics_from_string(*effect);
    }
    if (const auto status = r.integer("status", 100, 599)) e.status = static_cast<int>(*status);
    if (auto body = r.string("body")) e.body = std::move(*body);
    if (auto content_type = r.string("content_type")) e.content_type = std::move(*content_type);
    r.finish();
    if (!r.ok()) return std::nullopt;
    return e;
}

}  // namespace

std::optional<model_config> parse_model_config(const toml::table& table, std::string_view file,
                                               config_errors& errors,
                                               std::initializer_list<std::string_view> extra_keys) {
    config_errors found;
    config::table_reader r{table, std::string{file}, "[server]", found};
    model_config config;
    if (const auto service = r.choice("service", {"default", "empty"})) {
        config.service.builtin_endpoints = *service == "default";
    }
    if (const auto mode = r.choice("idempotency", {"off", "keys"})) {
        config.idempotency.mode = *idempotency_mode_from_string(*mode);
    }
    if (const auto required = r.boolean("idempotency_required")) config.idempotency.required = *required;
    if (auto header = token(r, "identity_header")) config.identity.header = std::move(*header);
    if (auto field = r.string("identity_field")) {
        if (field->empty()) {
            r.fail("identity_field", "must not be empty");
        } else {
            config.identity.body_field = std::move(*field);
        }
    }
    if (const auto catch_all = r.choice("catch_all", {"not_found", "none", "by_method"})) {
        config.service.catch_all = *catch_all_effect_names.from(*catch_all);
    }
    if (const auto max = r.integer("journal_max_records", 1, std::numeric_limits<std::int64_t>::max())) {
        config.journal_max_records = static_cast<std::size_t>(*max);
    }
    using namespace std::chrono_literals;
    if (const auto d = r.duration("header_timeout", 1ms, 1h)) config.limits.header_timeout = *d;
    if (const auto d = r.duration("idle_timeout", 1ms, 24h)) config.limits.idle_timeout = *d;
    if (const auto d = r.duration("write_timeout", 1ms, 1h)) config.limits.write_timeout = *d;
    if (const auto n = r.integer("max_connections", 1, 1'000'000)) {
        config.limits.max_connections = static_cast<std::size_t>(*n);
    }
    if (const auto d = r.duration("max_fault_wait", 1ms, 24h)) config.limits.max_fault_wait = *d;
    if (const auto n = r.integer("max_concurrent_streams", 1, 10'000)) {
        config.limits.max_concurrent_streams = static_cast<std::uint32_t>(*n);
    }
    if (const toml::array* endpoints = r.array_of_tables("endpoint")) {
        for (const toml::node& item : *endpoints) {
            if (auto e = parse_endpoint(r.child(*item.as_table(), "[[server.endpoint]]"))) {
                config.service.endpoints.push_back(std::move(*e));
            }
        }
    }
    // Keys of the same table that other parsers read (serve_config.hpp's [server] settings).
    for (const auto extra : extra_keys) r.allow(extra);
    r.finish();
    // Reported in file order, whatever order the keys were read in.
    std::stable_sort(found.begin(), found.end(), [](const config_error& a, const config_error& b) {
        return std::tie(a.where.line, a.where.column) < std::tie(b.where.line, b.where.column);
    });
    errors.insert(errors.end(), found.begin(), found.end());
    if (!found.empty()) return std::nullopt;
    return config;
}

}  // namespace faultline::server
