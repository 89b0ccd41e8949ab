// TLS on the one HTTP connection: the same attempts, faults and journal as plain TCP, over a real
// TLS client on 127.0.0.1 that trusts the run's own authority; and what only TLS has — a handshake
// that fails (a client rejecting the certificate, plain HTTP on the TLS port) journaled as such, a
// complete exchange and a fault's close ending with close_notify, a reset with an RST.
#include "server_fixture.hpp"
#include "test_client.hpp"

#include "faultline/server/proxy.hpp"
#include "faultline/server/proxy_set.hpp"
#include "faultline/tls/certificates.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace faultline::server::testing {
namespace {

using namespace std::chrono_literals;
namespace asio = boost::asio;
namespace ssl = asio::ssl;

struct run_authority {
    tls::certificate_authority ca = tls::certificate_authority::generate("tls_test CA", std::chrono::system_clock::now());
    tls::key_and_certificate served = ca.issue(tls::request_for({"localhost", "127.0.0.1"}, std::chrono::system_clock::now()));
};

server_options tls_options(const run_authority& authority) {
    server_options options;
    options.tls = authority.served;
    return options;
}

struct tls_reply {
    boost::system::error_code handshake_error;
    boost::system::error_code read_error;  // what ended reading: eof (close_notify), stream_truncated, …
    std::string bytes;
};

// One request over TLS, read until the server ends the stream, bounded by `timeout`. The client
// verifies the chain against `trusted_pem` and the name 127.0.0.1 (with no `trusted_pem` it accepts
// any certificate, as `curl -k` does).
tls_reply tls_exchange(std::uint16_t port, const std::string& trusted_pem, const std::string& request,
                       std::chrono::milliseconds timeout = 5s) {
    asio::io_context io;
    ssl::context context{ssl::context::tls_client};
    ssl::stream<asio::ip::tcp::socket> stream{io, context};
    if (!trusted_pem.empty()) {
        context.add_certificate_authority(asio::buffer(trusted_pem));
        stream.set_verify_mode(ssl::verify_peer);
        stream.set_verify_callback(ssl::host_name_verification{"127.0.0.1"});
    }
    tls_reply reply;
    auto buffer = std::make_shared<std::array<char, 4096>>();
    std::function<void()> read_more = [&] {
        stream.async_read_some(asio::buffer(*buffer), [&](boost::system::error_code ec, std::size_t n) {
            reply.bytes.append(buffer->data(), n);
            if (ec) return void(reply.read_error = ec);
            read_more();
        });
    };
    // After a failed handshake: the server closes only once it has journaled the failure.
    std::function<void()> await_close = [&] {
        stream.next_layer().async_read_some(asio::buffer(*buffer), [&](boost::system::error_code ec, std::size_t) {
            if (!ec) await_close();
        });
    };
    stream.next_layer().async_connect({asio::ip::make_address("127.0.0.1"), port}, [&](boost::system::error_code ec) {
        if (ec) return void(reply.handshake_error = ec);
        stream.async_handshake(ssl::stream_base::client, [&](boost::system::error_code hs) {
            if (hs) {
                reply.handshake_error = hs;
                return await_close();
            }
            asio::async_write(stream, asio::buffer(request), [&](boost::system::error_code wec, std::size_t) {
                if (wec) return void(reply.read_error = wec);
                read_more();
            });
        });
    });
    io.run_for(timeout);
    return reply;
}

TEST(tls, serves_the_model_over_tls_journals_the_attempt_and_ends_with_close_notify) {
    const run_authority authority;
    test_server s{"", 7, tls_options(authority)};
    EXPECT_EQ(s.engine().url().rfind("https://127.0.0.1:", 0), 0U) << s.engine().url();
    const auto reply = tls_exchange(s.port(), authority.ca.certificate_pem(), make_request("GET", "/hello"));
    ASSERT_FALSE(reply.handshake_error) << reply.handshake_error.message();
    // A clean TLS end (close_notify) reads as eof; a cut one as stream_truncated.
    EXPECT_EQ(reply.read_error, asio::error::eof) << reply.read_error.message();
    const auto res = parse_response(reply.bytes);
    ASSERT_TRUE(res) << reply.bytes;
    EXPECT_EQ(res->result_int(), 200);
    EXPECT_EQ(res->body(), "ok");
    const auto journal = s.journal();
    ASSERT_EQ(journal.size(), 1U);
    EXPECT_EQ(journal[0].outcome, record::wire_outcome::responded);
    EXPECT_EQ(journal[0].target, "/hello");
}

// A fault's close is a clean TLS close (close_notify, then FIN), as a server that closes on purpose
// sends; a reset is an RST under TLS: the client sees the reply lost either way, after the commit.
TEST(tls, a_lost_response_commits_then_closes_or_resets_under_tls_with_no_reply) {
    const run_authority authority;
    for (const std::string then : {"close", "reset"}) {
        SCOPED_TRACE(then);
        test_server s{"[[fault]]\nname = \"lost\"\nkind = \"lost_response\"\nthen = \"" + then +
                          "\"\n[fault.match]\npath = \"/payments\"\n",
                      7, tls_options(authority)};
        const auto reply = tls_exchange(s.port(), authority.ca.certificate_pem(),
                                        make_request("POST", "/payments", R"({"amount":5})"));
        ASSERT_FALSE(reply.handshake_error) << reply.handshake_error.message();
        EXPECT_EQ(reply.read_error, then == "close" ? boost::system::error_code{asio::error::eof}
                                                    : boost::system::error_code{asio::error::connection_reset})
            << reply.read_error.message();
        EXPECT_TRUE(reply.bytes.empty());
        const auto journal = s.journal();
        ASSERT_EQ(journal.size(), 1U);
        EXPECT_EQ(journal[0].effect, record::effect_kind::committed);
        EXPECT_EQ(journal[0].outcome, then == "close" ? record::wire_outcome::closed : record::wire_outcome::reset);
        EXPECT_EQ(journal[0].fault, "lost_response");
    }
}

// tls_truncate: the body is framed by the connection's end and cut, and the connection ends with no
// close_notify: only the TLS layer can tell the client, as stream_truncated. On a plain listener there
// is no close_notify to leave out, so the head promises the whole body (a truncate) and says so.
TEST(tls, tls_truncate_cuts_a_body_framed_by_the_close_and_leaves_out_close_notify) {
    const run_authority authority;
    const std::string rules = "[[fault]]\nname = \"cut\"\nkind = \"tls_truncate\"\nbody_bytes = 1\n";
    test_server s{rules, 7, tls_options(authority)};
    const std::string payment = make_request("POST", "/payments", R"({"amount":5})");
    const auto reply = tls_exchange(s.port(), authority.ca.certificate_pem(), payment);
    ASSERT_FALSE(reply.handshake_error) << reply.handshake_error.message();
    EXPECT_EQ(reply.read_error, ssl::error::stream_truncated) << reply.read_error.message();
    EXPECT_EQ(reply.bytes.find("Content-Length"), std::string::npos) << reply.bytes;
    EXPECT_NE(reply.bytes.find("Connection: close\r\n"), std::string::npos) << reply.bytes;
    EXPECT_EQ(reply.bytes.substr(reply.bytes.size() - 5), "\r\n\r\n{") << reply.bytes;  // 1 byte of the body
    const auto journal = s.journal();
    ASSERT_EQ(journal.size(), 1U);
    EXPECT_EQ(journal[0].outcome, record::wire_outcome::truncated);
    EXPECT_EQ(journal[0].fault, "tls_truncate");
    EXPECT_EQ(journal[0].effect, record::effect_kind::committed);
    EXPECT_TRUE(s.context().records.events().empty());

    test_server plain{rules};
    const auto cut = exchange(plain.port(), payment);
    EXPECT_NE(cut.bytes.find("Content-Length: "), std::string::npos) << cut.bytes;
    const auto events = plain.context().records.events();
    ASSERT_GE(events.size(), 1U);
    EXPECT_EQ(events[0].kind, record::server_event_kind::fault_not_mapped);
    EXPECT_NE(events[0].detail.find("no close_notify to leave out"), std::string::npos) << events[0].detail;
    EXPECT_EQ(plain.journal().at(0).outcome, record::wire_outcome::truncated);
}

TEST(tls, a_client_that_rejects_the_certificate_is_journaled_as_a_failed_handshake_not_an_attempt) {
    const run_authority authority;
    test_server s{"", 7, tls_options(authority)};
    const auto stranger = tls::certificate_authority::generate("another CA", std::chrono::system_clock::now());
    const auto reply = tls_exchange(s.port(), stranger.certificate_pem(), make_request("GET", "/hello"));
    EXPECT_TRUE(reply.handshake_error);
    EXPECT_TRUE(s.journal().empty());
    const auto events = s.context().records.events();
    ASSERT_EQ(events.size(), 1U);
    EXPECT_EQ(events[0].kind, record::server_event_kind::tls_handshake_failed);
    EXPECT_NE(events[0].detail.find("unknown ca"), std::string::npos) << events[0].detail;
    EXPECT_EQ(s.engine().counters().tls_handshake_failures, 1U);
}

server_options with_certificate_faults(const run_authority& authority) {
    server_options options = tls_options(authority);
    options.tls_faults =
        tls::issue_bad_certificates(authority.ca, {"localhost", "127.0.0.1"}, std::chrono::system_clock::now());
    return options;
}

std::string tls_rule(const std::string& how) {
    return "[[fault]]\nname = \"bad-tls\"\nkind = \"tls\"\nhow = \"" + how + "\"\n";
}

// The `tls` fault kind: a certificate the client must refuse. A verifying client refuses each one,
// and the refusal is journaled under the rule with OpenSSL's reason; nothing reaches the service.
TEST(tls, a_verifying_client_refuses_every_bad_certificate_and_the_refusal_names_the_rule) {
    const run_authority authority;
    const std::pair<const char*, const char*> cases[] = {
        {"expired_certificate", "certificate expired"},
        {"wrong_name", "alert"},  // Asio's name check fails the verification: OpenSSL alerts "internal error"
        {"untrusted_issuer", "unknown ca"},
    };
    for (const auto& [how, alert] : cases) {
        SCOPED_TRACE(how);
        test_server s{tls_rule(how), 7, with_certificate_faults(authority)};
        const auto reply = tls_exchange(s.port(), authority.ca.certificate_pem(), make_request("GET", "/hello"));
        ASSERT_TRUE(reply.handshake_error);
        EXPECT_NE(reply.handshake_error.message().find("certificate verify failed"), std::string::npos)
            << reply.handshake_error.message();
        EXPECT_TRUE(s.journal().empty());
        const auto events = s.context().records.events();
        ASSERT_EQ(events.size(), 1U);
        EXPECT_EQ(events[0].kind, record::server_event_kind::certificate_refused);
        EXPECT_EQ(events[0].rule, "bad-tls");
        EXPECT_EQ(events[0].detail.rfind(std::string{how} + ": ", 0), 0U) << events[0].detail;
        EXPECT_NE(events[0].detail.find(alert), std::string::npos) << events[0].detail;
    }
}

// A client that accepts any certificate sends its request over the bad one: the attempt is journaled
// as the tls rule's, the evidence rejects_bad_certificates fails on.
TEST(tls, a_client_that_accepts_a_bad_certificate_sends_its_request_journaled_under_the_rule) {
    const run_authority authority;
    test_server s{tls_rule("expired_certificate"), 7, with_certificate_faults(authority)};
    const auto reply = tls_exchange(s.port(), "", make_request("GET", "/hello"));
    ASSERT_FALSE(reply.handshake_error) << reply.handshake_error.message();
    const auto res = parse_response(reply.bytes);
    ASSERT_TRUE(res) << reply.bytes;
    EXPECT_EQ(res->result_int(), 200);
    const auto journal = s.journal();
    ASSERT_EQ(journal.size(), 1U);
    EXPECT_EQ(journal[0].fault, "tls");
    EXPECT_EQ(journal[0].rule, "bad-tls");
}

// Some clients check the certificate only after the handshake (curl's name check, GnuTLS) and refuse
// it by closing before their first request: that is a refusal too.
// Over HTTP/1.1 and over h2 (ALPN), as curl negotiates it.
TEST(tls, a_client_that_closes_after_the_handshake_without_a_request_refused_the_certificate) {
    const run_authority authority;
    for (const bool h2 : {false, true}) {
        SCOPED_TRACE(h2 ? "h2" : "http/1.1");
        test_server s{tls_rule("wrong_name"), 7, with_certificate_faults(authority)};
        {
            asio::io_context io;
            ssl::context context{ssl::context::tls_client};
            ssl::stream<asio::ip::tcp::socket> stream{io, context};
            static constexpr unsigned char alpn_h2[] = {2, 'h', '2'};
            if (h2) SSL_set_alpn_protos(stream.native_handle(), alpn_h2, sizeof alpn_h2);
            stream.next_layer().connect({asio::ip::make_address("127.0.0.1"), s.port()});
            stream.handshake(ssl::stream_base::client);
            // Its FIN, then read until the server closes, which it does after journaling.
            stream.next_layer().shutdown(asio::ip::tcp::socket::shutdown_send);
            boost::system::error_code ec;
            std::array<char, 256> sink{};
            while (!ec) stream.next_layer().read_some(asio::buffer(sink), ec);
        }
        EXPECT_TRUE(s.journal().empty());
        const auto events = s.context().records.events();
        ASSERT_EQ(events.size(), 1U);
        EXPECT_EQ(events[0].kind, record::server_event_kind::certificate_refused);
        EXPECT_EQ(events[0].rule, "bad-tls");
        EXPECT_EQ(events[0].detail, "wrong_name: the connection ended with no request over it");
    }
}

// A run stops its server once its client has exited; a bad-certificate connection that has carried
// no request by then never will: a refusal, though the client's close may not have been read yet.
TEST(tls, a_bad_certificate_connection_without_a_request_at_the_stop_is_a_refusal) {
    const run_authority authority;
    test_server s{tls_rule("expired_certificate"), 7, with_certificate_faults(authority)};
    asio::io_context io;
    ssl::context context{ssl::context::tls_client};
    ssl::stream<asio::ip::tcp::socket> stream{io, context};
    stream.next_layer().connect({asio::ip::make_address("127.0.0.1"), s.port()});
    stream.handshake(ssl::stream_base::client);
    s.finish();  // the connection is still open, with no request
    const auto events = s.context().records.events();
    ASSERT_EQ(events.size(), 1U);
    EXPECT_EQ(events[0].kind, record::server_event_kind::certificate_refused);
    EXPECT_EQ(events[0].rule, "bad-tls");
    EXPECT_EQ(events[0].detail, "expired_certificate: the connection ended with no request over it");
}

// abort_handshake: the hello is read, then RST; stall_handshake: never answered. No request byte
// left the client either way, and the journal says what the server did.
TEST(tls, an_aborted_or_stalled_handshake_fails_before_any_request_and_is_journaled) {
    const run_authority authority;
    for (const std::string how : {"abort_handshake", "stall_handshake"}) {
        SCOPED_TRACE(how);
        test_server s{"[server]\nheader_timeout = \"300ms\"\n" + tls_rule(how), 7, tls_options(authority)};
        const auto reply = tls_exchange(s.port(), authority.ca.certificate_pem(), make_request("GET", "/hello"), 3s);
        EXPECT_TRUE(reply.handshake_error);
        EXPECT_TRUE(s.journal().empty());
        const auto events = s.context().records.events();
        ASSERT_GE(events.size(), 1U);
        EXPECT_EQ(events[0].kind, record::server_event_kind::tls_handshake_failed);
        EXPECT_EQ(events[0].rule, "bad-tls");
        EXPECT_EQ(events[0].detail.rfind(how + ": ", 0), 0U) << events[0].detail;
        if (how == "abort_handshake") {
            EXPECT_EQ(reply.handshake_error, asio::error::connection_reset) << reply.handshake_error.message();
        } else {
            // Closed at header_timeout, never answered.
            ASSERT_EQ(events.size(), 2U);
            EXPECT_EQ(events[1].kind, record::server_event_kind::header_timeout);
        }
    }
}

// A tls rule on a plain listener cannot act: the connection is served, and the journal says why.
TEST(tls, a_tls_rule_on_a_plain_listener_is_journaled_as_not_applied) {
    test_server s{tls_rule("abort_handshake")};
    const auto reply = exchange(s.port(), make_request("GET", "/hello"));
    const auto res = reply.parsed();
    ASSERT_TRUE(res);
    EXPECT_EQ(res->result_int(), 200);
    const auto events = s.context().records.events();
    ASSERT_GE(events.size(), 1U);  // then unmatched_route: the default service has no GET /hello
    EXPECT_EQ(events[0].kind, record::server_event_kind::fault_not_mapped);
    EXPECT_EQ(events[0].rule, "bad-tls");
    EXPECT_NE(events[0].detail.find("plain TCP listener"), std::string::npos) << events[0].detail;
}

// A proxy set's [[proxy]] table (or a proxy created through its API) with `tls = true` serves the
// set's identity (faultline proxy --tls); without one the table is refused, saying so.
TEST(tls, a_proxy_sets_table_with_tls_serves_the_sets_identity_and_needs_one) {
    const run_authority authority;
    test_server upstream{""};
    const auto table = toml::parse("name = \"api\"\ntls = true\nupstream = \"127.0.0.1:" +
                                   std::to_string(upstream.port()) + "\"\n");

    proxy_set_options plain_options;
    plain_options.control_token = std::string{};
    proxy_set plain{plain_options};
    ASSERT_FALSE(plain.start());
    const create_result refused = plain.create(table, "api.toml");
    ASSERT_FALSE(refused.ok());
    ASSERT_EQ(refused.errors.size(), 1U);
    EXPECT_NE(refused.errors[0].find("tls: this faultline proxy has no TLS identity: start it with --tls"),
              std::string::npos)
        << refused.errors[0];

    proxy_set_options options = plain_options;
    options.tls = authority.served;
    proxy_set secure{options};
    ASSERT_FALSE(secure.start());
    EXPECT_EQ(secure.control_url().rfind("https://", 0), 0U) << secure.control_url();
    const create_result created = secure.create(table, "api.toml");
    ASSERT_TRUE(created.ok()) << (created.errors.empty() ? "" : created.errors[0]);
    EXPECT_EQ(created.proxy->url().rfind("https://127.0.0.1:", 0), 0U) << created.proxy->url();
    const auto reply = tls_exchange(created.proxy->port(), authority.ca.certificate_pem(), make_request("GET", "/kv/a"));
    ASSERT_FALSE(reply.handshake_error) << reply.handshake_error.message();
    const auto res = parse_response(reply.bytes);
    ASSERT_TRUE(res) << reply.bytes;
    EXPECT_EQ(res->result_int(), 404);  // the upstream's own answer: no such key
    secure.stop();
    plain.stop();
}

TEST(tls, plain_http_on_the_tls_port_is_a_failed_handshake_with_the_reason) {
    const run_authority authority;
    test_server s{"", 7, tls_options(authority)};
    const auto reply = exchange(s.port(), make_request("GET", "/hello"));
    EXPECT_FALSE(reply.parsed());
    EXPECT_TRUE(s.journal().empty());
    const auto events = s.context().records.events();
    ASSERT_EQ(events.size(), 1U);
    EXPECT_EQ(events[0].kind, record::server_event_kind::tls_handshake_failed);
    EXPECT_NE(events[0].detail.find("http request"), std::string::npos) << events[0].detail;
}

TEST(tls, a_client_that_never_says_hello_is_closed_at_header_timeout_and_journaled_so) {
    const run_authority authority;
    test_server s{"[server]\nheader_timeout = \"200ms\"\n", 7, tls_options(authority)};
    const auto reply = exchange(s.port(), "", 5s);
    EXPECT_FALSE(reply.timed_out);
    const auto events = s.context().records.events();
    ASSERT_EQ(events.size(), 1U);
    EXPECT_EQ(events[0].kind, record::server_event_kind::header_timeout);
    EXPECT_EQ(events[0].detail.rfind("TLS handshake not complete within 200ms", 0), 0U) << events[0].detail;
}


// ---- the proxy's upstream over TLS ----

// The run's CA as a file, as a user hands it to `proxy --upstream-ca`.
struct ca_file {
    explicit ca_file(const std::string& pem)
        : path{std::filesystem::temp_directory_path() /
               ("faultline-tls-test-ca-" + std::to_string(::getpid()) + "-" + std::to_string(next_id()) + ".pem")} {
        std::ofstream{path} << pem;
    }
    ~ca_file() { std::filesystem::remove(path); }
    static int next_id() {
        static int id = 0;
        return ++id;
    }
    std::filesystem::path path;
};

struct upstream_proxy {
    upstream_proxy(std::uint16_t upstream_port, std::optional<tls::client_options> upstream_tls,
                   std::string host = "localhost") {
        context = std::make_unique<server_context>(model_config{}, std::vector<faults::rule>{}, 7);
        proxy_options options;
        options.upstream_address = std::move(host);
        options.upstream_port = upstream_port;
        options.upstream_tls = std::move(upstream_tls);
        engine = std::make_unique<proxy>(*context, options);
        if (const auto ec = engine->start()) throw std::runtime_error{"proxy did not start: " + ec.message()};
    }
    std::unique_ptr<server_context> context;
    std::unique_ptr<proxy> engine;
};

TEST(tls, the_proxy_reaches_a_tls_upstream_verified_by_name_and_reuses_the_session) {
    const run_authority authority;
    test_server upstream{"", 7, tls_options(authority)};
    const ca_file ca{authority.ca.certificate_pem()};
    upstream_proxy p{upstream.port(), tls::client_options{ca.path.string(), true}};
    connection client{p.engine->port()};
    ASSERT_TRUE(client.connected());
    for (int i = 0; i < 3; ++i) {
        const auto reply = client.round_trip(make_request("GET", "/hello", {}, {}, true));
        ASSERT_TRUE(reply.parsed()) << reply.bytes;
        EXPECT_EQ(reply.parsed()->result_int(), 200);
        EXPECT_EQ(reply.parsed()->body(), "ok");
    }
    // One TLS connection, pooled between the exchanges.
    EXPECT_EQ(p.engine->counters().upstream_connects, 1U);
    EXPECT_EQ(upstream.engine().counters().connections, 1U);
}

// An untrusted issuer, or a certificate for another name: refused at the handshake, before the
// request is written.
TEST(tls, an_upstream_certificate_the_proxy_does_not_trust_is_a_502_and_nothing_is_sent) {
    const run_authority authority;
    const auto now = std::chrono::system_clock::now();
    server_options other_name;
    other_name.tls = authority.ca.issue(tls::request_for({"service.example"}, now));
    const auto stranger = tls::certificate_authority::generate("not the upstream's CA", now);
    const ca_file trusted{authority.ca.certificate_pem()};
    const ca_file untrusted{stranger.certificate_pem()};
    struct case_t {
        const char* name;
        server_options served;
        std::string ca;
    };
    for (const case_t& c : {case_t{"untrusted issuer", tls_options(authority), untrusted.path.string()},
                            case_t{"another name", other_name, trusted.path.string()}}) {
        SCOPED_TRACE(c.name);
        test_server upstream{"", 7, c.served};
        upstream_proxy p{upstream.port(), tls::client_options{c.ca, true}, "127.0.0.1"};
        const auto reply = exchange(p.engine->port(), make_request("POST", "/payments", R"({"amount":5})"));
        ASSERT_TRUE(reply.parsed()) << reply.bytes;
        EXPECT_EQ(reply.parsed()->result_int(), 502);
        p.engine->stop();
        const auto wire = p.context->records.wire_snapshot();
        ASSERT_EQ(wire.size(), 1U);
        EXPECT_EQ(wire[0].upstream_error, "tls_handshake_failed");
        EXPECT_EQ(upstream.context().model.charge_count(), 0U);
        EXPECT_TRUE(upstream.journal().empty());
    }
}

// A proxy set's table (a config file's [[proxy]] or the control API's POST) reaches an https://
// upstream as `proxy --upstream https://` does: verified against upstream_ca; refused without it.
TEST(tls, a_proxy_table_reaches_an_https_upstream_verified_against_its_ca) {
    const run_authority authority;
    test_server upstream{"", 7, tls_options(authority)};
    const ca_file ca{authority.ca.certificate_pem()};
    proxy_set_options options;
    options.control_token = std::string{};
    proxy_set set{options};
    ASSERT_FALSE(set.start());
    const std::string https = "upstream = \"https://127.0.0.1:" + std::to_string(upstream.port()) + "\"\n";
    const create_result created =
        set.create(toml::parse("name = \"api\"\n" + https + "upstream_ca = \"" + ca.path.string() + "\"\n"), "api.toml");
    ASSERT_TRUE(created.ok()) << (created.errors.empty() ? "" : created.errors[0]);
    const auto reply = exchange(created.proxy->port(), make_request("GET", "/hello"));
    ASSERT_TRUE(reply.parsed()) << reply.bytes;
    EXPECT_EQ(reply.parsed()->result_int(), 200);
    EXPECT_EQ(reply.parsed()->body(), "ok");
    EXPECT_EQ(upstream.engine().counters().connections, 1U);

    // The system's trust store does not know the run's CA: a 502, and nothing reached the upstream.
    const create_result unverified = set.create(toml::parse("name = \"other\"\n" + https), "other.toml");
    ASSERT_TRUE(unverified.ok()) << (unverified.errors.empty() ? "" : unverified.errors[0]);
    const auto refused = exchange(unverified.proxy->port(), make_request("POST", "/payments", R"({"amount":5})"));
    ASSERT_TRUE(refused.parsed()) << refused.bytes;
    EXPECT_EQ(refused.parsed()->result_int(), 502);
    EXPECT_EQ(upstream.context().model.charge_count(), 0U);

    const create_result plain_with_ca = set.create(
        toml::parse("name = \"x\"\nupstream = \"127.0.0.1:1\"\nupstream_insecure = true\n"), "x.toml");
    ASSERT_FALSE(plain_with_ca.ok());
    EXPECT_NE(plain_with_ca.errors.at(0).find("upstream_insecure: needs upstream = \"https://HOST:PORT\""),
              std::string::npos)
        << plain_with_ca.errors[0];
    set.stop();
}

TEST(tls, without_verification_a_self_signed_upstream_is_reached) {
    const run_authority authority;
    test_server upstream{"", 7, tls_options(authority)};
    upstream_proxy p{upstream.port(), tls::client_options{"", false}};
    const auto reply = exchange(p.engine->port(), make_request("GET", "/hello"));
    ASSERT_TRUE(reply.parsed()) << reply.bytes;
    EXPECT_EQ(reply.parsed()->result_int(), 200);
}

// The commit is the upstream's: a reply it loses after committing is the attempt's outcome at the
// proxy (502), never a second request.
TEST(tls, a_tls_upstream_that_loses_the_reply_after_commit_is_not_sent_the_request_again) {
    const run_authority authority;
    test_server upstream{"[[fault]]\nname = \"lost\"\nkind = \"lost_response\"\nthen = \"reset\"\n"
                         "[fault.match]\npath = \"/payments\"\n",
                         7, tls_options(authority)};
    const ca_file ca{authority.ca.certificate_pem()};
    upstream_proxy p{upstream.port(), tls::client_options{ca.path.string(), true}};
    const auto reply = exchange(p.engine->port(), make_request("POST", "/payments", R"({"amount":5})"));
    ASSERT_TRUE(reply.parsed()) << reply.bytes;
    EXPECT_EQ(reply.parsed()->result_int(), 502);
    EXPECT_EQ(upstream.context().model.charge_count(), 1U);
    EXPECT_EQ(upstream.journal().size(), 1U);
}

}  // namespace
}  // namespace faultline::server::testing
