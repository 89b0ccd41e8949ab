#include "faultline/server/idempotency.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <thread>
#include <vector>

namespace faultline::server {
namespace {

const auto post = effect_semantics::non_idempotent;
const std::uint64_t fp = request_fingerprint("POST", "/payments", R"({"amount":5})");

std::string header(const service_response& r, std::string_view name) {
    for (const auto& h : r.headers) {
        if (h.name == name) return h.value;
    }
    return {};
}

idempotency_layer keys(bool required = false) { return idempotency_layer{{idempotency_mode::keys, required}}; }

TEST(idempotency, off_mode_always_proceeds) {
    idempotency_layer layer{{idempotency_mode::off, true}};
    EXPECT_EQ(layer.begin("k", post, fp).decision, idempotency_decision::proceed);
    layer.complete("k", service_response{201, {}, "x", record::effect_kind::committed});
    EXPECT_EQ(layer.begin("k", post, fp).decision, idempotency_decision::proceed);
    EXPECT_EQ(layer.begin("", post, fp).decision, idempotency_decision::proceed);
    EXPECT_EQ(layer.stored(), 0U);
}

TEST(idempotency, replays_the_stored_response_byte_for_byte) {
    auto layer = keys();
    EXPECT_EQ(layer.begin("k", post, fp).decision, idempotency_decision::proceed);
    const service_response stored{201, {{"Content-Type", "application/json"}, {"X-Charge", "ch_1"}},
                                  R"({"id":"ch_1","amount":5})", record::effect_kind::committed};
    layer.complete("k", stored);
    EXPECT_EQ(layer.stored(), 1U);

    for (int i = 0; i < 2; ++i) {
        const auto b = layer.begin("k", post, fp);
        EXPECT_EQ(b.decision, idempotency_decision::replay);
        EXPECT_EQ(b.response.status, stored.status);
        EXPECT_EQ(b.response.headers, stored.headers);
        EXPECT_EQ(b.response.body, stored.body);
        EXPECT_EQ(b.response.effect, record::effect_kind::replayed);
    }
}

// Stored responses are packed into one string; whatever bytes they hold come back as they were.
TEST(idempotency, replays_empty_parts_and_any_bytes) {
    auto layer = keys();
    const service_response bare{204, {}, "", record::effect_kind::committed};
    const service_response odd{200, {{"X-Empty", ""}, {"", "v"}}, std::string{"a\0b\xff", 4}, record::effect_kind::committed};
    layer.begin("bare", post, fp);
    layer.complete("bare", bare);
    layer.begin("odd", post, fp);
    layer.complete("odd", odd);
    for (const auto& [key, stored] : {std::pair{"bare", bare}, std::pair{"odd", odd}}) {
        const auto b = layer.begin(key, post, fp);
        EXPECT_EQ(b.decision, idempotency_decision::replay) << key;
        EXPECT_EQ(b.response.status, stored.status) << key;
        EXPECT_EQ(b.response.headers, stored.headers) << key;
        EXPECT_EQ(b.response.body, stored.body) << key;
    }
}

TEST(idempotency, errors_are_replayed_too) {
    auto layer = keys();
    layer.begin("k", post, fp);
    layer.complete("k", problem(400, "Bad Request", "the body is not a JSON object"));
    const auto b = layer.begin("k", post, fp);
    EXPECT_EQ(b.decision, idempotency_decision::replay);
    EXPECT_EQ(b.response.status, 400);
    EXPECT_EQ(b.response.body, problem(400, "Bad Request", "the body is not a JSON object").body);
}

TEST(idempotency, duplicate_in_flight_gets_409_with_marker) {
    auto layer = keys();
    EXPECT_EQ(layer.begin("k", post, fp).decision, idempotency_decision::proceed);
    const auto b = layer.begin("k", post, fp);
    EXPECT_EQ(b.decision, idempotency_decision::in_flight);
    EXPECT_EQ(b.response.status, 409);
    EXPECT_EQ(b.response.effect, record::effect_kind::conflict);
    EXPECT_EQ(header(b.response, "Faultline-Idempotency"), "in-flight");
    EXPECT_EQ(header(b.response, "Content-Type"), "application/problem+json");
    EXPECT_NE(b.response.body.find(R"("status":409)"), std::string::npos);
    EXPECT_EQ(layer.in_flight(), 1U);
}

TEST(idempotency, same_key_different_payload_gets_422) {
    auto layer = keys();
    layer.begin("k", post, fp);
    const auto other = request_fingerprint("POST", "/payments", R"({"amount":6})");
    auto b = layer.begin("k", post, other);
    EXPECT_EQ(b.decision, idempotency_decision::payload_mismatch);
    EXPECT_EQ(b.response.status, 422);
    EXPECT_EQ(b.response.effect, record::effect_kind::conflict);
    layer.complete("k", service_response{201, {}, "x", record::effect_kind::committed});
    b = layer.begin("k", post, other);
    EXPECT_EQ(b.decision, idempotency_decision::payload_mismatch);
    EXPECT_EQ(layer.begin("k", post, fp).decision, idempotency_decision::replay);
}

TEST(idempotency, required_key_missing_gets_400_only_for_non_idempotent) {
    auto layer = keys(true);
    const auto b = layer.begin("", post, fp);
    EXPECT_EQ(b.decision, idempotency_decision::missing_key);
    EXPECT_EQ(b.response.status, 400);
    EXPECT_EQ(b.response.effect, record::effect_kind::rejected);
    EXPECT_EQ(layer.begin("", effect_semantics::idempotent_write, fp).decision, idempotency_decision::proceed);
    EXPECT_EQ(layer.begin("", effect_semantics::read, fp).decision, idempotency_decision::proceed);
    EXPECT_EQ(keys(false).begin("", post, fp).decision, idempotency_decision::proceed);
}

TEST(idempotency, reads_ignore_keys) {
    auto layer = keys();
    EXPECT_EQ(layer.begin("k", effect_semantics::read, fp).decision, idempotency_decision::proceed);
    EXPECT_EQ(layer.begin("k", effect_semantics::read, fp).decision, idempotency_decision::proceed);
    EXPECT_EQ(layer.in_flight(), 0U);
}

TEST(idempotency, abandon_lets_the_retry_proceed) {
    auto layer = keys();
    layer.begin("k", post, fp);
    layer.abandon("k");
    EXPECT_EQ(layer.in_flight(), 0U);
    EXPECT_EQ(layer.begin("k", post, fp).decision, idempotency_decision::proceed);
    // A late abandon never erases a stored result.
    layer.complete("k", service_response{201, {}, "x", record::effect_kind::committed});
    layer.abandon("k");
    EXPECT_EQ(layer.begin("k", post, fp).decision, idempotency_decision::replay);
}

TEST(idempotency, lost_response_is_replayed_on_retry) {
    ledger effects;
    service svc{service_config{}, effects};
    auto layer = keys();
    service_request r{"POST", "/payments", R"({"amount":5})", "k", 1, 1, 1, 0};
    ASSERT_EQ(layer.begin("k", post, fp).decision, idempotency_decision::proceed);
    const auto first = svc.handle(r);
    layer.complete("k", first);
    // The reply to attempt 1 is dropped on the wire; attempt 2 arrives.
    const auto b = layer.begin("k", post, fp);
    EXPECT_EQ(b.decision, idempotency_decision::replay);
    EXPECT_EQ(b.response.body, first.body);
    EXPECT_EQ(svc.charge_count(), 1U);
    EXPECT_TRUE(effects.double_effects().empty());
}

TEST(idempotency, reset_forgets_keys) {
    auto layer = keys();
    layer.begin("a", post, fp);
    layer.begin("b", post, fp);
    layer.complete("b", service_response{});
    layer.reset();
    EXPECT_EQ(layer.stored(), 0U);
    EXPECT_EQ(layer.in_flight(), 0U);
    EXPECT_EQ(layer.begin("b", post, fp).decision, idempotency_decision::proceed);
}

TEST(idempotency, concurrent_attempts_on_one_key_commit_once) {
    constexpr int threads = 4;
    constexpr int rounds = 200;
    for (int round = 0; round < rounds; ++round) {
        ledger effects;
        service svc{service_config{}, effects};
        auto layer = keys();
        std::atomic<int> proceeded{0};
        std::atomic<int> in_flight{0};
        std::atomic<int> replayed{0};
        std::atomic<int> other{0};
        std::barrier start{threads};
        std::vector<std::thread> pool;
        for (int t = 0; t < threads; ++t) {
            pool.emplace_back([&, t] {
                start.arrive_and_wait();
                const auto b = layer.begin("key", post, fp);
                switch (b.decision) {
                    case idempotency_decision::proceed: {
                        ++proceeded;
                        service_request r{"POST", "/payments", R"({"amount":5})", "key",
                                          static_cast<std::uint32_t>(t + 1), 0, 0, 0};
                        layer.complete("key", svc.handle(r));
                        break;
                    }
                    case idempotency_decision::in_flight: ++in_flight; break;
                    case idempotency_decision::replay:
                        EXPECT_EQ(b.response.body, R"({"id":"ch_1","amount":5})");
                        ++replayed;
                        break;
                    default: ++other; break;
                }
            });
        }
        for (auto& th : pool) th.join();
        ASSERT_EQ(proceeded.load(), 1) << "round " << round;
        ASSERT_EQ(in_flight.load() + replayed.load(), threads - 1);
        ASSERT_EQ(other.load(), 0);
        ASSERT_EQ(svc.charge_count(), 1U);
        ASSERT_EQ(effects.size(), 1U);
    }
}

}  // namespace
}  // namespace faultline::server
