// A consumer's test suite: the retrying HTTP client (here faultline's own retry_http, standing in for
// the client a project ships) against a fault server that loses replies, held to faultline's checks.
#include <faultline/retry/http_client.hpp>
#include <faultline/testing/fault_server.hpp>
#include <faultline/testing/matchers.hpp>
#include <faultline/testing/scenario.hpp>

#include <boost/asio/io_context.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace {

using namespace std::chrono_literals;
namespace ft = faultline::testing;
namespace retry = faultline::retry;

constexpr const char* lose_first_reply = R"(
[[fault]]
kind = "lost_response"
then = "reset"
[fault.when]
attempts = [1]
)";

// One payment through a client that keys its POSTs and retries what it did not hear back about.
bool charge(const ft::fault_server& server, const std::string& key) {
    boost::asio::io_context io;
    const auto policy = retry::retry_policy{}
                            .with_max_attempts(3)
                            .with_backoff(retry::backoff_policy{}.with_base(5ms).with_cap(50ms))
                            .with_per_attempt_timeout(1s)
                            .with_overall_timeout(3s);
    retry::http_client client{io.get_executor(), std::string{ft::fault_server::host}, server.port(), policy};
    retry::http_request request;
    request.method = boost::beast::http::verb::post;
    request.target = "/payments";
    request.headers.set("Idempotency-Key", key);
    request.body = R"({"amount":100})";
    bool succeeded = false;
    client.async_request(request, [&](const retry::http_result& result) { succeeded = result.succeeded(); });
    io.run_for(5s);  // bounded by the policy's 3 s deadline
    return succeeded;
}

class Payments : public ft::fault_server_test {};

TEST_F(Payments, AServiceThatIgnoresKeysChargesTwiceWhenAReplyIsLost) {
    server.add_rules(lose_first_reply);
    EXPECT_TRUE(charge(server, "order-1"));
    const auto run = server.record();
    EXPECT_THAT(run, ft::AttemptsAtMost(3));
    EXPECT_THAT(run, ::testing::Not(ft::NoDoubleEffects()));  // the default service commits every attempt
}

// A fixture whose server deduplicates Idempotency-Keys, as the real service does, and loses replies.
struct KeyedPayments : ft::fault_server_test {
    KeyedPayments() : fault_server_test(std::string{"[server]\nidempotency = \"keys\"\n"} + lose_first_reply) {}
};

TEST_F(KeyedPayments, ALostReplyIsRetriedWithoutChargingTwice) {
    EXPECT_TRUE(charge(server, "order-1"));
    EXPECT_TRUE(charge(server, "order-2"));
    const auto run = server.record();
    EXPECT_THAT(run, ft::NoDoubleEffects());
    EXPECT_THAT(run, ft::AttemptsAtMost(3));
    // Each charge lost its first reply and was sent again: two attempts each on the wire.
    EXPECT_THAT(run, ft::Requested("POST", "/payments", ft::Times(4)));
}

TEST(Scenario, RunsFromATestInOneCall) {
    EXPECT_THAT(ft::run_scenario_file(SCENARIO_FILE), ft::PassesAllChecks());
}

}  // namespace
