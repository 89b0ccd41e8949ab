#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "faultline/drivers/builtin_driver.hpp"
#include "faultline/drivers/command_driver.hpp"
#include "faultline/drivers/driver.hpp"

namespace faultline::drivers {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

const std::string file = "scenario.toml";

// Parses `text` (a whole TOML document with a [client] table) into a driver.
struct parsed {
    toml::table doc;
    config_errors errors;
    std::unique_ptr<driver> client;
};

parsed parse(std::string_view text, client_overrides overrides = {}) {
    parsed p;
    p.doc = toml::parse(text, file);
    const toml::table* client = p.doc["client"].as_table();
    static const toml::table empty;
    p.client = parse_client(client != nullptr ? *client : empty, file, p.errors, overrides);
    return p;
}

builtin_config builtin(std::string_view text) {
    auto p = parse(text);
    EXPECT_TRUE(p.errors.empty()) << (p.errors.empty() ? "" : p.errors.front().to_string());
    const auto* b = dynamic_cast<const builtin_driver*>(p.client.get());
    EXPECT_NE(b, nullptr);
    return b != nullptr ? b->config() : builtin_config{};
}

// The command driver `p` holds (fails the test when it is not one).
const command_driver& command(const parsed& p) {
    const auto* c = dynamic_cast<const command_driver*>(p.client.get());
    if (c == nullptr) {
        ADD_FAILURE() << "not a command driver";
        static const command_driver none{{"true"}, {}};
        return none;
    }
    return *c;
}

// The single error of `text`, which must fail.
config_error single_error(std::string_view text) {
    auto p = parse(text);
    EXPECT_EQ(p.client, nullptr);
    EXPECT_EQ(p.errors.size(), 1u);
    if (p.errors.size() != 1) {
        for (const auto& e : p.errors) ADD_FAILURE() << "error: " << e.to_string();
    }
    return p.errors.empty() ? config_error{} : p.errors.front();
}

TEST(ClientConfig, EmptyTableIsTheGoodBuiltinClient) {
    const auto c = builtin("[client]\n");
    EXPECT_EQ(c.preset, client_preset::good);
    EXPECT_EQ(c.load.kind, workload_kind::operations);
    EXPECT_EQ(c.load.clients, 1u);
    EXPECT_EQ(c.load.operations_per_client, 1u);
    EXPECT_EQ(c.load.concurrency, 1u);
    ASSERT_EQ(c.requests.size(), 1u);
    EXPECT_EQ(c.requests[0].method, "POST");
    EXPECT_EQ(c.requests[0].path, "/payments");
    EXPECT_EQ(c.threads, 1u);
    EXPECT_EQ(c.protocol, client_protocol::http1);
    EXPECT_EQ(total_operations(c.load), 1u);
}

TEST(ClientConfig, EveryBuiltinKey) {
    const auto c = builtin(R"(
[client]
driver = "builtin"
preset = "no_jitter"
clients = 20
operations = 5
concurrency = 8
order = "weighted"
threads = 2
protocol = "h2"

[[client.request]]
method = "PUT"
path = "/kv/{client}-{n}"
body = '{"op":{op}}'
headers = { "X-Trace" = "t-{op}" }
weight = 3

[[client.request]]
method = "GET"
path = "/kv/x"

[client.policy]
max_attempts = 6
per_attempt_timeout = "300ms"
overall_timeout = "2s"
max_retry_after = "1500ms"
honour_retry_after = false
retry_on = [409]
never_retry = [502]
unprocessed = [500]
idempotency_keys = "none"
key_format = "bare"
assume_idempotent = true
enforce_deadline = false
backoff = { base = "10ms", cap = "1s", multiplier = 3, jitter = "proportional", jitter_fraction = 0.5 }
budget = { kind = "token_bucket", max_tokens = 20, token_ratio = 0.5 }
circuit_breaker = { window_size = 30, minimum_calls = 5, failure_ratio = 0.25, open_duration = "3s", half_open_probes = 2 }
)");
    EXPECT_EQ(c.preset, client_preset::no_jitter);
    EXPECT_EQ(c.load.clients, 20u);
    EXPECT_EQ(c.load.operations_per_client, 5u);
    EXPECT_EQ(c.load.concurrency, 8u);
    EXPECT_EQ(total_operations(c.load), 100u);
    EXPECT_EQ(c.order, template_order::weighted);
    EXPECT_EQ(c.threads, 2u);
    EXPECT_EQ(c.protocol, client_protocol::h2);
    ASSERT_EQ(c.requests.size(), 2u);
    EXPECT_EQ(c.requests[0].method, "PUT");
    EXPECT_EQ(c.requests[0].path, "/kv/{client}-{n}");
    EXPECT_EQ(c.requests[0].body, R"({"op":{op}})");
    ASSERT_EQ(c.requests[0].headers.size(), 1u);
    EXPECT_EQ(c.requests[0].headers[0].first, "X-Trace");
    EXPECT_EQ(c.requests[0].headers[0].second, "t-{op}");
    EXPECT_EQ(c.requests[0].weight, 3u);
    EXPECT_EQ(c.requests[1].method, "GET");
    EXPECT_EQ(c.requests[1].weight, 1u);

    const client_policy& p = c.policy;
    EXPECT_EQ(p.policy.max_attempts, 6u);
    EXPECT_EQ(p.policy.per_attempt_timeout, std::optional<duration>{300ms});
    EXPECT_EQ(p.policy.overall_timeout, std::optional<duration>{2s});
    EXPECT_EQ(p.policy.max_retry_after, 1500ms);
    EXPECT_FALSE(p.policy.honour_retry_after);
    EXPECT_TRUE(p.policy.classify.is_retryable_status(409));
    EXPECT_TRUE(p.policy.classify.is_never_retry_status(502));
    EXPECT_FALSE(p.policy.classify.is_retryable_status(502));
    EXPECT_TRUE(p.policy.classify.is_unprocessed_status(500));
    EXPECT_FALSE(p.policy.keys.auto_add);
    EXPECT_EQ(p.policy.keys.format, retry::key_format::bare);
    EXPECT_TRUE(p.assume_idempotent);
    EXPECT_FALSE(p.enforce_deadline);
    EXPECT_EQ(p.policy.backoff.base, 10ms);
    EXPECT_EQ(p.policy.backoff.cap, 1s);
    EXPECT_EQ(p.policy.backoff.multiplier, 3.0);
    EXPECT_EQ(p.policy.backoff.jitter, retry::jitter_kind::proportional);
    EXPECT_EQ(p.policy.backoff.jitter_fraction, 0.5);
    EXPECT_EQ(p.budget.kind, budget_kind::token_bucket);
    EXPECT_EQ(p.budget.max_tokens, 20.0);
    EXPECT_EQ(p.budget.token_ratio, 0.5);
    ASSERT_TRUE(p.breaker.has_value());
    EXPECT_EQ(p.breaker->window_size, 30u);
    EXPECT_EQ(p.breaker->minimum_calls, 5u);
    EXPECT_EQ(p.breaker->failure_ratio, 0.25);
    EXPECT_EQ(p.breaker->open_duration, 3s);
    EXPECT_EQ(p.breaker->half_open_probes, 2u);
    EXPECT_EQ(p.policy.budget, nullptr);
    EXPECT_EQ(p.policy.breaker, nullptr);
}

TEST(ClientConfig, RateWorkloadAndRatioBudget) {
    const auto c = builtin(R"(
[client]
clients = 4
rate = 50
duration = "2s"
[client.policy]
overall_timeout = "none"
per_attempt_timeout = "none"
[client.policy.budget]
kind = "ratio"
ttl = "5s"
percent_can_retry = 0.1
min_retries_per_sec = 2
)");
    EXPECT_EQ(c.load.kind, workload_kind::rate);
    EXPECT_EQ(c.load.rate, 50.0);
    EXPECT_EQ(c.load.span, 2s);
    EXPECT_EQ(c.load.concurrency, 4u);
    EXPECT_EQ(total_operations(c.load), 100u);
    EXPECT_FALSE(c.policy.policy.overall_timeout.has_value());
    EXPECT_FALSE(c.policy.policy.per_attempt_timeout.has_value());
    EXPECT_EQ(c.policy.budget.kind, budget_kind::ratio);
    EXPECT_EQ(c.policy.budget.ratio.ttl, 5s);
    EXPECT_EQ(c.policy.budget.ratio.percent_can_retry, 0.1);
    EXPECT_EQ(c.policy.budget.ratio.min_retries_per_sec, 2.0);
}

TEST(ClientConfig, BudgetNoneAndBreakerDisabled) {
    const auto c = builtin(R"(
[client.policy]
budget = { kind = "none" }
circuit_breaker = { enabled = false }
)");
    EXPECT_EQ(c.policy.budget.kind, budget_kind::none);
    EXPECT_FALSE(c.policy.breaker.has_value());
    EXPECT_EQ(make_budget(c.policy.budget), nullptr);
}

TEST(ClientConfig, MakeBudgetBuildsTheConfiguredKind) {
    budget_spec bucket;
    bucket.kind = budget_kind::token_bucket;
    bucket.max_tokens = 4;
    auto b = make_budget(bucket);
    auto* tb = dynamic_cast<retry::token_bucket_budget*>(b.get());
    ASSERT_NE(tb, nullptr);
    EXPECT_EQ(tb->milli_tokens(), 4000);
    budget_spec ratio;
    ratio.kind = budget_kind::ratio;
    EXPECT_NE(dynamic_cast<retry::ratio_budget*>(make_budget(ratio).get()), nullptr);
}

// --- presets -----------------------------------------------------------------------------------

TEST(Presets, GoodIsSensible) {
    const client_policy p = preset_policy(client_preset::good);
    EXPECT_EQ(p.policy.max_attempts, 4u);
    EXPECT_EQ(p.policy.backoff.base, 50ms);
    EXPECT_EQ(p.policy.backoff.cap, 2s);
    EXPECT_EQ(p.policy.backoff.multiplier, 2.0);
    EXPECT_EQ(p.policy.backoff.jitter, retry::jitter_kind::full);
    EXPECT_EQ(p.policy.per_attempt_timeout, std::optional<duration>{1s});
    EXPECT_EQ(p.policy.overall_timeout, std::optional<duration>{5s});
    EXPECT_EQ(p.policy.max_retry_after, 10s);
    EXPECT_TRUE(p.policy.honour_retry_after);
    EXPECT_TRUE(p.policy.keys.auto_add);
    EXPECT_EQ(p.policy.keys.format, retry::key_format::quoted);
    EXPECT_EQ(p.budget.kind, budget_kind::ratio);
    EXPECT_EQ(p.budget.ratio.ttl, 10s);
    EXPECT_EQ(p.budget.ratio.percent_can_retry, 0.2);
    EXPECT_EQ(p.budget.ratio.min_retries_per_sec, 10.0);
    EXPECT_FALSE(p.breaker.has_value());
    EXPECT_FALSE(p.assume_idempotent);
    EXPECT_TRUE(p.enforce_deadline);
    // The retry library's default status sets.
    for (int s : {408, 429, 500, 502, 503, 504}) EXPECT_TRUE(p.policy.classify.is_retryable_status(s)) << s;
    for (int s : {400, 401, 403, 404, 422, 501}) EXPECT_FALSE(p.policy.classify.is_retryable_status(s)) << s;
}

TEST(Presets, NaiveRetriesEverythingImmediately) {
    const client_policy p = preset_policy(client_preset::naive);
    EXPECT_EQ(p.policy.max_attempts, 5u);
    EXPECT_EQ(p.policy.backoff.base, 0ns);
    EXPECT_EQ(p.policy.backoff.cap, 0ns);
    EXPECT_EQ(p.policy.backoff.jitter, retry::jitter_kind::none);
    for (int s = 400; s <= 599; ++s) {
        EXPECT_TRUE(p.policy.classify.is_retryable_status(s)) << s;
        EXPECT_TRUE(p.policy.classify.is_unprocessed_status(s)) << s;
    }
    // A POST without a key is retried after a reset and after a 400.
    const auto cls = [&](retry::attempt_outcome o) {
        return p.policy.classify.classify(o, p.assume_idempotent ? retry::request_safety::idempotent
                                                                  : retry::request_safety::unsafe);
    };
    EXPECT_EQ(cls(retry::attempt_outcome::transport(retry::outcome_kind::reset_after_write)),
              retry::classification::retryable);
    EXPECT_EQ(cls(retry::attempt_outcome::http(400)), retry::classification::retryable);
    EXPECT_FALSE(p.policy.honour_retry_after);
    EXPECT_FALSE(p.policy.keys.auto_add);
    EXPECT_EQ(p.budget.kind, budget_kind::none);
    EXPECT_TRUE(p.assume_idempotent);
    EXPECT_FALSE(p.enforce_deadline);
    EXPECT_EQ(p.policy.per_attempt_timeout, std::optional<duration>{1s});
}

TEST(Presets, EachBadPresetBreaksOneThing) {
    const client_policy good = preset_policy(client_preset::good);

    const client_policy no_jitter = preset_policy(client_preset::no_jitter);
    EXPECT_EQ(no_jitter.policy.backoff.jitter, retry::jitter_kind::none);
    EXPECT_EQ(no_jitter.policy.backoff.base, good.policy.backoff.base);
    EXPECT_EQ(no_jitter.policy.backoff.cap, good.policy.backoff.cap);

    const client_policy no_budget = preset_policy(client_preset::no_budget);
    EXPECT_EQ(no_budget.budget.kind, budget_kind::none);
    EXPECT_EQ(no_budget.policy.max_attempts, 10u);

    const client_policy no_keys = preset_policy(client_preset::no_keys);
    EXPECT_FALSE(no_keys.policy.keys.auto_add);
    EXPECT_TRUE(no_keys.assume_idempotent);
    EXPECT_EQ(no_keys.budget.kind, budget_kind::ratio);

    const client_policy ignores_retry_after = preset_policy(client_preset::ignores_retry_after);
    EXPECT_FALSE(ignores_retry_after.policy.honour_retry_after);
    EXPECT_EQ(ignores_retry_after.policy.backoff.jitter, retry::jitter_kind::full);

    const client_policy ignores_deadline = preset_policy(client_preset::ignores_deadline);
    EXPECT_FALSE(ignores_deadline.enforce_deadline);
    EXPECT_EQ(ignores_deadline.policy.overall_timeout, std::optional<duration>{5s});
    EXPECT_EQ(ignores_deadline.policy.max_attempts, 10u);
}

TEST(Presets, NamesRoundTrip) {
    ASSERT_EQ(all_presets.size(), 7u);
    for (const auto p : all_presets) EXPECT_EQ(preset_from_string(to_string(p)), p);
    EXPECT_EQ(preset_from_string("bogus"), std::nullopt);
}

TEST(Presets, PolicyTableOverridesThePreset) {
    const auto c = builtin(R"(
[client]
preset = "naive"
[client.policy]
max_attempts = 2
honour_retry_after = true
)");
    EXPECT_EQ(c.policy.policy.max_attempts, 2u);
    EXPECT_TRUE(c.policy.policy.honour_retry_after);
    EXPECT_EQ(c.policy.policy.backoff.base, 0ns);  // the rest of the preset stays
    EXPECT_TRUE(c.policy.assume_idempotent);
}

// --- placeholders ------------------------------------------------------------------------------

TEST(Placeholders, Substitute) {
    const placeholder_values v{17, 3, 5, std::nullopt, std::nullopt};
    EXPECT_EQ(substitute("/orders/{op}/c{client}/n{n}", v), "/orders/17/c3/n5");
    EXPECT_EQ(substitute(R"({"order":{op},"x":{"y":1}})", v), R"({"order":17,"x":{"y":1}})");
    EXPECT_EQ(substitute("{url}/x", v), "{url}/x");
    EXPECT_EQ(substitute("{key}", v), "{key}");
    EXPECT_EQ(substitute("{op", v), "{op");
    EXPECT_EQ(substitute("{}{{op}}", v), "{}{17}");
    const placeholder_values with_url{0, 0, 0, std::string_view{"http://127.0.0.1:9"}, std::string_view{"k-1"}};
    EXPECT_EQ(substitute("{url}/payments", with_url), "http://127.0.0.1:9/payments");
    EXPECT_EQ(substitute("Idempotency-Key: {key}", with_url), "Idempotency-Key: k-1");
    EXPECT_EQ(operation_name(3, 5), "c3-n5");
}

TEST(Placeholders, OperationKeysAreUuidsFixedBySeedAndOperation) {
    const retry::idempotency_key key = operation_key(7, 3);
    EXPECT_TRUE(retry::is_uuid_v4(key.view())) << key.view();
    EXPECT_EQ(operation_key(7, 3), key);
    EXPECT_NE(operation_key(7, 4), key);
    EXPECT_NE(operation_key(8, 3), key);
}

// --- command clients ---------------------------------------------------------------------------

TEST(ClientConfig, CommandClient) {
    auto p = parse(R"(
[client]
driver = "command"
command = ["curl", "-s", "{url}/payments"]
mode = "per_operation"
operations = 10
concurrency = 3
kill_grace = "200ms"
output_limit = 4096
)");
    ASSERT_TRUE(p.errors.empty()) << p.errors.front().to_string();
    const command_driver& c = command(p);
    EXPECT_THAT(c.argv(), ::testing::ElementsAre("curl", "-s", "{url}/payments"));
    EXPECT_EQ(c.options().mode, command_mode::per_operation);
    EXPECT_EQ(c.options().operations, 10u);
    EXPECT_EQ(c.options().concurrency, 3u);
    EXPECT_EQ(c.options().kill_grace, 200ms);
    EXPECT_EQ(c.options().output_limit, 4096u);
}

// A gRPC client's service config, its path taken from the scenario file's folder: the grpc_* checks
// judge against it, {service_config} names the file; an unusable file is the key's error.
TEST(ClientConfig, CommandClientDeclaresItsGrpcServiceConfigBesideTheScenario) {
    const std::filesystem::path folder =
        std::filesystem::temp_directory_path() / ("faultline-client-config-" + std::to_string(::getpid()));
    std::filesystem::create_directories(folder);
    std::ofstream{folder / "retry.json"} << R"({"methodConfig":[{"name":[{"service":"bank.Payments"}],)"
                                            R"("retryPolicy":{"maxAttempts":3,"initialBackoff":"0.1s",)"
                                            R"("maxBackoff":"1s","backoffMultiplier":2,)"
                                            R"("retryableStatusCodes":["UNAVAILABLE"]}}]})";
    const std::string scenario = (folder / "scenario.toml").string();
    const auto doc = toml::parse("[client]\ndriver = \"command\"\ncommand = [\"c\", \"{service_config}\"]\n"
                                 "service_config = \"retry.json\"\n", scenario);
    config_errors errors;
    const auto client = parse_client(*doc["client"].as_table(), scenario, errors);
    ASSERT_TRUE(errors.empty()) << errors.front().to_string();
    const record::declared_client d = client->declared();
    ASSERT_NE(d.grpc, nullptr);
    EXPECT_EQ(d.grpc->methods.at(0).retry->max_attempts, 3u);
    EXPECT_EQ(d.grpc_service_config_file, (folder / "retry.json").string());

    const auto missing = toml::parse("[client]\ndriver = \"command\"\ncommand = [\"c\"]\n"
                                     "service_config = \"none.json\"\n", scenario);
    config_errors bad;
    EXPECT_EQ(parse_client(*missing["client"].as_table(), scenario, bad), nullptr);
    ASSERT_EQ(bad.size(), 2u);
    EXPECT_THAT(bad[0].message, HasSubstr("service_config: \"none.json\" is not a usable gRPC service config (1 error below)"));
    EXPECT_THAT(bad[1].message, HasSubstr("cannot read the gRPC service config"));
    std::filesystem::remove_all(folder);
}

TEST(ClientConfig, CommandClientDeclaresItsOwnSettings) {
    auto p = parse(R"(
[client]
driver = "command"
command = ["my-client", "{url}"]
deadline = "2s"
max_attempts = 4
backoff = { base = "100ms", cap = "2s", multiplier = 3, jitter = "proportional", jitter_fraction = 0.5 }
)");
    ASSERT_TRUE(p.errors.empty()) << p.errors.front().to_string();
    const record::declared_client d = command(p).declared();
    EXPECT_EQ(d.deadline, std::chrono::nanoseconds{2s});
    EXPECT_EQ(d.max_attempts, 4u);
    ASSERT_TRUE(d.backoff.has_value());
    EXPECT_EQ(d.backoff->base, std::chrono::nanoseconds{100ms});
    EXPECT_EQ(d.backoff->cap, std::chrono::nanoseconds{2s});
    EXPECT_EQ(d.backoff->multiplier, 3.0);
    EXPECT_EQ(d.backoff->jitter, record::declared_jitter::proportional);
    EXPECT_EQ(d.backoff->jitter_fraction, 0.5);

    // A declared curve needs only base, cap and jitter; multiplier 2 is the exponential's own.
    auto q = parse("[client]\ndriver = \"command\"\ncommand = [\"x\"]\n"
                   "[client.backoff]\nbase = \"1ms\"\ncap = \"1s\"\njitter = \"decorrelated\"\n");
    ASSERT_TRUE(q.errors.empty()) << q.errors.front().to_string();
    const record::declared_client e = command(q).declared();
    EXPECT_EQ(e.deadline, std::nullopt);
    EXPECT_EQ(e.max_attempts, std::nullopt);
    ASSERT_TRUE(e.backoff.has_value());
    EXPECT_EQ(e.backoff->multiplier, 2.0);
    EXPECT_EQ(e.backoff->jitter, record::declared_jitter::decorrelated);
    EXPECT_EQ(to_string(e.backoff->jitter), "decorrelated");

    // Nothing declared: nothing assumed.
    auto r = parse("[client]\ndriver = \"command\"\ncommand = [\"x\"]\n");
    ASSERT_TRUE(r.errors.empty());
    EXPECT_TRUE(command(r).declared().empty());
    // The builtin client declares its own policy's limit and curve.
    EXPECT_EQ(parse("[client]\n[client.policy]\nmax_attempts = 2\n").client->declared().max_attempts, 2u);
}

TEST(ClientConfig, AnEmptyProgramFromTheCommandLineIsAConfigError) {
    client_overrides o;
    o.command = {""};
    auto p = parse("[client]\nclients = 3\n", o);
    EXPECT_EQ(p.client, nullptr);
    ASSERT_EQ(p.errors.size(), 1u);
    EXPECT_NE(p.errors[0].message.find("the command after `--` needs a program"), std::string::npos)
        << p.errors[0].message;
}

TEST(ClientConfig, CommandFromTheCommandLine) {
    client_overrides o;
    o.command = {"sh", "-c", "true"};
    // A builtin table is still validated, then replaced by the command.
    auto p = parse("[client]\nclients = 3\n", o);
    ASSERT_TRUE(p.errors.empty());
    const command_driver& c = command(p);
    EXPECT_EQ(c.argv(), o.command);
    EXPECT_EQ(c.options().mode, command_mode::once);
    // With driver = "command" the table's command is replaced and its options kept.
    auto q = parse("[client]\ndriver = \"command\"\ncommand = [\"x\"]\nmode = \"per_operation\"\noperations = 4\n", o);
    ASSERT_TRUE(q.errors.empty());
    const command_driver& d = command(q);
    EXPECT_EQ(d.argv(), o.command);
    EXPECT_EQ(d.options().operations, 4u);
    // A bad builtin table is still an error.
    auto r = parse("[client]\nclients = 0\n", o);
    EXPECT_EQ(r.client, nullptr);
}

TEST(ClientConfig, ParseClientBuildsTheDriver) {
    auto doc = toml::parse("[client]\nclients = 2\n", file);
    config_errors errors;
    auto d = parse_client(*doc["client"].as_table(), file, errors);
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->name(), "builtin");
    ASSERT_TRUE(d->declared().max_attempts);
    EXPECT_EQ(*d->declared().max_attempts, 4u);
    ASSERT_TRUE(d->declared().backoff);
    EXPECT_EQ(d->declared().backoff->cap, std::chrono::seconds{2});
    EXPECT_FALSE(d->declared().deadline);

    auto doc2 = toml::parse("[client]\ndriver = \"command\"\ncommand = [\"true\"]\n", file);
    auto c = parse_client(*doc2["client"].as_table(), file, errors);
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->name(), "command");
    EXPECT_TRUE(c->declared().empty());
    EXPECT_TRUE(errors.empty());

    auto bad = toml::parse("[client]\nclients = -1\n", file);
    EXPECT_EQ(parse_client(*bad["client"].as_table(), file, errors), nullptr);
    EXPECT_EQ(errors.size(), 1u);
}

// --- the registry --------------------------------------------------------------------------------

TEST(DriverRegistry, ListsEveryDriver) {
    EXPECT_EQ(driver_registry::instance().names(), (std::vector<std::string>{"builtin", "command"}));
    for (const driver_info& e : driver_registry::instance().entries()) {
        EXPECT_FALSE(e.summary.empty()) << e.name;
        EXPECT_NE(e.make, nullptr) << e.name;
    }
}

// A driver's declared keys are exactly the keys its parser reads: the allowed list of an unknown key
// in its table is those keys and `driver`.
TEST(DriverRegistry, DeclaredKeysAreTheKeysEachDriverReads) {
    client_overrides o;
    o.command = {"true"};
    for (const driver_info& e : driver_registry::instance().entries()) {
        std::vector<std::string> keys(e.keys.begin(), e.keys.end());
        keys.emplace_back("driver");
        std::sort(keys.begin(), keys.end());
        std::string allowed;
        for (const auto& k : keys) allowed += (allowed.empty() ? "" : ", ") + k;
        const auto p = parse("[client]\ndriver = \"" + e.name + "\"\nbogus = 1\n", o);
        ASSERT_EQ(p.errors.size(), 1u) << e.name;
        EXPECT_THAT(p.errors.front().message, HasSubstr("unknown key \"bogus\"; allowed: " + allowed)) << e.name;
    }
}

TEST(DriverRegistry, IdentityHeaderIsTheDriversOwn) {
    auto b = parse("[client]\n");
    ASSERT_NE(b.client, nullptr);
    EXPECT_EQ(b.client->identity_header(), operation_header);
    auto c = parse("[client]\ndriver = \"command\"\ncommand = [\"true\"]\n");
    ASSERT_NE(c.client, nullptr);
    EXPECT_EQ(c.client->identity_header(), "");
}

// --- bad input ---------------------------------------------------------------------------------

TEST(ClientConfigErrors, UnknownKeyListsTheAllowedOnes) {
    const auto e = single_error("[client]\nclients = 2\nclinets = 3\n");
    EXPECT_EQ(e.where.file, file);
    EXPECT_EQ(e.where.line, 3u);
    EXPECT_EQ(e.where.column, 1u);
    EXPECT_THAT(e.message, HasSubstr("unknown key \"clinets\""));
    EXPECT_THAT(e.message, HasSubstr("allowed: clients, concurrency, driver, duration, operations, order, "
                                     "policy, preset, protocol, rate, request, threads"));
    EXPECT_EQ(e.to_string().rfind("scenario.toml:3:1: [client]", 0), 0u) << e.to_string();
}

TEST(ClientConfigErrors, UnknownKeysInNestedTables) {
    EXPECT_THAT(single_error("[client.policy]\nmax_attempt = 3\n").message,
                HasSubstr("[client.policy]: unknown key \"max_attempt\"; allowed: assume_idempotent, backoff, "
                          "budget, circuit_breaker, enforce_deadline, honour_retry_after, idempotency_keys, "
                          "key_format, max_attempts, max_retry_after, never_retry, overall_timeout, "
                          "per_attempt_timeout, retry_on, unprocessed"));
    EXPECT_THAT(single_error("[client.policy.backoff]\nbase = \"1ms\"\njiter = \"full\"\n").message,
                HasSubstr("[client.policy.backoff]: unknown key \"jiter\"; allowed: base, cap, jitter, "
                          "jitter_fraction, multiplier"));
    EXPECT_THAT(single_error("[client.policy.circuit_breaker]\nwindow = 3\n").message,
                HasSubstr("unknown key \"window\""));
    EXPECT_THAT(single_error("[[client.request]]\npath = \"/x\"\nbdy = \"\"\n").message,
                HasSubstr("[[client.request]] #1: unknown key \"bdy\"; allowed: body, headers, method, path, weight"));
}

TEST(ClientConfigErrors, WrongTypes) {
    auto e = single_error("[client]\nclients = \"ten\"\n");
    EXPECT_EQ(e.where.line, 2u);
    EXPECT_EQ(e.where.column, 11u);
    EXPECT_THAT(e.message, HasSubstr("[client]: clients: expected an integer, got a string"));
    EXPECT_THAT(single_error("[client.policy]\nhonour_retry_after = 1\n").message,
                HasSubstr("honour_retry_after: expected true or false, got an integer"));
    EXPECT_THAT(single_error("[client.policy]\nbackoff = \"fast\"\n").message,
                HasSubstr("backoff: expected a table, got a string"));
    EXPECT_THAT(single_error("[client.policy]\nretry_on = [500, \"503\"]\n").message,
                HasSubstr("retry_on: every item must be an integer in [100, 599]"));
    EXPECT_THAT(single_error("[client]\ndriver = \"command\"\ncommand = \"curl\"\n").message,
                HasSubstr("command: expected an array of strings, got a string"));
    EXPECT_THAT(single_error("[client]\nrequest = 3\n").message,
                HasSubstr("request: expected an array of tables, got an integer"));
}

TEST(ClientConfigErrors, OutOfRange) {
    EXPECT_THAT(single_error("[client]\nclients = 0\n").message, HasSubstr("clients: must be in [1, 1000], got 0"));
    EXPECT_THAT(single_error("[client]\nclients = 1001\n").message, HasSubstr("clients: must be in [1, 1000], got 1001"));
    EXPECT_THAT(single_error("[client]\nthreads = 3\n").message, HasSubstr("threads: must be in [1, 2], got 3"));
    EXPECT_THAT(single_error("[client.policy]\nmax_attempts = 0\n").message, HasSubstr("[client.policy]: max_attempts: must be in [1, 100], got 0"));
    EXPECT_THAT(single_error("[client.policy.backoff]\nmultiplier = 0.5\n").message,
                HasSubstr("multiplier: must be in [1, 100], got 0.5"));
    EXPECT_THAT(single_error("[client.policy.backoff]\njitter_fraction = 1.5\n").message, HasSubstr("jitter_fraction: must be in [0, 1], got 1.5"));
    EXPECT_THAT(single_error("[client.policy]\nretry_on = [700]\n").message, HasSubstr("[100, 599]"));
    EXPECT_THAT(single_error("[client.policy.budget]\nkind = \"token_bucket\"\nmax_tokens = 0\n").message,
                HasSubstr("max_tokens: must be in [0.001, 1000], got 0"));
    EXPECT_THAT(single_error("[client.policy.circuit_breaker]\nfailure_ratio = 0\n").message,
                HasSubstr("failure_ratio: must be in (0, 1], got 0"));
    EXPECT_THAT(single_error("[client]\nclients = 1000\noperations = 1001\n").message,
                HasSubstr("the workload has 1001000 operations; at most 1000000 are allowed"));
}

// The retry library's token bucket keeps three decimals and refuses less than 0.001; the reader says so at
// the key instead of the run failing when the driver builds the bucket.
TEST(ClientConfigErrors, TokenBucketValuesBelowOneThousandthAreLoadErrors) {
    for (const std::string_view key : {"max_tokens", "token_ratio"}) {
        const auto e = single_error("[client.policy.budget]\nkind = \"token_bucket\"\n" + std::string(key) + " = 0.0005\n");
        EXPECT_THAT(e.message, HasSubstr(std::string(key) + ": must be in [0.001, 1000], got 5e-04"));
        EXPECT_EQ(e.where.line, 3u) << key;
        EXPECT_EQ(e.where.column, key.size() + 4) << key;
    }
}

TEST(ClientConfigErrors, BadDurations) {
    auto e = single_error("[client.policy]\noverall_timeout = \"5\"\n");
    EXPECT_EQ(e.where.line, 2u);
    EXPECT_EQ(e.where.column, 19u);
    EXPECT_THAT(e.message, HasSubstr("[client.policy]: overall_timeout: bad duration \"5\""));
    EXPECT_THAT(single_error("[client.policy]\nper_attempt_timeout = \"0ms\"\n").message,
                HasSubstr("per_attempt_timeout: must be in [1ms, 1h], got \"0ms\""));
    EXPECT_THAT(single_error("[client.policy]\nmax_retry_after = 10\n").message,
                HasSubstr("max_retry_after: expected a duration such as \"250ms\", got an integer"));
    EXPECT_THAT(single_error("[client.policy.backoff]\nbase = \"2s\"\ncap = \"1s\"\n").message,
                HasSubstr("cap (1s) is below base (2s)"));
}

TEST(ClientConfigErrors, BadChoices) {
    EXPECT_THAT(single_error("[client]\npreset = \"sloppy\"\n").message,
                HasSubstr("preset: unknown value \"sloppy\"; allowed: good, naive, no_jitter, no_budget, no_keys, "
                          "ignores_retry_after, ignores_deadline"));
    EXPECT_THAT(single_error("[client]\ndriver = \"python\"\n").message,
                HasSubstr("driver: unknown value \"python\"; allowed: builtin, command"));
    EXPECT_THAT(single_error("[client]\nprotocol = \"http2\"\n").message,
                HasSubstr("protocol: unknown value \"http2\"; allowed: http1, h2"));
    EXPECT_THAT(single_error("[client.policy.backoff]\njitter = \"lots\"\n").message,
                HasSubstr("allowed: none, full, equal, decorrelated, proportional"));
    EXPECT_THAT(single_error("[[client.request]]\nmethod = \"FETCH\"\n").message, HasSubstr("method: unknown value"));
    EXPECT_THAT(single_error("[[client.request]]\npath = \"payments\"\n").message, HasSubstr("must start with '/'"));
    EXPECT_THAT(single_error("[[client.request]]\nheaders = { \"Bad Name\" = \"x\" }\n").message,
                HasSubstr("not a valid header name"));
}

TEST(ClientConfigErrors, BudgetKinds) {
    EXPECT_THAT(single_error("[client.policy.budget]\nmax_tokens = 5\n").message, HasSubstr("[client.policy.budget]: missing required key \"kind\""));
    EXPECT_THAT(single_error("[client.policy.budget]\nkind = \"ratio\"\nmax_tokens = 5\n").message,
                HasSubstr("max_tokens: only applies to kind = \"token_bucket\""));
    EXPECT_THAT(single_error("[client.policy.budget]\nkind = \"token_bucket\"\nttl = \"1s\"\n").message,
                HasSubstr("ttl: only applies to kind = \"ratio\""));
    EXPECT_THAT(single_error("[client.policy.circuit_breaker]\nwindow_size = 5\nminimum_calls = 6\n").message,
                HasSubstr("minimum_calls (6) exceeds window_size (5)"));
}

TEST(ClientConfigErrors, WorkloadShapes) {
    EXPECT_THAT(single_error("[client]\noperations = 3\nrate = 10\nduration = \"1s\"\n").message,
                HasSubstr("either operations (per client) or rate and duration"));
    EXPECT_THAT(single_error("[client]\nrate = 10\n").message, HasSubstr("rate needs duration"));
    EXPECT_THAT(single_error("[client]\nduration = \"1s\"\n").message, HasSubstr("duration needs rate"));
    EXPECT_THAT(single_error("[client]\nrate = 0\nduration = \"1s\"\n").message, HasSubstr("rate: must be in (0, 100000], got 0"));
}

TEST(ClientConfigErrors, KeysOfTheOtherDriver) {
    auto e = single_error("[client]\nmode = \"once\"\n");
    EXPECT_THAT(e.message, HasSubstr("[client]: mode: only applies to driver = \"command\""));
    EXPECT_THAT(single_error("[client]\ndriver = \"command\"\ncommand = [\"true\"]\nclients = 3\n").message,
                HasSubstr("clients: only applies to driver = \"builtin\""));
    EXPECT_THAT(single_error("[client]\ndriver = \"command\"\ncommand = [\"true\"]\nprotocol = \"h2\"\n").message,
                HasSubstr("protocol: only applies to driver = \"builtin\""));
    EXPECT_THAT(single_error("[client]\ndriver = \"command\"\ncommand = [\"true\"]\noperations = 3\n").message,
                HasSubstr("operations: only applies to mode = \"per_operation\""));
    EXPECT_THAT(single_error("[client]\ndriver = \"command\"\n").message, HasSubstr("needs command = ["));
    EXPECT_THAT(single_error("[client]\ndriver = \"command\"\ncommand = []\n").message, HasSubstr("needs a program"));
}

TEST(ClientConfigErrors, BadDeclaredSettings) {
    const std::string command = "[client]\ndriver = \"command\"\ncommand = [\"x\"]\n";
    EXPECT_EQ(single_error(command + "deadline = \"0ms\"\n").to_string(),
              "scenario.toml:4:12: [client]: deadline: must be in [1ms, 24h], got \"0ms\"");
    EXPECT_EQ(single_error(command + "deadline = 2\n").to_string(),
              "scenario.toml:4:12: [client]: deadline: expected a duration such as \"250ms\", got an integer");
    EXPECT_EQ(single_error(command + "max_attempts = 0\n").to_string(),
              "scenario.toml:4:16: [client]: max_attempts: must be in [1, 1000000], got 0");
    EXPECT_EQ(single_error(command + "backoff = \"exponential\"\n").to_string(),
              "scenario.toml:4:11: [client]: backoff: expected a table, got a string");
    EXPECT_EQ(single_error(command + "backoff = { base = \"1ms\", cap = \"1s\" }\n").to_string(),
              "scenario.toml:4:11: [client.backoff]: missing required key \"jitter\"");
    EXPECT_EQ(single_error(command + "backoff = { base = \"1ms\", cap = \"1s\", jitter = \"additive\" }\n").to_string(),
              "scenario.toml:4:48: [client.backoff]: jitter: unknown value \"additive\"; allowed: none, full, equal, "
              "decorrelated, proportional");
    EXPECT_EQ(single_error(command + "backoff = { base = \"2s\", cap = \"1s\", jitter = \"full\" }\n").to_string(),
              "scenario.toml:4:32: [client.backoff]: cap: cap (1s) is below base (2s)");
    EXPECT_EQ(single_error(command + "backoff = { base = \"1ms\", cap = \"1s\", jitter = \"full\", multiplier = 0.5 }\n")
                  .to_string(),
              "scenario.toml:4:69: [client.backoff]: multiplier: must be in [1, 100], got 0.5");
    EXPECT_EQ(single_error(command + "backoff = { base = \"1ms\", cap = \"1s\", jitter = \"full\", jiter = 1 }\n")
                  .to_string(),
              "scenario.toml:4:56: [client.backoff]: unknown key \"jiter\"; allowed: base, cap, jitter, "
              "jitter_fraction, multiplier");
    // They describe a command; the builtin client states its own in [client.policy].
    EXPECT_EQ(single_error("[client]\nmax_attempts = 3\n").to_string(),
              "scenario.toml:2:16: [client]: max_attempts: only applies to driver = \"command\"");
}

TEST(ClientConfigErrors, EveryErrorIsReported) {
    auto p = parse("[client]\nclients = 0\nthreads = 9\nbogus = 1\n[client.policy]\nmax_attempts = 0\n");
    EXPECT_EQ(p.client, nullptr);
    ASSERT_EQ(p.errors.size(), 4u);
    for (const auto& e : p.errors) {
        EXPECT_EQ(e.where.file, file);
        EXPECT_GT(e.where.line, 0u);
        EXPECT_GT(e.where.column, 0u);
    }
}

}  // namespace
}  // namespace faultline::drivers
