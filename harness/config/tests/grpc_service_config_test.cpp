#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "faultline/config/grpc_service_config.hpp"

namespace faultline::config {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

record::grpc_service_config parsed(std::string_view json) {
    auto result = parse_grpc_service_config(json, "sc.json");
    if (auto* errors = std::get_if<config_errors>(&result)) {
        ADD_FAILURE() << errors->front().to_string();
        return {};
    }
    return std::get<record::grpc_service_config>(std::move(result));
}

std::vector<std::string> errors_of(std::string_view json) {
    auto result = parse_grpc_service_config(json, "sc.json");
    std::vector<std::string> out;
    if (auto* errors = std::get_if<config_errors>(&result)) {
        for (const config_error& e : *errors) out.push_back(e.to_string());
    }
    return out;
}

std::string with_retry(std::string_view policy) {
    return R"({"methodConfig":[{"name":[{"service":"pkg.Svc"}],"retryPolicy":)" + std::string(policy) + "}]}";
}

constexpr std::string_view good_retry =
    R"({"maxAttempts":4,"initialBackoff":"0.1s","maxBackoff":"1s","backoffMultiplier":2,"retryableStatusCodes":["UNAVAILABLE"]})";

TEST(grpc_service_config_parser, reads_the_a6_example) {
    const auto c = parsed(R"({"methodConfig":[{"name":[{"service":"pkg.Svc","method":"Charge"}],"timeout":"1.5s",
        "retryPolicy":{"maxAttempts":4,"initialBackoff":"0.1s","maxBackoff":"1s","backoffMultiplier":2,
                       "retryableStatusCodes":["UNAVAILABLE", "resource_exhausted", 10]}}],
        "retryThrottling":{"maxTokens":10,"tokenRatio":0.1}})");
    ASSERT_EQ(c.methods.size(), 1u);
    const auto& m = c.methods[0];
    ASSERT_EQ(m.names.size(), 1u);
    EXPECT_EQ(m.names[0].service, "pkg.Svc");
    EXPECT_EQ(m.names[0].method, "Charge");
    EXPECT_EQ(m.timeout, 1500ms);
    ASSERT_TRUE(m.retry);
    EXPECT_FALSE(m.hedging);
    EXPECT_EQ(m.retry->max_attempts, 4u);
    EXPECT_EQ(m.retry->initial_backoff, 100ms);
    EXPECT_EQ(m.retry->max_backoff, 1s);
    EXPECT_EQ(m.retry->backoff_multiplier, 2.0);
    EXPECT_THAT(m.retry->retryable_status_codes,
                ElementsAre(grpc_status::unavailable, grpc_status::resource_exhausted, grpc_status::aborted));
    ASSERT_TRUE(c.throttling);
    EXPECT_EQ(c.throttling->max_tokens, 10.0);
    EXPECT_EQ(c.throttling->token_ratio, 0.1);
    EXPECT_EQ(c.find("/pkg.Svc/Charge"), &c.methods[0]);
}

TEST(grpc_service_config_parser, max_attempts_above_five_is_treated_as_five) {
    const auto c = parsed(with_retry(
        R"({"maxAttempts":9,"initialBackoff":"0.000000001s","maxBackoff":"2.25s","backoffMultiplier":1.5,"retryableStatusCodes":[14]})"));
    ASSERT_TRUE(c.methods.at(0).retry);
    EXPECT_EQ(c.methods[0].retry->max_attempts, 5u);
    EXPECT_EQ(c.methods[0].retry->initial_backoff, 1ns);
    EXPECT_EQ(c.methods[0].retry->max_backoff, 2250ms);
}

TEST(grpc_service_config_parser, reads_a_hedging_policy_and_keeps_three_decimals_of_the_ratio) {
    const auto c = parsed(R"({"methodConfig":[{"name":[{}],"waitForReady":true,
        "hedgingPolicy":{"maxAttempts":3,"hedgingDelay":"0.5s","nonFatalStatusCodes":["UNAVAILABLE"]}}],
        "retryThrottling":{"maxTokens":1000,"tokenRatio":0.12345},"loadBalancingConfig":[]})");
    ASSERT_TRUE(c.methods.at(0).hedging);
    EXPECT_EQ(c.methods[0].hedging->max_attempts, 3u);
    EXPECT_EQ(c.methods[0].hedging->hedging_delay, 500ms);
    EXPECT_THAT(c.methods[0].hedging->non_fatal_status_codes, ElementsAre(grpc_status::unavailable));
    EXPECT_THAT(c.methods[0].continue_codes(), ElementsAre(grpc_status::unavailable));
    EXPECT_EQ(c.throttling->token_ratio, 0.123);
    // The default name {} applies to every method.
    EXPECT_EQ(c.find("/any.Svc/Any"), &c.methods[0]);
}

TEST(grpc_service_config_parser, an_empty_config_has_no_methods) {
    const auto c = parsed("{}");
    EXPECT_TRUE(c.methods.empty());
    EXPECT_FALSE(c.throttling);
}

TEST(grpc_service_config_parser, each_bad_retry_value_names_its_path_and_what_is_allowed) {
    EXPECT_THAT(errors_of(with_retry(
                    R"({"maxAttempts":1,"initialBackoff":"0s","maxBackoff":"1","backoffMultiplier":0,"retryableStatusCodes":[]})")),
                ElementsAre("sc.json: methodConfig[0].retryPolicy.maxAttempts: must be an integer > 1 (values above 5 are treated as 5), got 1",
                            "sc.json: methodConfig[0].retryPolicy.initialBackoff: must be > 0, got \"0s\"",
                            "sc.json: methodConfig[0].retryPolicy.maxBackoff: expected a duration in gRPC's form, seconds with up to 9 decimals and \"s\" (\"0.1s\", \"2s\"), got \"1\"",
                            "sc.json: methodConfig[0].retryPolicy.backoffMultiplier: must be > 0, got 0",
                            "sc.json: methodConfig[0].retryPolicy.retryableStatusCodes: must name at least one status code"));
}

TEST(grpc_service_config_parser, missing_retry_keys_are_each_reported) {
    EXPECT_THAT(errors_of(with_retry(R"({"maxAttempts":2})")),
                ElementsAre("sc.json: methodConfig[0].retryPolicy.initialBackoff: missing (required)",
                            "sc.json: methodConfig[0].retryPolicy.maxBackoff: missing (required)",
                            "sc.json: methodConfig[0].retryPolicy.backoffMultiplier: missing (required)",
                            "sc.json: methodConfig[0].retryPolicy.retryableStatusCodes: missing (required)"));
}

TEST(grpc_service_config_parser, bad_status_codes) {
    EXPECT_THAT(errors_of(with_retry(
                    R"({"maxAttempts":2,"initialBackoff":"1s","maxBackoff":"1s","backoffMultiplier":2,"retryableStatusCodes":["UNAVAILBLE",17,"OK",true]})")),
                ElementsAre(HasSubstr("retryableStatusCodes[0]: unknown status code \"UNAVAILBLE\"; expected a gRPC status code name"),
                            HasSubstr("retryableStatusCodes[1]: status code 17 out of range"),
                            HasSubstr("retryableStatusCodes[2]: OK is not a failure"),
                            HasSubstr("retryableStatusCodes[3]: expected a gRPC status code name (UNAVAILABLE, …) or number 1 to 16, got a boolean")));
}

TEST(grpc_service_config_parser, bad_durations) {
    for (const std::string_view bad : {"\"1.s\"", "\"-1s\"", "\".5s\"", "\"1ms\"", "\"1.0000000001s\"", "1"}) {
        const auto errors = errors_of(
            R"({"methodConfig":[{"name":[{"service":"s"}],"timeout":)" + std::string(bad) + "}]}");
        ASSERT_EQ(errors.size(), 1u) << bad;
        EXPECT_THAT(errors[0], HasSubstr("methodConfig[0].timeout: expected a duration in gRPC's form")) << bad;
    }
}

TEST(grpc_service_config_parser, retry_and_hedging_are_mutually_exclusive) {
    EXPECT_THAT(errors_of(R"({"methodConfig":[{"name":[{"service":"s"}],"retryPolicy":)" + std::string(good_retry) +
                          R"(,"hedgingPolicy":{"maxAttempts":2}}]})"),
                ElementsAre("sc.json: methodConfig[0].hedgingPolicy: a method has a retryPolicy or a hedgingPolicy, not both"));
}

TEST(grpc_service_config_parser, bad_throttling) {
    EXPECT_THAT(errors_of(R"({"retryThrottling":{"maxTokens":1001,"tokenRatio":0.0004}})"),
                ElementsAre("sc.json: retryThrottling.maxTokens: must be in (0, 1000], got 1001",
                            "sc.json: retryThrottling.tokenRatio: must be > 0 with three decimals kept (at least 0.001), got 4E-4"));
    EXPECT_THAT(errors_of(R"({"retryThrottling":{"maxTokens":0}})"),
                ElementsAre("sc.json: retryThrottling.maxTokens: must be in (0, 1000], got 0",
                            "sc.json: retryThrottling.tokenRatio: missing (required)"));
}

TEST(grpc_service_config_parser, names_and_unknown_keys) {
    EXPECT_THAT(errors_of(R"({"methodConfig":[{"name":[{"method":"Charge"}],"retry":{}}],"retryThrotling":{}})"),
                ElementsAre("sc.json: retryThrotling: unknown key; allowed: healthCheckConfig, loadBalancingConfig, loadBalancingPolicy, methodConfig, retryThrottling",
                            "sc.json: methodConfig[0].retry: unknown key; allowed: hedgingPolicy, maxRequestMessageBytes, maxResponseMessageBytes, name, retryPolicy, timeout, waitForReady",
                            "sc.json: methodConfig[0].name[0].method: a method needs its service (an empty service names every service)"));
    EXPECT_THAT(errors_of(R"({"methodConfig":[{"name":[{"service":"s"}]},{"name":[{"service":"s"}]}]})"),
                ElementsAre("sc.json: methodConfig[1].name: names {\"service\": \"s\", \"method\": \"\"} as methodConfig[0] does; each name once"));
    EXPECT_THAT(errors_of(R"({"methodConfig":[{"timeout":"1s"}]})"),
                ElementsAre("sc.json: methodConfig[0].name: missing (required)"));
}

TEST(grpc_service_config_parser, a_syntax_error_has_its_line_and_column) {
    const auto errors = errors_of("{\n  \"methodConfig\": [,]\n}");
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_THAT(errors[0], HasSubstr("sc.json:2:20: JSON syntax error: "));
    EXPECT_THAT(errors_of("[]"), ElementsAre("sc.json: a gRPC service config is a JSON object, got an array"));
}

TEST(grpc_service_config_parser, load_reads_a_file_and_names_an_unreadable_one) {
    const std::string path = ::testing::TempDir() + "grpc_service_config_test.json";
    std::ofstream(path) << R"({"retryThrottling":{"maxTokens":4,"tokenRatio":1}})";
    auto loaded = load_grpc_service_config(path);
    ASSERT_TRUE(std::holds_alternative<record::grpc_service_config>(loaded));
    EXPECT_EQ(std::get<record::grpc_service_config>(loaded).throttling->max_tokens, 4.0);

    auto missing = load_grpc_service_config(path + ".missing");
    ASSERT_TRUE(std::holds_alternative<config_errors>(missing));
    EXPECT_EQ(std::get<config_errors>(missing).at(0).to_string(),
              path + ".missing: cannot read the gRPC service config");
}

}  // namespace
}  // namespace faultline::config
