#include "faultline/server/service.hpp"

#include <gtest/gtest.h>

namespace faultline::server {
namespace {

service_request req(std::string method, std::string target, std::string body = {}, std::string op = "op",
                    std::uint32_t attempt = 1) {
    service_request r;
    r.method = std::move(method);
    r.target = std::move(target);
    r.body = std::move(body);
    r.operation = std::move(op);
    r.attempt = attempt;
    return r;
}

std::string header(const service_response& r, std::string_view name) {
    for (const auto& h : r.headers) {
        if (h.name == name) return h.value;
    }
    return {};
}

class default_service : public ::testing::Test {
protected:
    ledger effects_;
    service service_{service_config{}, effects_};
};

TEST_F(default_service, payments_create_a_charge_per_commit) {
    auto r = service_.handle(req("POST", "/payments", R"({"amount":250})", "op-1", 1));
    EXPECT_EQ(r.status, 201);
    EXPECT_EQ(r.body, R"({"id":"ch_1","amount":250})");
    EXPECT_EQ(header(r, "Content-Type"), "application/json");
    EXPECT_EQ(r.effect, record::effect_kind::committed);

    // The same operation committed again is a second charge: the naive service has no dedup.
    r = service_.handle(req("POST", "/payments", R"({"amount":250})", "op-1", 2));
    EXPECT_EQ(r.body, R"({"id":"ch_2","amount":250})");
    EXPECT_EQ(service_.charge_count(), 2U);
    ASSERT_EQ(effects_.double_effects().size(), 1U);
    const auto entries = effects_.snapshot();
    EXPECT_EQ(entries[1].operation, "op-1");
    EXPECT_EQ(entries[1].attempt, 2U);
    EXPECT_EQ(entries[1].effect, "charge ch_2 amount=250");
    EXPECT_EQ(entries[1].semantics, effect_semantics::non_idempotent);
}

TEST_F(default_service, payment_without_body_is_amount_zero_and_bad_bodies_commit_nothing) {
    EXPECT_EQ(service_.handle(req("POST", "/payments")).body, R"({"id":"ch_1","amount":0})");
    for (const auto* body : {"nope", "[1]", R"({"amount":"5"})", R"({"amount":1.5})"}) {
        const auto r = service_.handle(req("POST", "/payments", body));
        EXPECT_EQ(r.status, 400) << body;
        EXPECT_EQ(header(r, "Content-Type"), "application/problem+json");
        EXPECT_EQ(r.effect, record::effect_kind::none);
    }
    EXPECT_EQ(effects_.size(), 1U);
}

TEST_F(default_service, payment_lookup) {
    service_.handle(req("POST", "/payments", R"({"amount":7})"));
    auto r = service_.handle(req("GET", "/payments/ch_1"));
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, R"({"id":"ch_1","amount":7})");
    for (const auto* t : {"/payments/ch_2", "/payments/ch_0", "/payments/xx_1", "/payments/ch_1x"}) {
        EXPECT_EQ(service_.handle(req("GET", t)).status, 404) << t;
    }
    EXPECT_EQ(effects_.size(), 1U);
}

TEST_F(default_service, kv_is_idempotent_but_every_write_is_in_the_ledger) {
    auto r = service_.handle(req("PUT", "/kv/colour", "blue", "put-1", 1));
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, R"({"key":"colour","value":"blue"})");
    EXPECT_EQ(r.effect, record::effect_kind::committed);
    service_.handle(req("PUT", "/kv/colour", "blue", "put-1", 2));
    EXPECT_EQ(service_.kv_get("colour"), "blue");

    r = service_.handle(req("GET", "/kv/colour"));
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "blue");
    EXPECT_EQ(r.effect, record::effect_kind::none);

    EXPECT_EQ(service_.handle(req("DELETE", "/kv/colour")).status, 204);
    r = service_.handle(req("DELETE", "/kv/colour"));
    EXPECT_EQ(r.status, 404);
    EXPECT_EQ(r.effect, record::effect_kind::committed);
    EXPECT_EQ(service_.handle(req("GET", "/kv/colour")).status, 404);
    EXPECT_FALSE(service_.kv_get("colour"));

    EXPECT_EQ(effects_.size(), 4U);
    EXPECT_TRUE(effects_.double_effects().empty());
    EXPECT_EQ(effects_.commits_for("put-1", commit_scope::all), 2U);
}

TEST_F(default_service, counters_increment) {
    auto r = service_.handle(req("POST", "/counters/hits/increment"));
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, R"({"name":"hits","value":1})");
    r = service_.handle(req("POST", "/counters/hits/increment?by=ignored"));
    EXPECT_EQ(r.body, R"({"name":"hits","value":2})");
    EXPECT_EQ(service_.counter_value("hits"), 2);
    EXPECT_EQ(service_.handle(req("GET", "/counters/hits")).body, R"({"name":"hits","value":2})");
    EXPECT_EQ(service_.handle(req("GET", "/counters/other")).body, R"({"name":"other","value":0})");
    EXPECT_EQ(effects_.snapshot()[1].effect, "counter hits=2");
}

TEST_F(default_service, wrong_method_is_405_with_allow) {
    const auto r = service_.handle(req("DELETE", "/payments"));
    EXPECT_EQ(r.status, 405);
    EXPECT_EQ(header(r, "Allow"), "POST");
    EXPECT_EQ(header(service_.handle(req("POST", "/kv/a")), "Allow"), "GET, PUT, DELETE");
    EXPECT_EQ(effects_.size(), 0U);
}

// WireMock's answer to an unmatched request: 404, naming the nearest declared endpoint, so a client
// that sends to a route nobody declared fails at once instead of "succeeding" without an effect.
TEST_F(default_service, an_unmatched_request_is_404_naming_the_nearest_endpoint) {
    const auto r = service_.handle(req("POST", "/charge"));
    EXPECT_EQ(r.status, 404);
    EXPECT_EQ(header(r, "Content-Type"), "application/problem+json");
    EXPECT_EQ(r.effect, record::effect_kind::unmatched);
    ASSERT_TRUE(r.unmatched);
    EXPECT_EQ(r.unmatched->nearest, "POST /payments");
    EXPECT_TRUE(r.unmatched->first);
    EXPECT_NE(r.body.find("nearest declared endpoint: POST /payments"), std::string::npos) << r.body;
    EXPECT_EQ(effects_.size(), 0U);

    // The same route again is not new; another one is.
    EXPECT_FALSE(service_.handle(req("POST", "/charge?x=1")).unmatched->first);
    EXPECT_EQ(service_.handle(req("GET", "/kv")).unmatched->nearest, "GET /kv/{key}");
    EXPECT_EQ(service_.handle(req("POST", "/counters/c/incr")).unmatched->nearest, "POST /counters/{name}/increment");
    service_.reset();
    EXPECT_TRUE(service_.handle(req("POST", "/charge")).unmatched->first);
}

// A read has no effect to judge, and health probes read "/": it is answered as before, but told.
TEST_F(default_service, an_unmatched_read_is_answered_ok_and_still_told) {
    const auto r = service_.handle(req("GET", "/"));
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "ok");
    EXPECT_EQ(r.effect, record::effect_kind::unmatched);
    ASSERT_TRUE(r.unmatched);
    EXPECT_TRUE(r.unmatched->first);
}

TEST_F(default_service, a_matched_request_is_not_unmatched) {
    EXPECT_FALSE(service_.handle(req("POST", "/payments")).unmatched);
    EXPECT_FALSE(service_.handle(req("DELETE", "/payments")).unmatched);  // 405: the path is declared
}

TEST(service, a_declared_catch_all_answers_ok_without_effect) {
    ledger effects;
    service_config config;
    config.catch_all = catch_all_effect::none;
    service s{config, effects};
    const auto r = s.handle(req("POST", "/anything/else"));
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "ok");
    EXPECT_EQ(r.effect, record::effect_kind::none);
    EXPECT_FALSE(r.unmatched);
    EXPECT_EQ(s.handle(req("GET", "/")).body, "ok");
    EXPECT_EQ(effects.size(), 0U);
}

// Near-miss: a declared path under another method is nearer than any other path.
TEST(service, the_nearest_endpoint_prefers_the_same_path_under_another_method) {
    ledger effects;
    service_config config;
    config.builtin_endpoints = false;
    config.endpoints.push_back(endpoint_config{"POST", "/orders/{id}/pay", effect_semantics::non_idempotent, 200, "", ""});
    config.endpoints.push_back(endpoint_config{"GET", "/orders/{id}", effect_semantics::read, 200, "", ""});
    service s{config, effects};
    EXPECT_EQ(s.handle(req("PUT", "/orders/17/pay")).unmatched->nearest, "POST /orders/{id}/pay");
    EXPECT_EQ(s.handle(req("GET", "/order/17")).unmatched->nearest, "GET /orders/{id}");
    EXPECT_EQ(s.handle(req("POST", "/orders/17/pya")).unmatched->nearest, "POST /orders/{id}/pay");

    service none_declared{service_config{false, {}, catch_all_effect::not_found}, effects};
    const auto r = none_declared.handle(req("PUT", "/"));
    EXPECT_EQ(r.status, 404);
    EXPECT_EQ(r.unmatched->nearest, "");
}

TEST_F(default_service, classify_reports_semantics) {
    EXPECT_EQ(service_.classify("POST", "/payments"), effect_semantics::non_idempotent);
    EXPECT_EQ(service_.classify("PUT", "/kv/a"), effect_semantics::idempotent_write);
    EXPECT_EQ(service_.classify("DELETE", "/kv/a"), effect_semantics::idempotent_write);
    EXPECT_EQ(service_.classify("GET", "/kv/a"), effect_semantics::read);
    EXPECT_EQ(service_.classify("POST", "/counters/x/increment"), effect_semantics::non_idempotent);
    EXPECT_EQ(service_.classify("POST", "/x"), effect_semantics::none);
}

TEST_F(default_service, reset_forgets_the_domain) {
    service_.handle(req("POST", "/payments"));
    service_.handle(req("PUT", "/kv/a", "1"));
    service_.handle(req("POST", "/counters/c/increment"));
    service_.reset();
    EXPECT_EQ(service_.charge_count(), 0U);
    EXPECT_FALSE(service_.kv_get("a"));
    EXPECT_EQ(service_.counter_value("c"), 0);
    EXPECT_EQ(service_.handle(req("POST", "/payments")).body, R"({"id":"ch_1","amount":0})");
}

TEST(service, configured_endpoints_match_first) {
    ledger effects;
    service_config config;
    config.endpoints.push_back(
        endpoint_config{"POST", "/orders/{id}/pay", effect_semantics::non_idempotent, 201, R"({"paid":{n}})", "application/json"});
    config.endpoints.push_back(endpoint_config{"*", "/payments", effect_semantics::read, 200, "shadowed", "text/plain"});
    config.endpoints.push_back(endpoint_config{"GET", "/static/*", effect_semantics::none, 200, "file", ""});
    service s{config, effects};

    auto r = s.handle(req("POST", "/orders/17/pay", "", "o17"));
    EXPECT_EQ(r.status, 201);
    EXPECT_EQ(r.body, R"({"paid":1})");
    EXPECT_EQ(r.effect, record::effect_kind::committed);
    EXPECT_EQ(s.handle(req("POST", "/orders/18/pay", "", "o18")).body, R"({"paid":2})");
    EXPECT_EQ(effects.snapshot()[0].effect, "POST /orders/{id}/pay #1");

    r = s.handle(req("POST", "/payments"));
    EXPECT_EQ(r.body, "shadowed");
    EXPECT_EQ(r.effect, record::effect_kind::none);
    EXPECT_EQ(s.classify("POST", "/payments"), effect_semantics::read);

    r = s.handle(req("GET", "/static/a/b.css"));
    EXPECT_EQ(r.body, "file");
    EXPECT_TRUE(r.headers.empty());
    EXPECT_EQ(s.handle(req("GET", "/orders/17/pay")).effect, record::effect_kind::unmatched);  // method differs
    EXPECT_EQ(s.handle(req("POST", "/orders//pay")).status, 404);  // an empty segment is no capture
    EXPECT_EQ(effects.size(), 2U);
}

TEST(service, empty_service_and_catch_all_by_method) {
    ledger effects;
    service_config config;
    config.builtin_endpoints = false;
    config.catch_all = catch_all_effect::by_method;
    service s{config, effects};
    EXPECT_EQ(s.handle(req("POST", "/payments")).body, "ok");
    EXPECT_EQ(s.handle(req("POST", "/payments")).effect, record::effect_kind::committed);
    EXPECT_EQ(s.handle(req("PUT", "/x")).effect, record::effect_kind::committed);
    EXPECT_EQ(s.handle(req("GET", "/x")).effect, record::effect_kind::none);
    EXPECT_EQ(s.classify("PATCH", "/x"), effect_semantics::non_idempotent);
    EXPECT_EQ(s.classify("DELETE", "/x"), effect_semantics::idempotent_write);
    ASSERT_EQ(effects.size(), 3U);
    EXPECT_EQ(effects.snapshot()[1].effect, "catch-all POST #2");
    EXPECT_EQ(effects.double_effects().size(), 1U);
}

}  // namespace
}  // namespace faultline::server
