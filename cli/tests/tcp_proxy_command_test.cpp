// `faultline proxy --mode tcp` as a process: HTTP through it as plain bytes (the test client and, when
// installed, curl) to the built-in server in this process, the per-connection journal it leaves,
// `faultline check` refusing that journal plainly, --wait-upstream, and the exit codes 0 (SIGTERM,
// SIGINT), 2 (bad toxics, a flag of the other mode, an unopenable journal) and 3 (an unreachable
// upstream).
#include "child_process.hpp"
#include "server_fixture.hpp"
#include "test_client.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <functional>
#include <memory>
#include <fstream>
#include <string>
#include <vector>

namespace faultline::cli::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

std::uint16_t unused_port() {
    boost::asio::io_context io;
    boost::asio::ip::tcp::acceptor acceptor{io, {boost::asio::ip::make_address("127.0.0.1"), 0}};
    const auto port = acceptor.local_endpoint().port();
    acceptor.close();
    return port;
}

// "faultline proxy on tcp://127.0.0.1:PORT -> …": the port.
std::uint16_t listening_port(child& proc) {
    const std::string line = proc.read_line(5s);
    const std::string prefix = "faultline proxy on tcp://127.0.0.1:";
    if (line.rfind(prefix, 0) != 0) return 0;
    return static_cast<std::uint16_t>(std::stoi(line.substr(prefix.size())));
}

std::vector<boost::json::object> journal_lines(const fs::path& path) {
    std::vector<boost::json::object> out;
    std::ifstream in{path};
    std::string line;
    while (std::getline(in, line)) out.push_back(boost::json::parse(line).as_object());
    return out;
}

TEST(tcp_proxy_command, forwards_http_as_bytes_journals_each_connection_and_check_refuses_the_journal) {
    server::testing::test_server service{""};
    const fs::path toxics = temp_file("tcp-toxics.toml");
    const fs::path journal = temp_file("tcp.jsonl");
    const fs::path expect = temp_file("tcp-expect.toml");
    std::ofstream{toxics} << "[[toxic]]\nkind = \"latency\"\nlatency = \"20ms\"\n"
                             "[[toxic]]\nname = \"every-second\"\nkind = \"refused\"\nevery = 2\n";
    std::ofstream{expect} << "[[expect]]\ncheck = \"no_double_effects\"\n";
    child proxy{{FAULTLINE_BINARY, "proxy", "--mode", "tcp", "--upstream",
                 "127.0.0.1:" + std::to_string(service.port()), "--rules", toxics.string(), "--journal",
                 journal.string(), "--seed", "3", "--instance", "edge"}};
    const auto port = listening_port(proxy);
    ASSERT_NE(port, 0);

    const auto first = server::testing::exchange(port, server::testing::make_request("POST", "/payments", R"({"amount":5})"));
    ASSERT_TRUE(first.parsed()) << first.read_error.message();
    EXPECT_EQ(first.parsed()->result_int(), 201);
    EXPECT_TRUE(server::testing::exchange(port, server::testing::make_request("GET", "/payments/ch_1")).was_reset());  // connection 2: refused
    std::size_t connections = 2;
    if (fs::exists("/usr/bin/curl")) {
        child curl{{"/usr/bin/curl", "-s", "--max-time", "5", "-o", "/dev/null", "-w", "%{http_code}",
                    "http://127.0.0.1:" + std::to_string(port) + "/payments/ch_1"}};
        const auto fetched = curl.finish();
        EXPECT_EQ(fetched.code, 0) << fetched.err;
        EXPECT_EQ(fetched.out, "200");  // the charge connection 1 made, read through the byte pipe
        ++connections;
    }
    EXPECT_EQ(service.context().model.charge_count(), 1U);

    proxy.signal(SIGTERM);
    const auto stopped = proxy.finish();
    EXPECT_EQ(stopped.code, 0) << stopped.err;
    EXPECT_NE(stopped.err.find("after " + std::to_string(connections) + " connections"), std::string::npos)
        << stopped.err;

    auto lines = journal_lines(journal);
    ASSERT_EQ(lines.size(), connections + 1);
    // A connection's line is written when it ends, so the file is in end order, not accept order.
    std::sort(lines.begin() + 1, lines.end(),
              [](const auto& a, const auto& b) { return a.at("conn").as_int64() < b.at("conn").as_int64(); });
    EXPECT_EQ(lines[0].at("event").as_string(), "started");  // the wall-clock anchor
    EXPECT_EQ(lines[0].at("peer").as_string(), "edge");
    EXPECT_EQ(lines[1].at("type").as_string(), "tcp_connection");
    EXPECT_EQ(lines[1].at("conn").as_int64(), 1);
    EXPECT_EQ(lines[1].at("outcome").as_string(), "closed");
    EXPECT_GT(lines[1].at("bytes_up").as_int64(), 0);
    EXPECT_GT(lines[1].at("bytes_down").as_int64(), 0);
    EXPECT_EQ(lines[1].at("instance").as_string(), "edge");
    EXPECT_EQ(lines[2].at("outcome").as_string(), "refused");
    EXPECT_EQ(lines[2].at("ended_by").as_string(), "every-second");

    child check{{FAULTLINE_BINARY, "check", journal.string(), "--expect", expect.string()}};
    const auto judged = check.finish();
    EXPECT_EQ(judged.code, 2) << judged.out << judged.err;
    EXPECT_NE(judged.err.find("a TCP-mode journal"), std::string::npos) << judged.err;
    for (const auto& p : {toxics, journal, expect}) fs::remove(p);
}

TEST(tcp_proxy_command, exit_codes_for_bad_toxics_a_flag_of_the_other_mode_a_bad_journal_and_an_unreachable_upstream) {
    server::testing::test_server service{""};
    const std::string up = "127.0.0.1:" + std::to_string(service.port());
    const fs::path toxics = temp_file("tcp-bad-toxics.toml");
    std::ofstream{toxics} << "[[toxic]]\nkind = \"bandwidth\"\nrate = 0\n";
    child bad{{FAULTLINE_BINARY, "proxy", "--mode", "tcp", "--upstream", up, "--rules", toxics.string()}};
    const auto r1 = bad.finish();
    EXPECT_EQ(r1.code, 2);
    EXPECT_NE(r1.err.find(toxics.string() + ":3:8: [[toxic]] \"bandwidth-1\": rate: must be in"), std::string::npos)
        << r1.err;

    child http_flag{{FAULTLINE_BINARY, "proxy", "--mode", "tcp", "--upstream", up, "--upstream-timeout", "5s"}};
    const auto r2 = http_flag.finish();
    EXPECT_EQ(r2.code, 2);
    EXPECT_NE(r2.err.find("--upstream-timeout is for --mode http only"), std::string::npos) << r2.err;
    child tcp_flag{{FAULTLINE_BINARY, "proxy", "--upstream", up, "--max-connections", "5"}};
    const auto r5 = tcp_flag.finish();
    EXPECT_EQ(r5.code, 2);
    EXPECT_NE(r5.err.find("--max-connections is for --mode tcp only"), std::string::npos) << r5.err;
    child bad_mode{{FAULTLINE_BINARY, "proxy", "--mode", "udp", "--upstream", up}};
    EXPECT_EQ(bad_mode.finish().code, 2);

    child no_journal{{FAULTLINE_BINARY, "proxy", "--mode", "tcp", "--upstream", up, "--journal",
                      "/nonexistent-faultline-dir/tcp.jsonl"}};
    const auto r4 = no_journal.finish();
    EXPECT_EQ(r4.code, 2);
    EXPECT_NE(r4.err.find("cannot open the journal file"), std::string::npos) << r4.err;

    child unreachable{{FAULTLINE_BINARY, "proxy", "--mode", "tcp", "--upstream",
                       "127.0.0.1:" + std::to_string(unused_port())}};
    const auto r3 = unreachable.finish();
    EXPECT_EQ(r3.code, 3);
    EXPECT_NE(r3.err.find("not reachable"), std::string::npos) << r3.err;
    fs::remove(toxics);
}

// A service bound but not yet listening refuses connections: the proxy waits for it, then forwards.
TEST(tcp_proxy_command, wait_upstream_waits_for_the_service_to_listen_then_forwards_and_sigint_is_exit_0) {
    namespace asio = boost::asio;
    using asio::ip::tcp;
    asio::io_context io;
    tcp::acceptor service{io};
    service.open(tcp::v4());
    service.bind({asio::ip::make_address("127.0.0.1"), 0});
    child proxy{{FAULTLINE_BINARY, "proxy", "--mode", "tcp", "--wait-upstream", "--upstream",
                 "127.0.0.1:" + std::to_string(service.local_endpoint().port())}};
    EXPECT_NE(proxy.read_err_line(5s).find("waiting for the upstream"), std::string::npos);
    service.listen();
    const auto port = listening_port(proxy);
    ASSERT_NE(port, 0);

    // The proxy's reachability probe is accepted too; the forwarded connection is the one with data.
    std::string received;
    std::vector<std::shared_ptr<tcp::socket>> accepted;
    std::array<char, 16> buffer{};
    std::function<void()> do_accept = [&] {
        service.async_accept([&](boost::system::error_code ec, tcp::socket s) {
            if (ec) return;
            accepted.push_back(std::make_shared<tcp::socket>(std::move(s)));
            accepted.back()->async_read_some(asio::buffer(buffer), [&](boost::system::error_code read_ec, std::size_t n) {
                if (!read_ec) {
                    received.assign(buffer.data(), n);
                    io.stop();
                }
            });
            do_accept();
        });
    };
    do_accept();
    tcp::socket client{io};
    client.async_connect({asio::ip::make_address("127.0.0.1"), port}, [&](boost::system::error_code ec) {
        if (!ec) asio::async_write(client, asio::buffer("hi", 2), [](boost::system::error_code, std::size_t) {});
    });
    io.run_for(5s);
    EXPECT_EQ(received, "hi");

    proxy.signal(SIGINT);
    const auto stopped = proxy.finish();
    EXPECT_EQ(stopped.code, 0) << stopped.err;
    EXPECT_NE(stopped.err.find("stopped by signal 2"), std::string::npos) << stopped.err;
}

TEST(tcp_proxy_command, list_toxics_names_every_registered_toxic) {
    child proc{{FAULTLINE_BINARY, "list", "toxics"}};
    const auto listed = proc.finish();
    EXPECT_EQ(listed.code, 0);
    const std::string lines = "\n" + listed.out;  // every name starts a line
    for (const char* name : {"bandwidth", "latency", "limit_data", "refused", "reset_peer", "slicer", "timeout"}) {
        EXPECT_NE(lines.find(std::string{"\n"} + name + " "), std::string::npos) << name << " in\n" << listed.out;
    }
}

}  // namespace
}  // namespace faultline::cli::testing
