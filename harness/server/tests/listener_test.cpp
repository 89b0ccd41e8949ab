// The one listener on loopback: a port's cap and its refusals, the cap fitted to the descriptor limit,
// a stop asked for from one of its own workers (it cannot join itself: it only begins), and a port
// switched out of listening (refusing: ECONNREFUSED; unanswered: connects hang) and back.
#include "faultline/server/listener.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>

#include <gtest/gtest.h>

#include <sys/resource.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace faultline::server {
namespace {

using namespace std::chrono_literals;
namespace asio = boost::asio;

// Holds its socket until the listener stops it.
class held_connection final : public listened_connection {
public:
    held_connection(listener& owner, std::size_t port, accepted_connection accepted)
        : owner_{owner}, port_{port}, socket_{std::move(accepted.socket)}, id_{accepted.id} {}
    ~held_connection() override { owner_.remove(port_, id_); }
    void start() override {}
    void on_listener_stop() override { close(); }
    void force_close() override { close(); }

private:
    void close() {
        asio::post(socket_.get_executor(), [this] {
            boost::system::error_code ignored;
            socket_.close(ignored);
        });
    }
    listener& owner_;
    const std::size_t port_;
    listener_socket socket_;
    const std::uint64_t id_;
};

asio::ip::tcp::endpoint loopback(std::uint16_t port) { return {asio::ip::make_address("127.0.0.1"), port}; }

TEST(listener, a_connection_past_the_cap_is_refused_and_numbered) {
    listener l{1, 1s};
    std::size_t port = 0;
    std::mutex mutex;  // the accept handler runs on the worker
    std::vector<std::shared_ptr<held_connection>> held;
    std::atomic<std::uint64_t> refused_id{0};
    port_options options;
    options.max_connections = 2;
    options.descriptors_per_connection = 0;
    ASSERT_FALSE(l.add_port(
        options,
        [&](accepted_connection accepted) {
            const std::lock_guard lock{mutex};
            held.push_back(std::make_shared<held_connection>(l, port, std::move(accepted)));
            return held.back();
        },
        [&](listener_socket&, std::uint64_t id, std::size_t cap) {
            EXPECT_EQ(cap, 2U);
            refused_id = id;
        },
        port));
    l.start();
    asio::io_context io;
    std::vector<asio::ip::tcp::socket> clients;
    for (int i = 0; i < 3; ++i) {
        clients.emplace_back(io);
        clients.back().connect(loopback(l.port(port)));
    }
    // The third is closed by the listener: its read ends (EOF or reset) within the bound.
    std::array<char, 1> byte{};
    boost::system::error_code ec;
    clients.back().async_read_some(asio::buffer(byte), [&](boost::system::error_code e, std::size_t) { ec = e; });
    io.run_for(5s);
    EXPECT_TRUE(ec == asio::error::eof || ec == asio::error::connection_reset) << ec.message();
    EXPECT_EQ(refused_id.load(), 3U);
    EXPECT_EQ(l.open_connections(port), 2U);
    {
        const std::lock_guard lock{mutex};
        held.clear();  // each gives its room back as it goes
    }
    EXPECT_EQ(l.open_connections(port), 0U);
    EXPECT_TRUE(l.stop());
}

// Called on a worker, stop() cannot join that worker: it begins the stop and returns false; the
// owner's later call completes it.
TEST(listener, a_stop_from_a_worker_only_begins_and_a_later_one_completes) {
    listener l{2, 1s};
    std::size_t port = 0;
    std::promise<bool> from_worker;
    std::atomic<bool> asked{false};
    ASSERT_FALSE(l.add_port(
        port_options{},
        [&](accepted_connection accepted) -> std::shared_ptr<listened_connection> {
            boost::system::error_code ignored;
            accepted.socket.close(ignored);
            if (!asked.exchange(true)) from_worker.set_value(l.stop());
            return nullptr;
        },
        {}, port));
    l.start();
    asio::io_context io;
    asio::ip::tcp::socket client{io};
    client.connect(loopback(l.port(port)));
    auto answer = from_worker.get_future();
    ASSERT_EQ(answer.wait_for(5s), std::future_status::ready);
    EXPECT_FALSE(answer.get());
    EXPECT_TRUE(l.stopping());
    EXPECT_TRUE(l.stop());
    EXPECT_TRUE(l.stop());  // idempotent
}

// A listener of one port whose accepted connections are held, and closed when it stops.
struct held_port {
    held_port() {
        EXPECT_FALSE(l.add_port(
            port_options{},
            [this](accepted_connection accepted) {
                const std::lock_guard lock{mutex};
                held.push_back(std::make_shared<held_connection>(l, index, std::move(accepted)));
                ++accepted_count;
                accepted_more.notify_all();
                return held.back();
            },
            {}, index));
        l.start();
    }
    ~held_port() {
        {
            // Gone before the stop, which then has nothing to wait for.
            const std::lock_guard lock{mutex};
            held.clear();
        }
        l.stop();
    }

    // switch_port on the accepting thread, waited for.
    port_switch switch_to(port_state to) {
        std::promise<port_switch> done;
        asio::post(l.context(0), [&] { done.set_value(l.switch_port(index, to)); });
        auto result = done.get_future();
        EXPECT_EQ(result.wait_for(5s), std::future_status::ready);
        return result.get();
    }

    // Whether `count` connections were accepted within `bound`.
    bool accepted_within(int count, std::chrono::milliseconds bound) {
        std::unique_lock lock{mutex};
        return accepted_more.wait_for(lock, bound, [&] { return accepted_count.load() >= count; });
    }

    listener l{1, 1s};
    std::size_t index = 0;
    std::mutex mutex;
    std::condition_variable accepted_more;
    std::vector<std::shared_ptr<held_connection>> held;
    std::atomic<int> accepted_count{0};
};

// A connect to `port` bounded by `bound`: its error, or `timed_out` when it neither completed nor failed.
struct connect_outcome {
    boost::system::error_code error;
    bool timed_out = false;
};

connect_outcome connect_within(asio::io_context& io, asio::ip::tcp::socket& client, std::uint16_t port,
                               std::chrono::milliseconds bound) {
    connect_outcome out;
    bool done = false;
    client.async_connect(loopback(port), [&](boost::system::error_code ec) {
        out.error = ec;
        done = true;
    });
    io.restart();
    io.run_for(bound);
    out.timed_out = !done;
    return out;
}

TEST(listener, a_refusing_port_refuses_connects_and_keeps_its_port) {
    held_port p;
    const std::uint16_t port = p.l.port(p.index);
    asio::io_context io;
    // A connection open through the window: the port must listen again beside it (SO_REUSEADDR is
    // back on before it does).
    asio::ip::tcp::socket kept{io};
    EXPECT_FALSE(connect_within(io, kept, port, 5s).error);
    EXPECT_TRUE(p.accepted_within(1, 5s));
    EXPECT_FALSE(p.switch_to(port_state::refusing).error);
    EXPECT_EQ(p.l.state_of(p.index), port_state::refusing);
    asio::ip::tcp::socket refused{io};
    const connect_outcome outcome = connect_within(io, refused, port, 5s);
    EXPECT_FALSE(outcome.timed_out);
    EXPECT_EQ(outcome.error, asio::error::connection_refused) << outcome.error.message();

    // The port stays bound: another socket can neither listen on it nor bind it, not even with
    // SO_REUSEADDR (the ephemeral port was bound by its number).
    asio::ip::tcp::acceptor other{io};
    other.open(asio::ip::tcp::v4());
    other.set_option(asio::socket_base::reuse_address{true});
    boost::system::error_code ec;
    other.bind(loopback(port), ec);
    if (!ec) other.listen(asio::socket_base::max_listen_connections, ec);
    EXPECT_EQ(ec, asio::error::address_in_use) << ec.message();
    other.close();

    EXPECT_FALSE(p.switch_to(port_state::open).error);
    EXPECT_EQ(p.l.port(p.index), port);
    asio::ip::tcp::socket served{io};
    EXPECT_FALSE(connect_within(io, served, port, 5s).error);
    EXPECT_TRUE(p.accepted_within(2, 5s));
}

TEST(listener, an_unanswered_port_leaves_connects_hanging_until_it_listens_again) {
    held_port p;
    const std::uint16_t port = p.l.port(p.index);
    const port_switch held = p.switch_to(port_state::unanswered);
    EXPECT_FALSE(held.error) << held.error.message();
    EXPECT_EQ(held.accepted_from_queue, 0U);
    asio::io_context io;
    asio::ip::tcp::socket client{io};
    boost::system::error_code connect_error = asio::error::would_block;
    client.async_connect(loopback(port), [&](boost::system::error_code ec) { connect_error = ec; });
    io.run_for(300ms);
    EXPECT_EQ(connect_error, asio::error::would_block) << "the connect ended: " << connect_error.message();
    EXPECT_EQ(p.accepted_count.load(), 0);

    // Listening again: the client's kernel resends its SYN (a second after the first) and connects.
    const port_switch reopened = p.switch_to(port_state::open);
    EXPECT_FALSE(reopened.error);
    EXPECT_TRUE(reopened.reset_unread.empty());
    io.restart();
    io.run_for(5s);
    EXPECT_FALSE(connect_error) << connect_error.message();
    EXPECT_TRUE(p.accepted_within(1, 5s));
}

// A client that connected before the switch waits in the listen queue while worker 0 is busy; the
// switch takes it off the queue and it is served, not reset with the queue.
TEST(listener, a_switch_serves_what_the_listen_queue_already_holds) {
    held_port p;
    std::promise<void> connected;
    std::promise<port_switch> done;
    asio::post(p.l.context(0), [&] {
        connected.get_future().wait();
        done.set_value(p.l.switch_port(p.index, port_state::refusing));
    });
    asio::io_context io;
    asio::ip::tcp::socket client{io};
    EXPECT_FALSE(connect_within(io, client, p.l.port(p.index), 5s).error);
    connected.set_value();
    auto result = done.get_future();
    ASSERT_EQ(result.wait_for(5s), std::future_status::ready);
    const port_switch closed = result.get();
    EXPECT_FALSE(closed.error);
    EXPECT_EQ(closed.accepted_from_queue, 1U);
    EXPECT_TRUE(p.accepted_within(1, 5s));
}

TEST(listener, ports_switch_between_refusing_and_unanswered_directly) {
    held_port p;
    const std::uint16_t port = p.l.port(p.index);
    EXPECT_FALSE(p.switch_to(port_state::unanswered).error);
    EXPECT_FALSE(p.switch_to(port_state::refusing).error);
    asio::io_context io;
    asio::ip::tcp::socket refused{io};
    EXPECT_EQ(connect_within(io, refused, port, 5s).error, asio::error::connection_refused);
    EXPECT_FALSE(p.switch_to(port_state::unanswered).error);
    asio::ip::tcp::socket hanging{io};
    EXPECT_TRUE(connect_within(io, hanging, port, 300ms).timed_out);
    EXPECT_FALSE(p.switch_to(port_state::open).error);
    EXPECT_EQ(p.accepted_count.load(), 0);
}

// Each connection of `descriptors_each` descriptors must fit under the (raised) limit with the
// reserve kept back.
TEST(listener, the_cap_fits_the_descriptor_limit) {
    const std::size_t fitted = connections_within_descriptor_limit(1'000'000'000, 2, 64);
    rlimit limit{};
    ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &limit), 0);
    if (limit.rlim_cur == RLIM_INFINITY) GTEST_SKIP() << "no descriptor limit here";
    EXPECT_EQ(fitted, (limit.rlim_cur - 64) / 2);
    EXPECT_EQ(connections_within_descriptor_limit(10, 2, 64), 10U);
    EXPECT_EQ(connections_within_descriptor_limit(1'000'000'000, 1, limit.rlim_cur + 5), 1U);
}

}  // namespace
}  // namespace faultline::server
