#include "faultline/config/grpc_service_config.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <initializer_list>

#include <boost/json.hpp>

#include "faultline/config/document.hpp"

namespace faultline::config {
namespace {

namespace json = boost::json;
using record::grpc_hedging_policy;
using record::grpc_method_config;
using record::grpc_method_name;
using record::grpc_retry_policy;
using record::grpc_retry_throttling;
using record::grpc_service_config;

std::string_view json_type(const json::value& v) {
    switch (v.kind()) {
        case json::kind::null: return "null";
        case json::kind::bool_: return "a boolean";
        case json::kind::int64:
        case json::kind::uint64: return "an integer";
        case json::kind::double_: return "a number";
        case json::kind::string: return "a string";
        case json::kind::array: return "an array";
        case json::kind::object: return "an object";
    }
    return "a value";
}

// Collects every problem of one document, each at its JSON path.
class json_reader {
public:
    json_reader(std::string file, config_errors& errors) : file_{std::move(file)}, errors_{errors} {}

    void fail(const std::string& path, const std::string& message) {
        errors_.push_back(config_error{{file_, 0, 0}, path + ": " + message});
    }

    // The object at `path`, or null (reported) when it is another type.
    const json::object* object(const json::value& v, const std::string& path) {
        if (const json::object* o = v.if_object()) return o;
        fail(path, "expected an object, got " + std::string(json_type(v)));
        return nullptr;
    }

    // Reports each key of `o` that is neither read nor ignored.
    void known_keys(const json::object& o, const std::string& path, std::initializer_list<std::string_view> read,
                    std::initializer_list<std::string_view> ignored = {}) {
        for (const auto& entry : o) {
            const std::string_view key = entry.key();
            const auto is = [key](std::string_view k) { return k == key; };
            if (std::any_of(read.begin(), read.end(), is) || std::any_of(ignored.begin(), ignored.end(), is)) continue;
            std::vector<std::string_view> all(read);
            all.insert(all.end(), ignored.begin(), ignored.end());
            std::sort(all.begin(), all.end());
            std::string allowed;
            for (const std::string_view n : all) allowed += (allowed.empty() ? "" : ", ") + std::string(n);
            fail(at(path, key), "unknown key; allowed: " + allowed);
        }
    }

    const json::value* required(const json::object& o, const std::string& path, std::string_view key) {
        if (const json::value* v = o.if_contains(key)) return v;
        fail(at(path, key), "missing (required)");
        return nullptr;
    }

    // A number, integral or not.
    std::optional<double> number(const json::value& v, const std::string& path) {
        if (v.is_number()) return v.to_number<double>();
        fail(path, "expected a number, got " + std::string(json_type(v)));
        return std::nullopt;
    }

    // gRPC's JSON duration: seconds with up to nine decimals and an "s" ("0.1s", "2s"), not negative.
    std::optional<std::chrono::nanoseconds> duration(const json::value& v, const std::string& path) {
        const json::string* s = v.if_string();
        const std::string form = "a duration in gRPC's form, seconds with up to 9 decimals and \"s\" (\"0.1s\", \"2s\")";
        if (s == nullptr) {
            fail(path, "expected " + form + ", got " + std::string(json_type(v)));
            return std::nullopt;
        }
        const std::string_view text{s->data(), s->size()};
        std::int64_t seconds = 0;
        std::int64_t nanos = 0;
        std::size_t i = 0;
        std::size_t int_digits = 0;
        for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i, ++int_digits) {
            // 9223372036 s is the most nanoseconds hold; refuse anything near it.
            if (int_digits == 9) {
                fail(path, "\"" + std::string(text) + "\" is too long a duration (at most 999999999s)");
                return std::nullopt;
            }
            seconds = seconds * 10 + (text[i] - '0');
        }
        std::size_t frac_digits = 0;
        if (i < text.size() && text[i] == '.') {
            for (++i; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i, ++frac_digits) {
                if (frac_digits == 9) break;
                nanos = nanos * 10 + (text[i] - '0');
            }
            if (frac_digits == 0) i = text.size() + 1;  // "1.s": no decimals after the point
        }
        if (int_digits == 0 || i + 1 != text.size() || text[i] != 's') {
            fail(path, "expected " + form + ", got \"" + std::string(text) + "\"");
            return std::nullopt;
        }
        for (std::size_t d = frac_digits; d < 9; ++d) nanos *= 10;
        return std::chrono::seconds{seconds} + std::chrono::nanoseconds{nanos};
    }

    // A status code by name (any case) or number; never OK, which is no failure.
    std::optional<grpc_status> status(const json::value& v, const std::string& path) {
        const std::string allowed = "a gRPC status code name (UNAVAILABLE, …) or number 1 to 16";
        if (v.is_string()) {
            std::string upper{v.get_string().c_str()};
            for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
            const auto code = grpc_status_names.from(upper);
            if (!code) {
                fail(path, "unknown status code \"" + std::string(v.get_string().c_str()) + "\"; expected " + allowed);
                return std::nullopt;
            }
            if (*code == grpc_status::ok) {
                fail(path, "OK is not a failure; expected " + allowed);
                return std::nullopt;
            }
            return code;
        }
        if (v.is_int64() || v.is_uint64()) {
            const auto n = v.to_number<std::int64_t>();
            if (n >= 1 && n <= 16) return static_cast<grpc_status>(n);
            fail(path, "status code " + std::to_string(n) + " out of range; expected " + allowed);
            return std::nullopt;
        }
        fail(path, "expected " + allowed + ", got " + std::string(json_type(v)));
        return std::nullopt;
    }

    // The codes of an array (each bad one reported), duplicates dropped.
    std::vector<grpc_status> statuses(const json::value& v, const std::string& path) {
        std::vector<grpc_status> out;
        const json::array* a = v.if_array();
        if (a == nullptr) {
            fail(path, "expected an array of status codes, got " + std::string(json_type(v)));
            return out;
        }
        for (std::size_t i = 0; i < a->size(); ++i) {
            const auto code = status((*a)[i], path + "[" + std::to_string(i) + "]");
            if (code && std::find(out.begin(), out.end(), *code) == out.end()) out.push_back(*code);
        }
        return out;
    }

    // A required duration > 0 (0 when missing or bad, and reported).
    std::chrono::nanoseconds positive_duration(const json::object& o, const std::string& path, std::string_view key) {
        const json::value* v = required(o, path, key);
        const auto d = v ? duration(*v, at(path, key)) : std::nullopt;
        if (d && d->count() == 0) fail(at(path, key), "must be > 0, got \"" + std::string(v->get_string().c_str()) + "\"");
        return d.value_or(std::chrono::nanoseconds{0});
    }

    // A required number that `valid` accepts, else reported with `allowed` ("must be > 0"); 0 when
    // missing or bad.
    template <class Valid>
    double required_number(const json::object& o, const std::string& path, std::string_view key, Valid valid,
                           std::string_view allowed) {
        const json::value* v = required(o, path, key);
        const auto x = v ? number(*v, at(path, key)) : std::nullopt;
        if (!x) return 0;
        if (valid(*x)) return *x;
        fail(at(path, key), std::string(allowed) + ", got " + json::serialize(*v));
        return 0;
    }

    // maxAttempts: an integer > 1; above the cap, the cap (A6: "treated as 5").
    std::optional<std::uint32_t> max_attempts(const json::value& v, const std::string& path) {
        const bool integral = v.is_int64() || v.is_uint64() || (v.is_double() && std::floor(v.get_double()) == v.get_double());
        if (!integral) {
            fail(path, "expected an integer > 1, got " + std::string(json_type(v)));
            return std::nullopt;
        }
        const double n = v.to_number<double>();
        if (n < 2) {
            fail(path, "must be an integer > 1 (values above 5 are treated as 5), got " + json::serialize(v));
            return std::nullopt;
        }
        return n > record::grpc_max_attempts_cap ? record::grpc_max_attempts_cap : static_cast<std::uint32_t>(n);
    }

    static std::string at(const std::string& path, std::string_view key) {
        return path.empty() ? std::string(key) : path + "." + std::string(key);
    }

private:
    std::string file_;
    config_errors& errors_;
};

// The readers below fill what they can and report the rest; the parser refuses the whole document when
// anything was reported, so a partly filled value never leaves it.

grpc_retry_policy read_retry(json_reader& r, const json::object& o, const std::string& path) {
    r.known_keys(o, path, {"maxAttempts", "initialBackoff", "maxBackoff", "backoffMultiplier", "retryableStatusCodes"},
                 {"perAttemptRecvTimeout"});
    grpc_retry_policy p;
    if (const json::value* m = r.required(o, path, "maxAttempts")) {
        p.max_attempts = r.max_attempts(*m, json_reader::at(path, "maxAttempts")).value_or(0);
    }
    p.initial_backoff = r.positive_duration(o, path, "initialBackoff");
    p.max_backoff = r.positive_duration(o, path, "maxBackoff");
    p.backoff_multiplier = r.required_number(o, path, "backoffMultiplier", [](double x) { return x > 0; }, "must be > 0");
    if (const json::value* c = r.required(o, path, "retryableStatusCodes")) {
        const std::string at = json_reader::at(path, "retryableStatusCodes");
        p.retryable_status_codes = r.statuses(*c, at);
        if (c->is_array() && c->get_array().empty()) r.fail(at, "must name at least one status code");
    }
    return p;
}

grpc_hedging_policy read_hedging(json_reader& r, const json::object& o, const std::string& path) {
    r.known_keys(o, path, {"maxAttempts", "hedgingDelay", "nonFatalStatusCodes"});
    grpc_hedging_policy p;
    if (const json::value* m = r.required(o, path, "maxAttempts")) {
        p.max_attempts = r.max_attempts(*m, json_reader::at(path, "maxAttempts")).value_or(0);
    }
    // Optional: "0s" (the default) sends every hedge at once.
    if (const json::value* d = o.if_contains("hedgingDelay")) {
        p.hedging_delay = r.duration(*d, json_reader::at(path, "hedgingDelay")).value_or(std::chrono::nanoseconds{0});
    }
    if (const json::value* c = o.if_contains("nonFatalStatusCodes")) {
        p.non_fatal_status_codes = r.statuses(*c, json_reader::at(path, "nonFatalStatusCodes"));
    }
    return p;
}

grpc_method_name read_name(json_reader& r, const json::object& o, const std::string& path) {
    r.known_keys(o, path, {"service", "method"});
    grpc_method_name n;
    for (const auto& [key, out] : {std::pair{"service", &n.service}, std::pair{"method", &n.method}}) {
        const json::value* s = o.if_contains(key);
        if (s == nullptr) continue;
        if (s->is_string()) *out = s->get_string().c_str();
        else r.fail(json_reader::at(path, key), "expected a string, got " + std::string(json_type(*s)));
    }
    if (n.service.empty() && !n.method.empty()) {
        r.fail(json_reader::at(path, "method"), "a method needs its service (an empty service names every service)");
    }
    return n;
}

grpc_method_config read_method(json_reader& r, const json::object& o, const std::string& path) {
    r.known_keys(o, path, {"name", "retryPolicy", "hedgingPolicy", "timeout"},
                 {"waitForReady", "maxRequestMessageBytes", "maxResponseMessageBytes"});
    grpc_method_config m;
    if (const json::value* names = r.required(o, path, "name")) {
        const std::string at = json_reader::at(path, "name");
        if (const json::array* a = names->if_array()) {
            for (std::size_t i = 0; i < a->size(); ++i) {
                const std::string item = at + "[" + std::to_string(i) + "]";
                if (const json::object* n = r.object((*a)[i], item)) m.names.push_back(read_name(r, *n, item));
            }
        } else {
            r.fail(at, "expected an array of {\"service\", \"method\"} objects, got " + std::string(json_type(*names)));
        }
    }
    const json::value* retry = o.if_contains("retryPolicy");
    const json::value* hedging = o.if_contains("hedgingPolicy");
    if (retry != nullptr && hedging != nullptr) {
        r.fail(json_reader::at(path, "hedgingPolicy"), "a method has a retryPolicy or a hedgingPolicy, not both");
    }
    const std::string retry_at = json_reader::at(path, "retryPolicy");
    if (const json::object* p = retry ? r.object(*retry, retry_at) : nullptr) m.retry = read_retry(r, *p, retry_at);
    const std::string hedging_at = json_reader::at(path, "hedgingPolicy");
    if (const json::object* p = hedging ? r.object(*hedging, hedging_at) : nullptr) m.hedging = read_hedging(r, *p, hedging_at);
    if (const json::value* t = o.if_contains("timeout")) m.timeout = r.duration(*t, json_reader::at(path, "timeout"));
    return m;
}

grpc_retry_throttling read_throttling(json_reader& r, const json::object& o, const std::string& path) {
    r.known_keys(o, path, {"maxTokens", "tokenRatio"});
    grpc_retry_throttling t;
    t.max_tokens = r.required_number(o, path, "maxTokens", [](double x) { return x > 0 && x <= 1000; },
                                     "must be in (0, 1000]");
    // A6 keeps three decimals (gRPC reads the ratio in thousandths and drops the rest).
    const auto thousandths = [](double x) { return std::floor(x * 1000 + 1e-9) / 1000; };
    t.token_ratio = thousandths(r.required_number(o, path, "tokenRatio", [&](double x) { return thousandths(x) > 0; },
                                                  "must be > 0 with three decimals kept (at least 0.001)"));
    return t;
}

// "same name" problems across method configs: gRPC refuses a service config naming one twice.
void check_duplicate_names(json_reader& r, const std::vector<std::pair<std::size_t, grpc_method_config>>& methods) {
    std::vector<std::pair<const grpc_method_name*, std::size_t>> seen;
    for (const auto& [index, m] : methods) {
        for (const grpc_method_name& n : m.names) {
            const auto same = std::find_if(seen.begin(), seen.end(), [&](const auto& s) {
                return s.first->service == n.service && s.first->method == n.method;
            });
            if (same != seen.end()) {
                r.fail("methodConfig[" + std::to_string(index) + "].name",
                       "names {\"service\": \"" + n.service + "\", \"method\": \"" + n.method +
                           "\"} as methodConfig[" + std::to_string(same->second) + "] does; each name once");
            } else {
                seen.emplace_back(&n, index);
            }
        }
    }
}

}  // namespace

std::variant<record::grpc_service_config, config_errors> parse_grpc_service_config(std::string_view json_text,
                                                                                    std::string_view file) {
    config_errors errors;
    json::stream_parser parser;
    boost::system::error_code ec;
    const std::size_t consumed = parser.write(json_text.data(), json_text.size(), ec);
    if (!ec) parser.finish(ec);
    if (ec) {
        // The error's line and column, from how far the parser read.
        const std::string_view read = json_text.substr(0, std::min(consumed, json_text.size()));
        const auto line = static_cast<std::uint32_t>(1 + std::count(read.begin(), read.end(), '\n'));
        const std::size_t line_start = read.rfind('\n');
        const auto column = static_cast<std::uint32_t>(1 + read.size() - (line_start == std::string_view::npos ? 0 : line_start + 1));
        errors.push_back(config_error{{std::string(file), line, column}, "JSON syntax error: " + ec.message()});
        return errors;
    }
    const json::value root = parser.release();
    json_reader r{std::string(file), errors};
    grpc_service_config out;
    const json::object* o = root.if_object();
    if (o == nullptr) {
        errors.push_back(config_error{{std::string(file), 0, 0}, "a gRPC service config is a JSON object, got " +
                                                                     std::string(json_type(root))});
        return errors;
    }
    r.known_keys(*o, "", {"methodConfig", "retryThrottling"},
                 {"loadBalancingPolicy", "loadBalancingConfig", "healthCheckConfig"});
    std::vector<std::pair<std::size_t, grpc_method_config>> methods;
    if (const json::value* m = o->if_contains("methodConfig")) {
        if (const json::array* a = m->if_array()) {
            for (std::size_t i = 0; i < a->size(); ++i) {
                const std::string at = "methodConfig[" + std::to_string(i) + "]";
                if (const json::object* method = r.object((*a)[i], at)) methods.emplace_back(i, read_method(r, *method, at));
            }
        } else {
            r.fail("methodConfig", "expected an array of method configs, got " + std::string(json_type(*m)));
        }
    }
    check_duplicate_names(r, methods);
    for (auto& [index, m] : methods) out.methods.push_back(std::move(m));
    if (const json::value* t = o->if_contains("retryThrottling")) {
        if (const json::object* throttling = r.object(*t, "retryThrottling")) {
            out.throttling = read_throttling(r, *throttling, "retryThrottling");
        }
    }
    if (!errors.empty()) return errors;
    return out;
}

std::variant<record::grpc_service_config, config_errors> load_grpc_service_config(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return config_errors{config_error{{path, 0, 0}, "cannot read the gRPC service config"}};
    // As for TOML documents: one byte past the bound is read, so a larger file is never held whole.
    std::string text(max_document_bytes + 1, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_document_bytes) {
        return config_errors{config_error{{path, 0, 0}, "the gRPC service config is larger than " +
                                                            std::to_string(max_document_bytes) +
                                                            " bytes (1 MiB), the most faultline reads"}};
    }
    return parse_grpc_service_config(text, path);
}

grpc_service_config_file read_grpc_service_config_key(table_reader& r, std::string_view key) {
    grpc_service_config_file out;
    const auto written = r.string(key);
    if (!written) return out;
    std::filesystem::path path{*written};
    if (path.is_relative() && !r.file().empty()) path = std::filesystem::path{r.file()}.parent_path() / path;
    auto loaded = load_grpc_service_config(path.string());
    if (auto* errors = std::get_if<config_errors>(&loaded)) {
        r.fail(key, "\"" + *written + "\" is not a usable gRPC service config (" + std::to_string(errors->size()) +
                        (errors->size() == 1 ? " error" : " errors") + " below)");
        for (config_error& e : *errors) r.errors().push_back(std::move(e));
        return out;
    }
    out.config = std::make_shared<const record::grpc_service_config>(std::get<record::grpc_service_config>(std::move(loaded)));
    out.path = std::filesystem::absolute(path).string();
    return out;
}

}  // namespace faultline::config
