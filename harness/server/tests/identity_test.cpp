#include "faultline/server/identity.hpp"

#include "faultline/core/random.hpp"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace faultline::server {
namespace {


TEST(identity, idempotency_key_wins_over_everything) {
    const identity_config config{"X-Request-Id", "order_id"};
    identity_inputs in{"POST", "/payments", R"({"order_id":"o-1"})", R"("k-1")", "req-1"};
    const auto id = identify(config, in);
    EXPECT_EQ(id.value, "k-1");
    EXPECT_EQ(id.source, record::identity_source::idempotency_key);
    EXPECT_EQ(id.idempotency_key, "k-1");
    EXPECT_EQ(id.hash, hash_bytes("k-1"));
}

TEST(identity, named_header_then_body_field_then_hash) {
    const identity_config config{"X-Request-Id", "order_id"};
    identity_inputs in{"POST", "/payments", R"({"order_id":"o-1","amount":5})", std::nullopt, "req-1"};
    auto id = identify(config, in);
    EXPECT_EQ(id.value, "req-1");
    EXPECT_EQ(id.source, record::identity_source::header);
    EXPECT_EQ(id.idempotency_key, "");

    in.named_header.reset();
    id = identify(config, in);
    EXPECT_EQ(id.value, "o-1");
    EXPECT_EQ(id.source, record::identity_source::body_field);

    in.body = R"({"amount":5})";
    id = identify(config, in);
    EXPECT_EQ(id.source, record::identity_source::request_hash);
    EXPECT_EQ(id.value, to_hex(request_hash("POST", "/payments", R"({"amount":5})")));
    EXPECT_EQ(id.value.size(), 16U);
    EXPECT_EQ(id.hash, hash_bytes(id.value));
}

TEST(identity, empty_key_counts_as_absent) {
    identity_inputs in{"POST", "/payments", "", R"("")", std::nullopt};
    const auto id = identify({}, in);
    EXPECT_EQ(id.source, record::identity_source::request_hash);
    EXPECT_EQ(id.idempotency_key, "");
}

TEST(identity, numeric_body_field_and_unusable_bodies) {
    const identity_config config{"", "order_id"};
    identity_inputs in{"POST", "/p", R"({"order_id":42})", std::nullopt, std::nullopt};
    EXPECT_EQ(identify(config, in).value, "42");
    EXPECT_EQ(identify(config, in).source, record::identity_source::body_field);
    for (const auto* body : {R"({"order_id":true})", "not json", R"(["order_id"])", R"({"other":1})"}) {
        in.body = body;
        EXPECT_EQ(identify(config, in).source, record::identity_source::request_hash) << body;
    }
}

TEST(identity, header_ignored_when_not_configured) {
    identity_inputs in{"GET", "/kv/a", "", std::nullopt, "req-1"};
    EXPECT_EQ(identify({}, in).source, record::identity_source::request_hash);
}

TEST(identity, request_hash_is_stable_and_separates_parts) {
    EXPECT_EQ(request_hash("POST", "/a", "x"), request_hash("POST", "/a", "x"));
    EXPECT_NE(request_hash("POST", "/a", "x"), request_hash("POST", "/ax", ""));
    EXPECT_NE(request_hash("POST", "/a", "x"), request_hash("PUT", "/a", "x"));
    EXPECT_EQ(to_hex(0x0123456789abcdefULL), "0123456789abcdef");
    EXPECT_EQ(to_hex(0), "0000000000000000");
}

TEST(identity, reads_a_request_view) {
    const faults::header_list keyed{{"Idempotency-Key", R"("key-9")"}};
    const faults::header_list_source keyed_headers{keyed};
    auto id = identify({}, faults::request_view{"POST", "/payments", keyed_headers, R"({"amount":1})"});
    EXPECT_EQ(id.value, "key-9");
    EXPECT_EQ(id.source, record::identity_source::idempotency_key);

    const faults::header_list plain{{"X-Op", "op-3"}};
    const faults::header_list_source plain_headers{plain};
    const faults::request_view request{"POST", "/payments", plain_headers, R"({"amount":1})"};
    id = identify(identity_config{"x-op", ""}, request);  // header names match case-insensitively
    EXPECT_EQ(id.value, "op-3");
    EXPECT_EQ(id.source, record::identity_source::header);
    id = identify({}, request);
    EXPECT_EQ(id.value, to_hex(request_hash("POST", "/payments", R"({"amount":1})")));
}

record::symbol op(std::string value) { return identify({}, identity_inputs{"", "", "", value, std::nullopt}).value; }

TEST(attempt_counter, counts_per_operation_from_one) {
    attempt_counter c;
    EXPECT_EQ(c.next(op("a")), 1U);
    EXPECT_EQ(c.next(op("a")), 2U);
    EXPECT_EQ(c.next(op("b")), 1U);
    EXPECT_EQ(c.next(op("a")), 3U);
    EXPECT_EQ(c.seen(op("a")), 3U);
    EXPECT_EQ(c.seen("b"), 1U);
    EXPECT_EQ(c.seen("z"), 0U);
    EXPECT_EQ(c.operations(), 2U);
    c.reset();
    EXPECT_EQ(c.operations(), 0U);
    EXPECT_EQ(c.next(op("a")), 1U);
}

TEST(attempt_counter, concurrent_attempts_get_distinct_numbers) {
    attempt_counter c;
    constexpr int threads = 4;
    constexpr int per_thread = 1000;
    std::vector<std::vector<std::uint32_t>> seen(threads);
    std::vector<std::thread> pool;
    const auto id = op("shared");
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            for (int i = 0; i < per_thread; ++i) seen[static_cast<std::size_t>(t)].push_back(c.next(id));
        });
    }
    for (auto& th : pool) th.join();
    std::vector<bool> got(threads * per_thread + 1, false);
    for (const auto& v : seen) {
        for (const auto n : v) {
            ASSERT_GE(n, 1U);
            ASSERT_LE(n, static_cast<std::uint32_t>(threads * per_thread));
            EXPECT_FALSE(got[n]) << n;
            got[n] = true;
        }
    }
    EXPECT_EQ(c.seen(id), static_cast<std::uint32_t>(threads * per_thread));
}

}  // namespace
}  // namespace faultline::server
