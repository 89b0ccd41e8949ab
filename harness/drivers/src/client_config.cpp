#include "faultline/drivers/client_config.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "faultline/config/duration.hpp"
#include "faultline/config/reader.hpp"
#include "faultline/drivers/builtin_driver.hpp"
#include "faultline/drivers/command_driver.hpp"

namespace faultline::harness {

namespace {

using namespace std::chrono_literals;

constexpr std::uint32_t max_clients = 1000;
constexpr std::uint64_t max_total_operations = 1'000'000;
constexpr std::uint32_t max_command_concurrency = 64;
constexpr double max_rate = 100'000.0;

using config::need;
using config::table_reader;

constexpr std::array<client_preset, 7> presets{client_preset::good,      client_preset::naive,
                                               client_preset::no_jitter, client_preset::no_budget,
                                               client_preset::no_keys,   client_preset::ignores_retry_after,
                                               client_preset::ignores_deadline};

// "[client.policy]" + "backoff" -> "[client.policy.backoff]".
std::string nested(const std::string& context, std::string_view key) {
    const std::string base = context.ends_with("]") ? context.substr(0, context.size() - 1) : context;
    return base + "." + std::string(key) + "]";
}

std::optional<retry::jitter_kind> jitter_from_string(std::string_view s) {
    for (const auto k : {retry::jitter_kind::none, retry::jitter_kind::full, retry::jitter_kind::equal,
                         retry::jitter_kind::decorrelated, retry::jitter_kind::proportional}) {
        if (retry::to_string(k) == s) return k;
    }
    return std::nullopt;
}

void read_backoff(table_reader& r, retry::backoff_policy& b) {
    if (const auto v = r.duration("base", 0ns, 1h)) b.base = *v;
    if (const auto v = r.duration("cap", 0ns, 24h)) b.cap = *v;
    if (const auto v = r.number("multiplier", 1.0, 100.0)) b.multiplier = *v;
    if (const auto v = r.choice("jitter", {"none", "full", "equal", "decorrelated", "proportional"})) {
        b.jitter = *jitter_from_string(*v);
    }
    if (const auto v = r.number("jitter_fraction", 0.0, 1.0)) b.jitter_fraction = *v;
    if (r.ok() && b.cap < b.base) {
        r.fail("cap", "cap (" + config::format_duration(b.cap) + ") is below base (" +
                              config::format_duration(b.base) + ")");
    }
    r.finish();
}

void read_budget(table_reader& r, budget_spec& spec) {
    constexpr std::array<std::string_view, 5> options{"max_tokens", "token_ratio", "ttl", "percent_can_retry",
                                                      "min_retries_per_sec"};
    // Without a valid kind the other keys cannot be checked; one error, not one per key.
    const auto kind = r.choice("kind", {"none", "token_bucket", "ratio"}, need::required);
    if (!kind) {
        for (const auto key : options) r.allow(key);
        r.finish();
        return;
    }
    spec.kind = *kind == "none" ? budget_kind::none : *kind == "ratio" ? budget_kind::ratio : budget_kind::token_bucket;
    // Options of the other kind are errors rather than silently ignored.
    const bool bucket = spec.kind == budget_kind::token_bucket;
    const bool ratio = spec.kind == budget_kind::ratio;
    for (const std::string_view key : {"max_tokens", "token_ratio"}) {
        if (r.has(key) && !bucket) r.fail(key, "only applies to kind = \"token_bucket\"");
    }
    for (const std::string_view key : {"ttl", "percent_can_retry", "min_retries_per_sec"}) {
        if (r.has(key) && !ratio) r.fail(key, "only applies to kind = \"ratio\"");
    }
    if (bucket) {
        if (const auto v = r.number_above("max_tokens", 0.0, 1000.0)) spec.max_tokens = *v;
        if (const auto v = r.number_above("token_ratio", 0.0, 1000.0)) spec.token_ratio = *v;
    }
    if (ratio) {
        if (const auto v = r.duration("ttl", 1ms, 1h)) spec.ratio.ttl = *v;
        if (const auto v = r.number("percent_can_retry", 0.0, 1000.0)) spec.ratio.percent_can_retry = *v;
        if (const auto v = r.number("min_retries_per_sec", 0.0, 1'000'000.0)) spec.ratio.min_retries_per_sec = *v;
    }
    r.finish();
}

void read_breaker(table_reader& r, std::optional<retry::circuit_breaker_options>& breaker) {
    retry::circuit_breaker_options o = breaker.value_or(retry::circuit_breaker_options{});
    bool enabled = true;
    if (const auto v = r.boolean("enabled")) enabled = *v;
    if (const auto v = r.integer("window_size", 1, 100'000)) o.window_size = static_cast<std::uint32_t>(*v);
    if (const auto v = r.integer("minimum_calls", 1, 100'000)) o.minimum_calls = static_cast<std::uint32_t>(*v);
    if (const auto v = r.number_above("failure_ratio", 0.0, 1.0)) o.failure_ratio = *v;
    if (const auto v = r.duration("open_duration", 1ms, 1h)) o.open_duration = *v;
    if (const auto v = r.integer("half_open_probes", 1, 1000)) o.half_open_probes = static_cast<std::uint32_t>(*v);
    if (r.ok() && o.minimum_calls > o.window_size) {
        r.fail("minimum_calls", "minimum_calls (" + std::to_string(o.minimum_calls) + ") exceeds window_size (" +
                                        std::to_string(o.window_size) + ")");
    }
    r.finish();
    if (enabled) {
        breaker = o;
    } else {
        breaker.reset();
    }
}

void read_policy(table_reader& r, client_policy& p) {
    retry::retry_policy& rp = p.policy;
    if (const auto v = r.integer("max_attempts", 1, 100)) rp.max_attempts = static_cast<std::uint32_t>(*v);
    if (const auto v = r.duration_or_none("per_attempt_timeout", 1ms, 1h)) rp.per_attempt_timeout = *v;
    if (const auto v = r.duration_or_none("overall_timeout", 1ms, 24h)) rp.overall_timeout = *v;
    if (const auto v = r.duration("max_retry_after", 0ns, 24h)) rp.max_retry_after = *v;
    if (const auto v = r.boolean("honour_retry_after")) rp.honour_retry_after = *v;
    if (const auto v = r.integers("retry_on", 100, 599)) {
        for (const std::int64_t s : *v) rp.classify.retry_on(static_cast<int>(s));
    }
    if (const auto v = r.integers("never_retry", 100, 599)) {
        for (const std::int64_t s : *v) rp.classify.never_retry(static_cast<int>(s));
    }
    if (const auto v = r.integers("unprocessed", 100, 599)) {
        for (const std::int64_t s : *v) rp.classify.unprocessed(static_cast<int>(s));
    }
    if (const auto v = r.choice("idempotency_keys", {"auto", "none"})) rp.keys.auto_add = *v == "auto";
    if (const auto v = r.choice("key_format", {"quoted", "bare"})) {
        rp.keys.format = *v == "bare" ? retry::key_format::bare : retry::key_format::quoted;
    }
    if (const auto v = r.boolean("assume_idempotent")) p.assume_idempotent = *v;
    if (const auto v = r.boolean("enforce_deadline")) p.enforce_deadline = *v;
    if (const toml::table* t = r.table("backoff")) {
        table_reader sub = r.child(*t, nested(r.context(), "backoff"));
        read_backoff(sub, rp.backoff);
    }
    if (const toml::table* t = r.table("budget")) {
        table_reader sub = r.child(*t, nested(r.context(), "budget"));
        read_budget(sub, p.budget);
    }
    if (const toml::table* t = r.table("circuit_breaker")) {
        table_reader sub = r.child(*t, nested(r.context(), "circuit_breaker"));
        read_breaker(sub, p.breaker);
    }
    r.finish();
}

std::optional<request_template> read_request(table_reader& r) {
    request_template t;
    if (const auto v = r.choice("method", {"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"})) t.method = *v;
    if (const auto v = r.string("path")) {
        if (v->empty() || v->front() != '/') {
            r.fail("path", "must start with '/', got \"" + *v + "\"");
        } else {
            t.path = *v;
        }
    }
    if (const auto v = r.string("body")) t.body = *v;
    if (const auto headers = r.string_table("headers")) {
        for (const auto& [name, value] : *headers) {
            if (name.empty() || name.find_first_of(" :\r\n\t") != std::string::npos) {
                r.fail("headers", "\"" + name + "\" is not a valid header name");
                continue;
            }
            if (value.find_first_of("\r\n") != std::string::npos) {
                r.fail("headers", "header \"" + name + "\" has a line break in its value");
                continue;
            }
            t.headers.emplace_back(name, value);
        }
    }
    if (const auto v = r.integer("weight", 1, 1'000'000)) t.weight = static_cast<std::uint32_t>(*v);
    r.finish();
    if (!r.ok()) return std::nullopt;
    return t;
}

void read_workload(table_reader& r, workload& w) {
    if (const auto v = r.integer("clients", 1, max_clients)) w.clients = static_cast<std::uint32_t>(*v);
    const bool by_count = r.has("operations");
    const bool has_rate = r.has("rate");
    const bool has_duration = r.has("duration");
    const bool by_rate = has_rate || has_duration;
    r.allow("concurrency");
    if (by_count && by_rate) {
        r.fail(has_rate ? "rate" : "duration", "give either operations (per client) or rate and duration, not both");
        return;
    }
    if (by_rate) {
        w.kind = workload_kind::rate;
        if (!has_rate) r.fail("duration", "duration needs rate (operations per second)");
        if (!has_duration) r.fail("rate", "rate needs duration (how long the rate runs)");
        if (const auto v = r.number_above("rate", 0.0, max_rate)) w.rate = *v;
        if (const auto v = r.duration("duration", 1ms, 1h)) w.span = *v;
    } else if (const auto v = r.integer("operations", 1, static_cast<std::int64_t>(max_total_operations))) {
        w.operations_per_client = static_cast<std::uint64_t>(*v);
    }
    w.concurrency = w.clients;
    if (const auto v = r.integer("concurrency", 1, max_clients)) w.concurrency = static_cast<std::uint32_t>(*v);
    if (r.ok() && total_operations(w) > max_total_operations) {
        r.fail(by_rate ? "rate" : "operations",
                   "the workload has " + std::to_string(total_operations(w)) + " operations; at most " +
                       std::to_string(max_total_operations) + " are allowed");
    }
}

std::optional<builtin_config> read_builtin(table_reader& r) {
    builtin_config c;
    if (const auto v = r.choice("preset", {"good", "naive", "no_jitter", "no_budget", "no_keys",
                                           "ignores_retry_after", "ignores_deadline"})) {
        c.preset = *preset_from_string(*v);
    }
    c.policy = preset_policy(c.preset);
    read_workload(r, c.load);
    if (const auto v = r.choice("order", {"round_robin", "weighted"})) {
        c.order = *v == "weighted" ? template_order::weighted : template_order::round_robin;
    }
    if (const auto v = r.integer("threads", 1, 2)) c.threads = static_cast<std::uint32_t>(*v);
    if (const toml::array* requests = r.array_of_tables("request")) {
        c.requests.clear();
        if (requests->empty()) r.fail("request", "needs at least one [[client.request]] table");
        std::size_t i = 0;
        for (const toml::node& item : *requests) {
            table_reader sub = r.child(*item.as_table(), "[[client.request]] #" + std::to_string(++i));
            if (auto t = read_request(sub)) c.requests.push_back(std::move(*t));
        }
    }
    if (const toml::table* p = r.table("policy")) {
        table_reader sub = r.child(*p, "[client.policy]");
        read_policy(sub, c.policy);
    }
    // Command-only keys in a builtin client are mistakes, not options to ignore.
    for (const std::string_view key : {"command", "mode", "kill_grace", "output_limit"}) {
        r.reject(key, "only applies to driver = \"command\"");
    }
    if (!r.ok()) return std::nullopt;
    return c;
}

std::optional<command_config> read_command(table_reader& r, const client_overrides& overrides) {
    command_config c;
    if (!overrides.command.empty()) {
        r.allow("command");
        c.argv = overrides.command;
    } else if (const auto argv = r.strings("command")) {
        if (argv->empty() || argv->front().empty()) {
            r.fail("command", "needs a program: command = [\"program\", \"arg\", ...]");
        } else {
            c.argv = *argv;
        }
    } else if (r.ok()) {
        r.fail_table("driver = \"command\" needs command = [\"program\", \"arg\", ...] (or a command after `--`)");
    }
    if (const auto v = r.choice("mode", {"once", "per_operation"})) {
        c.options.mode = *v == "per_operation" ? command_mode::per_operation : command_mode::once;
    }
    if (const auto v = r.integer("operations", 1, 100'000)) c.options.operations = static_cast<std::uint64_t>(*v);
    if (const auto v = r.integer("concurrency", 1, max_command_concurrency)) {
        c.options.concurrency = static_cast<std::uint32_t>(*v);
    }
    if (c.options.mode == command_mode::once) {
        for (const std::string_view key : {"operations", "concurrency"}) {
            if (r.has(key)) r.fail(key, "only applies to mode = \"per_operation\"");
        }
    }
    if (const auto v = r.duration("kill_grace", 0ns, 1min)) {
        c.options.kill_grace = std::chrono::duration_cast<std::chrono::milliseconds>(*v);
    }
    if (const auto v = r.integer("output_limit", 0, 64 * 1024 * 1024)) c.options.output_limit = static_cast<std::size_t>(*v);
    for (const std::string_view key : {"preset", "clients", "rate", "duration", "order", "threads", "request", "policy"}) {
        r.reject(key, "only applies to driver = \"builtin\"");
    }
    if (!r.ok()) return std::nullopt;
    return c;
}

}  // namespace

std::string_view to_string(client_preset preset) {
    switch (preset) {
        case client_preset::good: return "good";
        case client_preset::naive: return "naive";
        case client_preset::no_jitter: return "no_jitter";
        case client_preset::no_budget: return "no_budget";
        case client_preset::no_keys: return "no_keys";
        case client_preset::ignores_retry_after: return "ignores_retry_after";
        case client_preset::ignores_deadline: return "ignores_deadline";
    }
    return "unknown";
}

std::optional<client_preset> preset_from_string(std::string_view name) {
    for (const auto p : presets) {
        if (to_string(p) == name) return p;
    }
    return std::nullopt;
}

std::span<const client_preset> all_presets() { return presets; }

std::string_view to_string(budget_kind kind) {
    switch (kind) {
        case budget_kind::none: return "none";
        case budget_kind::token_bucket: return "token_bucket";
        case budget_kind::ratio: return "ratio";
    }
    return "unknown";
}

std::string_view to_string(template_order order) {
    return order == template_order::weighted ? "weighted" : "round_robin";
}

std::shared_ptr<retry::retry_budget> make_budget(const budget_spec& spec) {
    switch (spec.kind) {
        case budget_kind::none: return nullptr;
        case budget_kind::token_bucket: return std::make_shared<retry::token_bucket_budget>(spec.max_tokens, spec.token_ratio);
        case budget_kind::ratio: return std::make_shared<retry::ratio_budget>(spec.ratio);
    }
    return nullptr;
}

client_policy preset_policy(client_preset preset) {
    client_policy good;
    good.policy.max_attempts = 4;
    good.policy.backoff = retry::backoff_policy{}.with_base(50ms).with_cap(2s).with_multiplier(2.0).with_jitter(
        retry::jitter_kind::full);
    good.policy.per_attempt_timeout = 1s;
    good.policy.overall_timeout = 5s;
    good.policy.max_retry_after = 10s;
    good.policy.honour_retry_after = true;
    good.policy.keys = retry::idempotency_options{}.with_auto_add(true).with_format(retry::key_format::quoted);
    good.budget.kind = budget_kind::ratio;
    good.budget.ratio = retry::ratio_budget_options{}.with_ttl(10s).with_percent_can_retry(0.2).with_min_retries_per_sec(10.0);

    client_policy p = good;
    switch (preset) {
        case client_preset::good: break;
        case client_preset::naive:
            p.policy.max_attempts = 5;
            p.policy.backoff = retry::backoff_policy{}.with_base(0ns).with_cap(0ns).with_multiplier(1.0).with_jitter(
                retry::jitter_kind::none);
            // Every error status is retried, even for a POST without a key (all marked "unprocessed").
            for (int s = 400; s <= 599; ++s) p.policy.classify.retry_on(s).unprocessed(s);
            p.policy.honour_retry_after = false;
            p.policy.keys.auto_add = false;
            p.budget.kind = budget_kind::none;
            p.assume_idempotent = true;
            p.enforce_deadline = false;
            break;
        case client_preset::no_jitter: p.policy.backoff.jitter = retry::jitter_kind::none; break;
        case client_preset::no_budget:
            p.policy.max_attempts = 10;
            p.budget.kind = budget_kind::none;
            break;
        case client_preset::no_keys:
            p.policy.keys.auto_add = false;
            p.assume_idempotent = true;
            break;
        case client_preset::ignores_retry_after: p.policy.honour_retry_after = false; break;
        case client_preset::ignores_deadline:
            p.policy.max_attempts = 10;
            p.enforce_deadline = false;
            break;
    }
    return p;
}

std::uint64_t total_operations(const workload& w) {
    if (w.kind == workload_kind::operations) return std::uint64_t{w.clients} * w.operations_per_client;
    const double seconds = std::chrono::duration<double>(w.span).count();
    const double n = std::floor(w.rate * seconds);
    if (!(n >= 1.0)) return 1;
    // Far above any allowed workload; only guards the conversion.
    if (n >= 1e15) return std::uint64_t{1'000'000'000'000'000};
    return static_cast<std::uint64_t>(n);
}

std::string substitute(std::string_view text, const placeholder_values& values) {
    std::string out;
    out.reserve(text.size());
    std::size_t i = 0;
    while (i < text.size()) {
        if (text[i] == '{') {
            const std::string_view rest = text.substr(i);
            const auto replace = [&](std::string_view name, std::string_view with) {
                if (rest.size() < name.size() + 2 || rest.substr(1, name.size()) != name || rest[name.size() + 1] != '}') {
                    return false;
                }
                out += with;
                i += name.size() + 2;
                return true;
            };
            if (replace("op", std::to_string(values.op)) || replace("client", std::to_string(values.client)) ||
                replace("n", std::to_string(values.n)) || (values.url && replace("url", *values.url))) {
                continue;
            }
        }
        out += text[i];
        ++i;
    }
    return out;
}

std::optional<client_policy> parse_client_policy(const toml::table& policy, const std::string& file,
                                                 client_policy base, config_errors& errors) {
    table_reader r{policy, file, "[client.policy]", errors};
    read_policy(r, base);
    if (!r.ok()) return std::nullopt;
    return base;
}

std::optional<client_config> parse_client_config(const toml::table& client, const std::string& file,
                                                 config_errors& errors, const client_overrides& overrides) {
    table_reader r{client, file, "[client]", errors};
    std::string kind = "builtin";
    if (const auto v = r.choice("driver", {"builtin", "command"})) kind = *v;
    if (!r.ok()) {
        r.finish();
        return std::nullopt;
    }
    std::optional<client_config> out;
    if (kind == "command") {
        if (auto c = read_command(r, overrides)) out = std::move(*c);
    } else if (auto c = read_builtin(r)) {
        // A command after `--` replaces a builtin client; its table must still be valid.
        if (overrides.command.empty()) {
            out = std::move(*c);
        } else {
            out = command_config{overrides.command, command_options{}};
        }
    }
    r.finish();
    if (!r.ok()) return std::nullopt;
    return out;
}

std::unique_ptr<driver> parse_client(const toml::table& client, const std::string& file, config_errors& errors,
                                     const client_overrides& overrides) {
    auto config = parse_client_config(client, file, errors, overrides);
    if (!config) return nullptr;
    if (auto* b = std::get_if<builtin_config>(&*config)) return std::make_unique<builtin_driver>(std::move(*b));
    auto& c = std::get<command_config>(*config);
    return make_command_driver(std::move(c.argv), c.options);
}

}  // namespace faultline::harness
