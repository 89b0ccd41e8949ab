// A relay tier on real sockets: a server whose service forwards through the retry client to a
// failing backend; the backend sees the relay's attempts, and the relay answers with the backend's
// last reply (or 502 when none came).
#include "faultline/server/relay.hpp"

#include "server_fixture.hpp"
#include "test_client.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <algorithm>
#include <chrono>
#include <string>

namespace faultline::server {
namespace {

using namespace std::chrono_literals;
using testing::exchange;
using testing::make_request;
using testing::test_server;

constexpr std::string_view always_503 = R"(
[server]
identity_header = "Faultline-Op"

[[fault]]
name = "down"
kind = "status"
status = 503
)";

constexpr std::string_view relay_server = R"(
[server]
identity_header = "Faultline-Op"
)";

retry::retry_policy three_quick_attempts() {
    retry::retry_policy p;
    p.max_attempts = 3;
    p.backoff = retry::backoff_policy{}.with_base(1ms).with_cap(2ms).with_jitter(retry::jitter_kind::none);
    p.per_attempt_timeout = 2s;
    p.overall_timeout = 5s;
    return p;
}

// A relay tier in front of `downstream_port`: the relay object and the server that plays it.
struct relay_tier {
    relay_tier(std::uint16_t downstream_port, retry::retry_policy policy)
        : forwarder{relay_options{.port = downstream_port, .policy = std::move(policy), .seed = 3}}, server{relay_server} {
        server.context().next_tier = &forwarder;
    }
    relay forwarder;
    test_server server;  // declared after the relay: stopped and destroyed before it
};

TEST(Relay, RetriesTheFailingBackendAndPassesItsLastReplyBack) {
    test_server backend{always_503};
    relay_tier tier{backend.port(), three_quick_attempts()};

    const auto reply = exchange(tier.server.port(), make_request("GET", "/kv/a", {}, {{"Faultline-Op", "op-1"}}));
    ASSERT_TRUE(reply.parsed());
    EXPECT_EQ(reply.parsed()->result_int(), 503);

    const auto at_relay = tier.server.journal();
    ASSERT_EQ(at_relay.size(), 1u);
    EXPECT_EQ(at_relay[0].operation, "op-1");
    const auto at_backend = backend.journal();
    ASSERT_EQ(at_backend.size(), 3u);
    // The relay names the client's operation, so the backend groups its attempts under it.
    for (const record::journal_record& r : at_backend) EXPECT_EQ(r.operation, "op-1");
    EXPECT_EQ(at_backend.back().attempt, 3u);
}

TEST(Relay, ChainedRelaysMultiplyTheAttempts) {
    test_server backend{always_503};
    relay_tier inner{backend.port(), three_quick_attempts()};
    relay_tier outer{inner.server.port(), three_quick_attempts()};

    const auto reply = exchange(outer.server.port(), make_request("PUT", "/kv/a", "v", {{"Faultline-Op", "op-7"}}));
    ASSERT_TRUE(reply.parsed());
    EXPECT_EQ(reply.parsed()->result_int(), 503);
    EXPECT_EQ(outer.server.journal().size(), 1u);
    EXPECT_EQ(inner.server.journal().size(), 3u);
    EXPECT_EQ(backend.journal().size(), 9u);
}

TEST(Relay, AnswersBadGatewayWhenTheNextTierIsNotThere) {
    std::uint16_t closed = 0;
    {
        boost::asio::io_context io;
        boost::asio::ip::tcp::acceptor acceptor{io, {boost::asio::ip::make_address("127.0.0.1"), 0}};
        closed = acceptor.local_endpoint().port();
    }
    relay_tier tier{closed, three_quick_attempts()};

    const auto reply = exchange(tier.server.port(), make_request("GET", "/kv/a"));
    ASSERT_TRUE(reply.parsed());
    EXPECT_EQ(reply.parsed()->result_int(), 502);
    EXPECT_NE(reply.parsed()->body().find("after 3 attempt(s)"), std::string::npos) << reply.parsed()->body();
}

}  // namespace
}  // namespace faultline::server
