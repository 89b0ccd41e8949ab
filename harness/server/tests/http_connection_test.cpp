// What the one HTTP/1.1 connection does the same in every mode: `serve` (the service model behind
// it) and `proxy` (a real upstream behind it, here the built-in server). Each test runs in both
// modes and judges by what was committed — by the model, or by the upstream.
#include "server_fixture.hpp"
#include "test_client.hpp"

#include "faultline/server/proxy.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

namespace faultline::server::testing {
namespace {

using namespace std::chrono_literals;

enum class mode { serve, proxy };

// The server under test in either mode, from one rules file.
class front {
public:
    front(mode m, std::string_view rules) {
        if (m == mode::serve) {
            served_.emplace(rules);
            return;
        }
        upstream_.emplace("");
        auto parsed = parse_serve_config(rules, "proxy.toml");
        if (!parsed.ok()) throw std::invalid_argument{"bad test rules: " + parsed.errors.front().to_string()};
        context_ = std::make_unique<server_context>(parsed.config->model, std::move(parsed.config->rules), 7);
        proxy_options options;
        options.upstream_port = upstream_->port();
        proxy_ = std::make_unique<proxy>(*context_, options);
        if (const auto ec = proxy_->start()) throw std::runtime_error{"proxy did not start: " + ec.message()};
    }

    std::uint16_t port() const { return served_ ? served_->port() : proxy_->port(); }

    // Every attempt of the front, once it has stopped.
    std::vector<record::journal_record> journal() {
        if (served_) return served_->journal();
        proxy_->stop();
        return context_->records.snapshot();
    }
    // What the service behind committed: the model's ledger, or the upstream's.
    std::size_t effects_behind() {
        if (served_) return served_->context().effects.size();
        return upstream_->context().effects.size();
    }
    // Requests that reached the service behind (the upstream's attempts; the model's are the front's).
    std::size_t requests_behind() {
        if (served_) return served_->journal().size();
        return upstream_->journal().size();
    }

private:
    std::optional<test_server> served_;
    std::optional<test_server> upstream_;
    std::unique_ptr<server_context> context_;
    std::unique_ptr<proxy> proxy_;
};

class http_connection : public ::testing::TestWithParam<mode> {};

INSTANTIATE_TEST_SUITE_P(modes, http_connection, ::testing::Values(mode::serve, mode::proxy),
                         [](const ::testing::TestParamInfo<mode>& p) { return p.param == mode::serve ? "serve" : "proxy"; });

// Issue 27, item 2: a client that sends `Expect: 100-continue` waits for the interim 100 before it
// sends the body. It gets one, without Connection: close, and then the final reply.
TEST_P(http_connection, expect_100_continue_gets_an_interim_100_then_the_final_reply) {
    front f{GetParam(), ""};
    connection client{f.port()};
    ASSERT_TRUE(client.connected());
    const std::string body = R"({"amount":5})";
    const std::string head = "POST /payments HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nContent-Length: " +
                             std::to_string(body.size()) + "\r\n\r\n";
    const auto interim = client.round_trip(head, 3s);
    ASSERT_TRUE(interim.parsed()) << "no 100 Continue within 3 s";
    EXPECT_EQ(interim.parsed()->result_int(), 100);
    EXPECT_EQ(interim.bytes.find("Connection: close"), std::string::npos) << interim.bytes;
    const auto final_reply = client.round_trip(body, 3s);
    ASSERT_TRUE(final_reply.parsed());
    EXPECT_EQ(final_reply.parsed()->result_int(), 201);
    EXPECT_EQ(f.effects_behind(), 1U);
    const auto journal = f.journal();
    ASSERT_EQ(journal.size(), 1U);
    EXPECT_EQ(journal[0].status, 201);
    EXPECT_EQ(journal[0].effect, record::effect_kind::committed);
}

struct framing_case {
    const char* name;
    std::string request;
    int status;
};

// Issue 27, item 3: RFC 9112 framing. Whatever `serve` refuses the proxy refuses, before anything
// is committed or forwarded, and the refused request is not an attempt.
TEST_P(http_connection, ambiguous_framing_is_refused_before_anything_reaches_the_service) {
    const std::string post = "POST /payments HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    const std::string amount = R"({"amount":1})";
    const std::vector<framing_case> cases{
        {"gzip alone", post + "Transfer-Encoding: gzip\r\n\r\n" + amount, 400},
        {"gzip, chunked", post + "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501},
        {"chunked, identity + Content-Length",
         post + "Transfer-Encoding: chunked, identity\r\nContent-Length: 12\r\n\r\n" + amount, 400},
        {"xchunked + Content-Length", post + "Transfer-Encoding: xchunked\r\nContent-Length: 12\r\n\r\n" + amount, 400},
        {"chunked, chunked", post + "Transfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n", 400},
        {"chunked twice", post + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400},
        {"Content-Length + chunked",
         post + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\nc\r\n" + amount + "\r\n0\r\n\r\n", 400},
        {"two Hosts", "POST /payments HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\nContent-Length: 12\r\n\r\n" + amount,
         400},
        {"no Host", "POST /payments HTTP/1.1\r\nContent-Length: 12\r\n\r\n" + amount, 400},
    };
    front f{GetParam(), ""};
    for (const framing_case& c : cases) {
        const auto reply = exchange(f.port(), c.request, 5s);
        const auto res = reply.parsed();
        ASSERT_TRUE(res) << c.name << ": no reply: " << reply.bytes;
        EXPECT_EQ(static_cast<int>(res->result_int()), c.status) << c.name;
    }
    EXPECT_EQ(f.effects_behind(), 0U);
    EXPECT_EQ(f.requests_behind(), 0U);
    EXPECT_TRUE(f.journal().empty());
}

// HTTP/1.0 has no Host requirement; plain chunked is fine.
TEST_P(http_connection, well_framed_requests_still_go_through) {
    front f{GetParam(), ""};
    const auto old = exchange(f.port(), "GET /x HTTP/1.0\r\n\r\n");
    ASSERT_TRUE(old.parsed());
    EXPECT_EQ(old.parsed()->result_int(), 200);
    const auto chunked = exchange(f.port(), "POST /payments HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: Chunked\r\n"
                                            "Connection: close\r\n\r\nc\r\n{\"amount\":2}\r\n0\r\n\r\n");
    ASSERT_TRUE(chunked.parsed());
    EXPECT_EQ(chunked.parsed()->result_int(), 201);
    EXPECT_EQ(f.effects_behind(), 1U);
    EXPECT_EQ(f.journal().size(), 2U);
}

}  // namespace
}  // namespace faultline::server::testing
