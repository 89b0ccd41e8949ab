// The one listener on loopback: a port's cap and its refusals, the cap fitted to the descriptor limit,
// and a stop asked for from one of its own workers (it cannot join itself: it only begins).
#include "faultline/server/listener.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>

#include <gtest/gtest.h>

#include <sys/resource.h>

#include <array>
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace faultline::harness {
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
}  // namespace faultline::harness
