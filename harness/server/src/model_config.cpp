#include "faultline/server/model_config.hpp"

#include <algorithm>
#include <array>
#include <tuple>

namespace faultline::harness {

namespace {

constexpr std::array<std::string_view, 8> server_keys{"service",        "idempotency",    "idempotency_required",
                                                      "identity_header", "identity_field", "catch_all",
                                                      "journal_max_records", "endpoint"};
constexpr std::array<std::string_view, 6> endpoint_keys{"method", "path", "effect", "status", "body", "content_type"};

template <std::size_t N>
std::string join(const std::array<std::string_view, N>& names) {
    std::string out;
    for (const auto n : names) {
        if (!out.empty()) out += ", ";
        out += n;
    }
    return out;
}

// Collects errors against one file, positioned at toml++ source regions.
class checker {
public:
    checker(std::string_view file, config_errors& errors) : file_{file}, errors_{errors} {}

    void error(const toml::source_region& where, std::string message) {
        const auto file = where.path ? *where.path : std::string{file_};
        errors_.push_back(config_error{{file, where.begin.line, where.begin.column}, std::move(message)});
        ++count_;
    }
    std::size_t count() const { return count_; }

    std::optional<std::string> string(const toml::node& node, std::string_view key) {
        if (const auto* s = node.as_string()) return s->get();
        error(node.source(), "\"" + std::string{key} + "\" must be a string");
        return std::nullopt;
    }

    // A header name: an HTTP token.
    std::optional<std::string> token(const toml::node& node, std::string_view key) {
        auto s = string(node, key);
        if (!s) return s;
        const bool valid = !s->empty() && std::all_of(s->begin(), s->end(), [](char c) {
            return c > ' ' && c < 127 && std::string_view{"\"(),/:;<=>?@[\\]{}"}.find(c) == std::string_view::npos;
        });
        if (!valid) {
            error(node.source(), "\"" + std::string{key} + "\" must be an HTTP token (letters, digits, -), got \"" + *s +
                                     "\"");
            return std::nullopt;
        }
        return s;
    }

private:
    std::string_view file_;
    config_errors& errors_;
    std::size_t count_ = 0;
};

std::optional<endpoint_config> parse_endpoint(const toml::node& node, checker& c) {
    const auto* table = node.as_table();
    if (table == nullptr) {
        c.error(node.source(), "each [[server.endpoint]] must be a table");
        return std::nullopt;
    }
    const auto before = c.count();
    endpoint_config e;
    bool have_method = false;
    bool have_path = false;
    bool have_effect = false;
    for (const auto& [key, value] : *table) {
        const auto k = key.str();
        if (k == "method") {
            // "*" is itself a token, so it needs no special case here.
            if (auto s = c.token(value, "method")) {
                e.method = *s;
                have_method = true;
            }
        } else if (k == "path") {
            if (auto s = c.string(value, "path")) {
                if (s->empty() || s->front() != '/') {
                    c.error(value.source(), "\"path\" must start with '/', got \"" + *s + "\"");
                } else {
                    e.path = *s;
                    have_path = true;
                }
            }
        } else if (k == "effect") {
            if (auto s = c.string(value, "effect")) {
                if (const auto v = effect_semantics_from_string(*s)) {
                    e.effect = *v;
                    have_effect = true;
                } else {
                    c.error(value.source(), "unknown effect \"" + *s +
                                                "\"; allowed: non_idempotent, idempotent_write, read, none");
                }
            }
        } else if (k == "status") {
            const auto* i = value.as_integer();
            if (i == nullptr || i->get() < 100 || i->get() > 599) {
                c.error(value.source(), "\"status\" must be an integer from 100 to 599");
            } else {
                e.status = static_cast<int>(i->get());
            }
        } else if (k == "body") {
            if (auto s = c.string(value, "body")) e.body = *s;
        } else if (k == "content_type") {
            if (auto s = c.string(value, "content_type")) e.content_type = *s;
        } else {
            c.error(key.source(), "unknown key \"" + std::string{k} + "\" in [[server.endpoint]]; allowed: " +
                                      join(endpoint_keys));
        }
    }
    if (!have_method) c.error(table->source(), "[[server.endpoint]] needs \"method\" (e.g. \"POST\", or \"*\")");
    if (!have_path) c.error(table->source(), "[[server.endpoint]] needs \"path\" (e.g. \"/orders/{id}\")");
    if (!have_effect) {
        c.error(table->source(),
                "[[server.endpoint]] needs \"effect\": non_idempotent, idempotent_write, read or none");
    }
    if (c.count() != before) return std::nullopt;
    return e;
}

}  // namespace

std::optional<model_config> parse_model_config(const toml::table& table, std::string_view file,
                                               config_errors& errors,
                                               std::initializer_list<std::string_view> extra_keys) {
    // toml++ iterates tables in key order; errors are reported in file order.
    config_errors found;
    checker c{file, found};
    model_config config;
    for (const auto& [key, value] : table) {
        const auto k = key.str();
        if (k == "service") {
            if (auto s = c.string(value, "service")) {
                if (*s == "default") {
                    config.service.builtin_endpoints = true;
                } else if (*s == "empty") {
                    config.service.builtin_endpoints = false;
                } else {
                    c.error(value.source(), "unknown service \"" + *s + "\"; allowed: default, empty");
                }
            }
        } else if (k == "idempotency") {
            if (auto s = c.string(value, "idempotency")) {
                if (const auto m = idempotency_mode_from_string(*s)) {
                    config.idempotency.mode = *m;
                } else {
                    c.error(value.source(), "unknown idempotency mode \"" + *s + "\"; allowed: off, keys");
                }
            }
        } else if (k == "idempotency_required") {
            if (const auto* b = value.as_boolean()) {
                config.idempotency.required = b->get();
            } else {
                c.error(value.source(), "\"idempotency_required\" must be true or false");
            }
        } else if (k == "identity_header") {
            if (auto s = c.token(value, "identity_header")) config.identity.header = *s;
        } else if (k == "identity_field") {
            if (auto s = c.string(value, "identity_field")) {
                if (s->empty()) {
                    c.error(value.source(), "\"identity_field\" must not be empty");
                } else {
                    config.identity.body_field = *s;
                }
            }
        } else if (k == "catch_all") {
            if (auto s = c.string(value, "catch_all")) {
                if (*s == "none") {
                    config.service.catch_all = catch_all_effect::none;
                } else if (*s == "by_method") {
                    config.service.catch_all = catch_all_effect::by_method;
                } else {
                    c.error(value.source(), "unknown catch_all \"" + *s + "\"; allowed: none, by_method");
                }
            }
        } else if (k == "journal_max_records") {
            const auto* i = value.as_integer();
            if (i == nullptr || i->get() <= 0) {
                c.error(value.source(), "\"journal_max_records\" must be a positive integer");
            } else {
                config.journal_max_records = static_cast<std::size_t>(i->get());
            }
        } else if (k == "endpoint") {
            const auto* list = value.as_array();
            if (list == nullptr) {
                c.error(value.source(), "\"endpoint\" must be an array of tables ([[server.endpoint]])");
                continue;
            }
            for (const auto& item : *list) {
                if (auto e = parse_endpoint(item, c)) config.service.endpoints.push_back(std::move(*e));
            }
        } else if (std::find(extra_keys.begin(), extra_keys.end(), k) == extra_keys.end()) {
            std::string allowed = join(server_keys);
            for (const auto extra : extra_keys) allowed += ", " + std::string{extra};
            c.error(key.source(), "unknown key \"" + std::string{k} + "\" in [server]; allowed: " + allowed);
        }
    }
    std::stable_sort(found.begin(), found.end(), [](const config_error& a, const config_error& b) {
        return std::tie(a.where.line, a.where.column) < std::tie(b.where.line, b.where.column);
    });
    errors.insert(errors.end(), found.begin(), found.end());
    if (!found.empty()) return std::nullopt;
    return config;
}

}  // namespace faultline::harness
