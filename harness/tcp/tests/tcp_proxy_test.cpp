// The TCP proxy on loopback with real sockets: an echo service as the upstream, the proxy in front of
// it, an Asio client in front of that, every wait bounded by io_context::run_for. Each toxic is judged
// by what the client sees (bytes, read sizes, EOF or ECONNRESET, lower bounds on time: never upper
// ones) and by the connection's journal record.
#include "faultline/tcp/tcp_named_proxy.hpp"
#include "faultline/tcp/tcp_proxy.hpp"

#include "test_client.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace faultline::tcp {
namespace {

using namespace std::chrono_literals;
namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;
using steady = std::chrono::steady_clock;

const auto loopback = asio::ip::make_address("127.0.0.1");

// Sends back every byte it receives and closes after the peer's EOF, on its own thread. Counts the
// bytes it received.
class echo_upstream {
public:
    echo_upstream() : acceptor_{io_, {loopback, 0}} {
        do_accept();
        thread_ = std::thread{[this] { io_.run(); }};
    }
    ~echo_upstream() {
        io_.stop();
        thread_.join();
    }
    std::uint16_t port() const { return acceptor_.local_endpoint().port(); }
    std::uint64_t received() const { return received_.load(); }

private:
    struct connection : std::enable_shared_from_this<connection> {
        connection(tcp::socket s, std::atomic<std::uint64_t>& counter) : socket{std::move(s)}, received{counter} {}
        void do_read() {
            socket.async_read_some(asio::buffer(buffer), [self = shared_from_this()](error_code ec, std::size_t n) {
                if (ec == asio::error::eof) {
                    self->socket.shutdown(tcp::socket::shutdown_send, ec);
                    return;
                }
                if (ec) return;
                self->received += n;
                asio::async_write(self->socket, asio::buffer(self->buffer.data(), n),
                                  [self](error_code write_ec, std::size_t) {
                                      if (!write_ec) self->do_read();
                                  });
            });
        }
        tcp::socket socket;
        std::atomic<std::uint64_t>& received;
        std::array<char, 8192> buffer{};
    };

    void do_accept() {
        acceptor_.async_accept([this](error_code ec, tcp::socket s) {
            if (ec) return;
            std::make_shared<connection>(std::move(s), received_)->do_read();
            do_accept();
        });
    }

    asio::io_context io_;
    tcp::acceptor acceptor_;
    std::atomic<std::uint64_t> received_{0};
    std::thread thread_;
};

// What a client saw of one connection.
struct conversation {
    std::string received;
    std::vector<std::size_t> read_sizes;
    error_code end;                            // eof, connection_reset, or timed_out when the bound hit
    std::optional<steady::duration> first_byte;  // after the send started
    steady::duration last_byte{};
    bool finished = false;
};

// Connects to `port`, sends `payload` (then half-closes when `half_close`), and reads until EOF, an
// error, or `bound`.
conversation talk(std::uint16_t port, const std::string& payload, bool half_close = true,
                  std::chrono::milliseconds bound = 10s) {
    asio::io_context io;
    tcp::socket socket{io};
    conversation c;
    std::array<char, 64 * 1024> buffer{};
    steady::time_point started;
    std::function<void()> do_read = [&] {
        socket.async_read_some(asio::buffer(buffer), [&](error_code ec, std::size_t n) {
            if (ec) {
                c.end = ec;
                c.finished = true;
                return;
            }
            const auto at = steady::now() - started;
            if (!c.first_byte) c.first_byte = at;
            c.last_byte = at;
            c.read_sizes.push_back(n);
            c.received.append(buffer.data(), n);
            do_read();
        });
    };
    socket.async_connect({loopback, port}, [&](error_code ec) {
        if (ec) {
            c.end = ec;
            c.finished = true;
            return;
        }
        started = steady::now();
        asio::async_write(socket, asio::buffer(payload), [&](error_code write_ec, std::size_t) {
            if (!write_ec && half_close) socket.shutdown(tcp::socket::shutdown_send, write_ec);
        });
        do_read();
    });
    io.run_for(bound);
    if (!c.finished) c.end = asio::error::timed_out;
    return c;
}

std::string pattern(std::size_t n) {
    std::string out(n, '\0');
    for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<char>((i * 131 + i / 251) & 0xff);
    return out;
}

// A proxy for one test with its toxics from TOML, in front of `upstream_port`, collecting its records.
class test_proxy {
public:
    test_proxy(std::string_view toxics_toml, std::uint16_t upstream_port, tcp_proxy_options options = {}) {
        auto parsed = parse_toxics(toxics_toml, "toxics.toml");
        if (!parsed.ok()) throw std::invalid_argument{"bad test toxics: " + parsed.errors.front().to_string()};
        options.upstream_port = upstream_port;
        proxy_ = std::make_unique<tcp_proxy>(std::make_shared<const toxic_set>(std::move(*parsed.set)), options, [this](const connection_record& r) {
            const std::lock_guard lock{mutex_};
            records_.push_back(r);
        });
        if (const auto ec = proxy_->start()) throw std::runtime_error{"proxy did not start: " + ec.message()};
    }
    std::uint16_t port() const { return proxy_->port(); }
    tcp_proxy& engine() { return *proxy_; }
    // Stops the proxy (every connection journaled) and returns the records.
    std::vector<connection_record> records() {
        proxy_->stop();
        const std::lock_guard lock{mutex_};
        return records_;
    }

private:
    std::mutex mutex_;
    std::vector<connection_record> records_;
    std::unique_ptr<tcp_proxy> proxy_;
};

connection_record only(const std::vector<connection_record>& records) {
    EXPECT_EQ(records.size(), 1U);
    return records.empty() ? connection_record{} : records.front();
}

std::uint16_t closed_port() {
    asio::io_context io;
    tcp::acceptor acceptor{io, {loopback, 0}};
    const auto port = acceptor.local_endpoint().port();
    acceptor.close();
    return port;
}

TEST(tcp_proxy, passes_bytes_through_exactly_both_ways_and_journals_them) {
    echo_upstream upstream;
    test_proxy p{"", upstream.port()};
    const std::string payload = pattern(3 * 1024 * 1024 + 17);
    const auto c = talk(p.port(), payload);
    EXPECT_EQ(c.end, asio::error::eof);
    EXPECT_TRUE(c.received == payload) << c.received.size() << " bytes back of " << payload.size();
    EXPECT_EQ(upstream.received(), payload.size());
    const auto r = only(p.records());
    EXPECT_EQ(r.conn, 1U);
    EXPECT_EQ(r.outcome, connection_outcome::closed);
    EXPECT_EQ(r.bytes_up, payload.size());
    EXPECT_EQ(r.bytes_down, payload.size());
    EXPECT_TRUE(r.toxics.empty());
    EXPECT_LE(r.t_accept, r.t_end);
}

TEST(tcp_proxy, latency_delays_the_reply_by_at_least_the_latency) {
    echo_upstream upstream;
    test_proxy p{"[[toxic]]\nkind = \"latency\"\nlatency = \"200ms\"\n", upstream.port()};
    const auto c = talk(p.port(), "ping");
    EXPECT_EQ(c.received, "ping");
    ASSERT_TRUE(c.first_byte);
    EXPECT_GE(*c.first_byte, 200ms);
    EXPECT_THAT(only(p.records()).toxics, ::testing::ElementsAre("latency-1"));
}

TEST(tcp_proxy, latency_upstream_delays_what_the_service_receives) {
    echo_upstream upstream;
    test_proxy p{"[[toxic]]\nkind = \"latency\"\nstream = \"upstream\"\nlatency = \"150ms\"\n", upstream.port()};
    const auto c = talk(p.port(), "ping");
    EXPECT_EQ(c.received, "ping");
    ASSERT_TRUE(c.first_byte);
    EXPECT_GE(*c.first_byte, 150ms);
}

TEST(tcp_proxy, jittered_latency_and_slicing_keep_every_byte_in_order) {
    echo_upstream upstream;
    test_proxy p{"[[toxic]]\nkind = \"latency\"\nstream = \"upstream\"\nlatency = \"5ms\"\njitter = \"5ms\"\n"
                 "[[toxic]]\nkind = \"latency\"\nlatency = \"5ms\"\njitter = \"5ms\"\n"
                 "[[toxic]]\nkind = \"slicer\"\naverage_size = 3000\nsize_variation = 2000\n",
                 upstream.port()};
    // Far more than the chunks a direction may hold, so the readers run ahead and pause.
    const std::string payload = pattern(2 * 1024 * 1024 + 3);
    const auto c = talk(p.port(), payload, true, 60s);
    EXPECT_EQ(c.end, asio::error::eof);
    EXPECT_TRUE(c.received == payload) << c.received.size() << " bytes back of " << payload.size();
    const auto r = only(p.records());
    EXPECT_EQ(r.outcome, connection_outcome::closed);
    EXPECT_EQ(r.bytes_up, payload.size());
    EXPECT_EQ(r.bytes_down, payload.size());
}

TEST(tcp_proxy, concurrent_connections_each_get_their_own_bytes_back) {
    echo_upstream upstream;
    test_proxy p{"[[toxic]]\nkind = \"slicer\"\naverage_size = 700\nsize_variation = 600\ntoxicity = 0.5\n"
                 "[[toxic]]\nkind = \"latency\"\nlatency = \"2ms\"\ntoxicity = 0.5\n",
                 upstream.port()};
    constexpr std::size_t clients = 32;
    std::vector<conversation> seen(clients);
    std::vector<std::string> sent(clients);
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < clients; ++i) {
        sent[i] = std::to_string(i) + ":" + pattern(64 * 1024 + i);
        threads.emplace_back([&, i] { seen[i] = talk(p.port(), sent[i], true, 30s); });
    }
    for (auto& t : threads) t.join();
    for (std::size_t i = 0; i < clients; ++i) {
        EXPECT_EQ(seen[i].end, asio::error::eof) << i;
        EXPECT_TRUE(seen[i].received == sent[i]) << i;
    }
    auto records = p.records();
    ASSERT_EQ(records.size(), clients);
    std::sort(records.begin(), records.end(), [](const auto& a, const auto& b) { return a.conn < b.conn; });
    for (std::size_t i = 0; i < clients; ++i) {
        EXPECT_EQ(records[i].conn, i + 1);
        EXPECT_EQ(records[i].outcome, connection_outcome::closed);
    }
}

TEST(tcp_proxy, bandwidth_takes_at_least_bytes_over_rate) {
    echo_upstream upstream;
    test_proxy p{"[[toxic]]\nkind = \"bandwidth\"\nrate = 20000\n", upstream.port()};
    const std::string payload = pattern(10'000);
    const auto c = talk(p.port(), payload);
    EXPECT_TRUE(c.received == payload);
    EXPECT_GE(c.last_byte, 500ms);  // 10,000 bytes at 20,000 bytes/s
    EXPECT_EQ(only(p.records()).bytes_down, payload.size());
}

TEST(tcp_proxy, slicer_delivers_the_data_in_several_small_reads) {
    echo_upstream upstream;
    test_proxy p{"[[toxic]]\nkind = \"slicer\"\naverage_size = 10\ndelay = \"40ms\"\n", upstream.port()};
    const std::string payload = pattern(50);
    const auto c = talk(p.port(), payload);
    EXPECT_TRUE(c.received == payload);
    // Five pieces 40 ms apart: the client reads them one by one unless it is held up for 40 ms.
    EXPECT_GE(c.read_sizes.size(), 3U);
    ASSERT_FALSE(c.read_sizes.empty());
    EXPECT_EQ(c.read_sizes.front(), 10U);
    EXPECT_GE(c.last_byte, 160ms);
}

TEST(tcp_proxy, limit_data_close_delivers_exactly_n_bytes_then_eof) {
    echo_upstream upstream;
    test_proxy p{"[[toxic]]\nkind = \"limit_data\"\nbytes = 100\nname = \"cut\"\n", upstream.port()};
    const auto payload = pattern(300);
    const auto c = talk(p.port(), payload, false);
    EXPECT_EQ(c.end, asio::error::eof);
    EXPECT_TRUE(c.received == payload.substr(0, 100)) << c.received.size();
    const auto r = only(p.records());
    EXPECT_EQ(r.outcome, connection_outcome::closed);
    EXPECT_EQ(r.ended_by, "cut");
    EXPECT_EQ(r.bytes_down, 100U);
}

TEST(tcp_proxy, limit_data_reset_ends_with_econnreset_after_at_most_n_bytes) {
    echo_upstream upstream;
    test_proxy p{"[[toxic]]\nkind = \"limit_data\"\nbytes = 100\nthen = \"reset\"\n", upstream.port()};
    const auto c = talk(p.port(), pattern(300), false);
    EXPECT_EQ(c.end, asio::error::connection_reset);
    EXPECT_LE(c.received.size(), 100U);
    const auto r = only(p.records());
    EXPECT_EQ(r.outcome, connection_outcome::reset);
    EXPECT_EQ(r.ended_by, "limit_data-1");
}

TEST(tcp_proxy, reset_peer_downstream_lets_the_request_through_and_resets_the_client) {
    echo_upstream upstream;
    test_proxy p{"[[toxic]]\nkind = \"reset_peer\"\n", upstream.port()};
    const auto c = talk(p.port(), "charge 17", false);
    EXPECT_EQ(c.end, asio::error::connection_reset);
    EXPECT_TRUE(c.received.empty());
    EXPECT_EQ(upstream.received(), 9U);  // the service got the request: a lost reply
    const auto r = only(p.records());
    EXPECT_EQ(r.outcome, connection_outcome::reset);
    EXPECT_EQ(r.ended_by, "reset_peer-1");
    EXPECT_EQ(r.bytes_up, 9U);
    EXPECT_EQ(r.bytes_down, 0U);
}

TEST(tcp_proxy, reset_peer_waits_its_timeout_before_the_reset) {
    echo_upstream upstream;
    test_proxy p{"[[toxic]]\nkind = \"reset_peer\"\nstream = \"upstream\"\ntimeout = \"150ms\"\n", upstream.port()};
    const auto started = steady::now();
    const auto c = talk(p.port(), "x", false);
    EXPECT_EQ(c.end, asio::error::connection_reset);
    EXPECT_GE(steady::now() - started, 150ms);
    EXPECT_EQ(upstream.received(), 0U);
}

TEST(tcp_proxy, timeout_drops_the_stream_and_closes_after_its_timeout) {
    echo_upstream upstream;
    test_proxy p{"[[toxic]]\nkind = \"timeout\"\nstream = \"upstream\"\ntimeout = \"200ms\"\n", upstream.port()};
    const auto started = steady::now();
    const auto c = talk(p.port(), "ping");
    EXPECT_EQ(c.end, asio::error::eof);
    EXPECT_TRUE(c.received.empty());
    EXPECT_GE(steady::now() - started, 200ms);
    EXPECT_EQ(upstream.received(), 0U);
    const auto r = only(p.records());
    EXPECT_EQ(r.outcome, connection_outcome::timeout);
    EXPECT_EQ(r.ended_by, "timeout-1");
}

TEST(tcp_proxy, timeout_zero_holds_until_the_max_hold_bound) {
    echo_upstream upstream;
    tcp_proxy_options options;
    options.max_hold = 150ms;
    test_proxy p{"[[toxic]]\nkind = \"timeout\"\n", upstream.port(), options};
    const auto started = steady::now();
    const auto c = talk(p.port(), "ping");
    EXPECT_EQ(c.end, asio::error::eof);
    EXPECT_TRUE(c.received.empty());
    EXPECT_GE(steady::now() - started, 150ms);
    EXPECT_EQ(upstream.received(), 4U);  // the downstream was the black hole
    EXPECT_EQ(only(p.records()).outcome, connection_outcome::timeout);
}

TEST(tcp_proxy, refused_every_second_connection_is_reset_on_accept) {
    echo_upstream upstream;
    test_proxy p{"[[toxic]]\nkind = \"refused\"\nevery = 2\n", upstream.port()};
    const auto first = talk(p.port(), "one");
    const auto second = talk(p.port(), "two");
    const auto third = talk(p.port(), "three");
    EXPECT_EQ(first.received, "one");
    EXPECT_EQ(second.end, asio::error::connection_reset);
    EXPECT_TRUE(second.received.empty());
    EXPECT_EQ(third.received, "three");
    const auto records = p.records();
    ASSERT_EQ(records.size(), 3U);
    EXPECT_EQ(records[0].outcome, connection_outcome::closed);
    EXPECT_EQ(records[1].outcome, connection_outcome::refused);
    EXPECT_EQ(records[1].ended_by, "refused-1");
    EXPECT_EQ(records[2].outcome, connection_outcome::closed);
    EXPECT_EQ(upstream.received(), 8U);  // "one" and "three": the refused one never reached it
}

TEST(tcp_proxy, refused_with_close_ends_with_eof_and_no_data) {
    echo_upstream upstream;
    test_proxy p{"[[toxic]]\nkind = \"refused\"\nthen = \"close\"\n", upstream.port()};
    const auto c = talk(p.port(), "hello", false);
    EXPECT_TRUE(c.end == asio::error::eof || c.end == asio::error::connection_reset) << c.end.message();
    EXPECT_TRUE(c.received.empty());
    EXPECT_EQ(only(p.records()).outcome, connection_outcome::refused);
}

TEST(tcp_proxy, toxicity_zero_never_acts_and_one_always_does) {
    echo_upstream upstream;
    test_proxy never{"[[toxic]]\nkind = \"refused\"\ntoxicity = 0.0\n", upstream.port()};
    test_proxy always{"[[toxic]]\nkind = \"refused\"\ntoxicity = 1.0\n", upstream.port()};
    for (int i = 0; i < 5; ++i) {
        EXPECT_EQ(talk(never.port(), "x").received, "x");
        EXPECT_EQ(talk(always.port(), "x").end, asio::error::connection_reset);
    }
    for (const auto& r : never.records()) EXPECT_TRUE(r.toxics.empty());
    for (const auto& r : always.records()) EXPECT_EQ(r.outcome, connection_outcome::refused);
}

// Which connections a toxic with toxicity 0.5 hit, over `n` connections to a proxy with `seed`.
std::vector<std::vector<std::string>> toxics_per_connection(std::uint16_t upstream_port, std::uint64_t seed, int n) {
    tcp_proxy_options options;
    options.seed = seed;
    test_proxy p{"[[toxic]]\nkind = \"refused\"\ntoxicity = 0.5\nthen = \"close\"\n"
                 "[[toxic]]\nkind = \"latency\"\nlatency = \"1ms\"\ntoxicity = 0.5\n",
                 upstream_port, options};
    for (int i = 0; i < n; ++i) talk(p.port(), "x");
    std::vector<std::vector<std::string>> out;
    for (const auto& r : p.records()) out.push_back(r.toxics);
    return out;
}

TEST(tcp_proxy, the_same_seed_replays_the_same_decisions_per_connection) {
    echo_upstream upstream;
    const auto first = toxics_per_connection(upstream.port(), 11, 16);
    ASSERT_EQ(first.size(), 16U);
    EXPECT_EQ(toxics_per_connection(upstream.port(), 11, 16), first);
    EXPECT_NE(toxics_per_connection(upstream.port(), 12, 16), first);
    // Each connection's list is exactly what the engine decides for its number.
    auto parsed = parse_toxics("[[toxic]]\nkind = \"refused\"\ntoxicity = 0.5\n", "t.toml");
    for (std::size_t n = 1; n <= first.size(); ++n) {
        const bool refused = toxic_applies(parsed.set->toxics[0], 11, n, 0ns);
        EXPECT_EQ(!first[n - 1].empty() && first[n - 1].front() == "refused-1", refused) << n;
    }
}

TEST(tcp_proxy, an_unreachable_upstream_resets_the_client_and_is_journaled) {
    test_proxy p{"", closed_port()};
    const auto c = talk(p.port(), "x", false);
    EXPECT_EQ(c.end, asio::error::connection_reset);
    const auto r = only(p.records());
    EXPECT_EQ(r.outcome, connection_outcome::upstream_refused);
    EXPECT_THAT(r.error, ::testing::StartsWith("upstream connect: "));
}

TEST(tcp_proxy, stopping_ends_open_connections_and_journals_them) {
    echo_upstream upstream;
    test_proxy p{"", upstream.port()};
    asio::io_context io;
    tcp::socket socket{io};
    std::array<char, 4> back{};
    bool echoed = false;
    socket.async_connect({loopback, p.port()}, [&](error_code ec) {
        if (ec) return;
        asio::async_write(socket, asio::buffer("held", 4), [](error_code, std::size_t) {});
        asio::async_read(socket, asio::buffer(back), [&](error_code read_ec, std::size_t) { echoed = !read_ec; });
    });
    io.run_for(5s);
    ASSERT_TRUE(echoed);  // the connection is open and forwarding
    const auto r = only(p.records());
    EXPECT_EQ(r.outcome, connection_outcome::stopped);
    EXPECT_EQ(r.bytes_up, 4U);
    EXPECT_EQ(r.bytes_down, 4U);
}

TEST(tcp_proxy, a_connection_past_max_connections_is_reset_on_accept) {
    echo_upstream upstream;
    tcp_proxy_options options;
    options.max_connections = 1;
    test_proxy p{"", upstream.port(), options};
    asio::io_context io;
    tcp::socket held{io};
    std::array<char, 4> back{};
    bool echoed = false;
    held.async_connect({loopback, p.port()}, [&](error_code ec) {
        if (ec) return;
        asio::async_write(held, asio::buffer("held", 4), [](error_code, std::size_t) {});
        asio::async_read(held, asio::buffer(back), [&](error_code read_ec, std::size_t) { echoed = !read_ec; });
    });
    io.run_for(5s);
    ASSERT_TRUE(echoed);  // connection 1 is open
    const auto second = talk(p.port(), "x", false);
    EXPECT_EQ(second.end, asio::error::connection_reset);
    held.close();
    const auto records = p.records();
    ASSERT_EQ(records.size(), 2U);
    const auto over = records[0].conn == 2 ? records[0] : records[1];
    EXPECT_EQ(over.conn, 2U);
    EXPECT_EQ(over.outcome, connection_outcome::over_capacity);
    EXPECT_TRUE(over.toxics.empty());
}

TEST(tcp_proxy, listening_off_loopback_must_be_allowed) {
    tcp_proxy_options options;
    options.address = "0.0.0.0";
    tcp_proxy p{std::make_shared<const toxic_set>(), options};
    EXPECT_EQ(p.start(), asio::error::access_denied);
}


// Issue 27, item 4: a connection holds two descriptors (the client's and the upstream's), so the cap
// is lowered to what the descriptor limit holds: a connection past it is refused and journaled
// (over_capacity) before accept() could fail for want of descriptors.
TEST(tcp_proxy, the_connection_cap_fits_the_descriptor_limit_at_two_descriptors_a_connection) {
    echo_upstream upstream;
    tcp_proxy_options options;
    options.max_connections = 100'000'000;
    test_proxy p{"", upstream.port(), options};
    rlimit limit{};
    ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &limit), 0);
    ASSERT_NE(limit.rlim_cur, RLIM_INFINITY);
    EXPECT_GT(p.engine().max_connections(), 0U);
    EXPECT_LE(p.engine().max_connections() * 2, limit.rlim_cur);
}

// Issue 27, item 5: the upstream may be named (a Docker or Kubernetes service).
TEST(tcp_proxy, the_upstream_may_be_a_host_name) {
    echo_upstream upstream;
    tcp_proxy_options options;
    options.upstream_address = "localhost";
    test_proxy p{"", upstream.port(), options};
    const auto c = talk(p.port(), "ping");
    EXPECT_EQ(c.received, "ping");
    EXPECT_EQ(only(p.records()).outcome, connection_outcome::closed);
}

// A proxy set's tcp mode (tcp_named_proxy.hpp), Toxiproxy's workflow through the control API: a
// toxic added to a running proxy acts on the connections accepted after it, an open connection keeps
// what it was accepted with, the toxic removed is gone for the next one, and the round's journal of
// connections says which connection met it.
TEST(tcp_proxy, a_proxy_sets_tcp_proxy_takes_toxics_at_runtime_for_new_connections) {
    using server::testing::control_call;
    using server::testing::control_reply;
    echo_upstream upstream;
    server::proxy_set_options options;
    options.control_token = std::string{};
    options.seed = 5;
    server::proxy_set set{options, {tcp_named_proxy::mode()}};
    ASSERT_FALSE(set.start());
    const std::uint16_t control = set.control_port();
    const control_reply created =
        control_call(control, "POST", "proxies", {},
                     R"({"name":"redis","mode":"tcp","upstream":"127.0.0.1:)" + std::to_string(upstream.port()) + R"("})");
    ASSERT_EQ(created.status, 201) << created.body;
    const std::uint16_t port = set.find("redis")->port();
    EXPECT_EQ(talk(port, "one").received, "one");

    // Accepted (and echoing) before the toxic exists.
    asio::io_context io;
    tcp::socket open{io};
    open.connect({loopback, port});
    std::array<char, 1> echoed{};
    asio::write(open, asio::buffer("x", 1));
    asio::read(open, asio::buffer(echoed));

    const control_reply added = control_call(control, "POST", "proxies/redis/toxics", {}, R"({"name":"cut","kind":"refused"})");
    EXPECT_EQ(added.status, 201) << added.body;
    EXPECT_NE(control_call(control, "GET", "proxies/redis/toxics").body.find(R"("name":"cut","kind":"refused")"),
              std::string::npos);
    EXPECT_EQ(control_call(control, "POST", "proxies/redis/toxics", {}, R"({"name":"cut","kind":"refused"})").status, 409);
    EXPECT_EQ(control_call(control, "POST", "proxies/redis/toxics", {}, R"({"kind":"teleport"})").status, 400);
    const auto refused = talk(port, "two");
    EXPECT_EQ(refused.end, asio::error::connection_reset) << refused.end.message();
    EXPECT_TRUE(refused.received.empty());
    // The open connection goes on with the (no) toxics it was accepted with.
    asio::write(open, asio::buffer("y", 1));
    asio::read(open, asio::buffer(echoed));
    EXPECT_EQ(echoed[0], 'y');

    EXPECT_EQ(control_call(control, "DELETE", "proxies/redis/toxics/c%75t").status, 200);  // names are percent-decoded
    EXPECT_EQ(control_call(control, "DELETE", "proxies/redis/toxics/cut").status, 404);
    EXPECT_EQ(control_call(control, "GET", "proxies/redis/toxics").body, R"({"toxics":[]})");
    EXPECT_EQ(talk(port, "three").received, "three");
    open.shutdown(tcp::socket::shutdown_send);
    error_code ec;
    asio::read(open, asio::buffer(echoed), ec);
    EXPECT_EQ(ec, asio::error::eof);

    // A connection is journaled when it ends, after its last byte: wait for the four, bounded.
    const control_reply journal = server::testing::control_until(
        control, "proxies/redis/journal", {},
        [](const control_reply& r) { return std::count(r.body.begin(), r.body.end(), '\n') >= 4; });
    const auto lines = server::testing::parse_journal_lines(journal.body).attempts;
    ASSERT_EQ(lines.size(), 4U) << journal.body;
    std::map<std::uint64_t, std::string> outcomes;
    for (const boost::json::object& line : lines) {
        std::string outcome{line.at("outcome").as_string()};
        if (const auto* by = line.if_contains("ended_by")) outcome += " by " + std::string{by->as_string()};
        outcomes[line.at("conn").to_number<std::uint64_t>()] = outcome;
    }
    EXPECT_EQ(outcomes, (std::map<std::uint64_t, std::string>{
                            {1, "closed"}, {2, "closed"}, {3, "refused by cut"}, {4, "closed"}}));
    EXPECT_EQ(control_call(control, "POST", "proxies/redis/reset").body, R"({"reset":true,"round":2})");
    EXPECT_EQ(control_call(control, "GET", "proxies/redis/journal").body, "");
}

}  // namespace
}  // namespace faultline::tcp
