// Machine-readable start-up (startup_files.hpp): the ready file's exact JSON and the environment
// lines (pure), then `faultline serve` as a real process writing --ready-file and --env-file once it
// listens (mode 0600, removed at exit), --print-env closing stdout after its lines, and --listen /
// --control-listen beyond loopback only when asked (and then never without a token).
#include "child_process.hpp"
#include "startup_files.hpp"
#include "test_client.hpp"

#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <fstream>
#include <string>

namespace faultline::cli::testing {
namespace {

namespace json = boost::json;

TEST(startup_files, ready_json_is_exact) {
    cli::ready_state state;
    state.pid = 41;
    state.seed = 7;
    state.url = "http://127.0.0.1:18100";
    state.port = 18100;
    state.control_url = "http://127.0.0.1:18101/__faultline/";
    state.control_port = 18101;
    state.token = "3f9c";
    EXPECT_EQ(cli::ready_json(state),
              R"({"pid":41,"seed":7,"url":"http://127.0.0.1:18100","port":18100,)"
              R"("control_url":"http://127.0.0.1:18101/__faultline/","control_port":18101,"token":"3f9c"})"
              "\n");
    state.token.reset();
    state.proxies = json::array{json::object{{"name", "default"}}};
    EXPECT_EQ(cli::ready_json(state),
              R"({"pid":41,"seed":7,"url":"http://127.0.0.1:18100","port":18100,)"
              R"("control_url":"http://127.0.0.1:18101/__faultline/","control_port":18101,"token":null,)"
              R"("proxies":[{"name":"default"}]})"
              "\n");
}

TEST(startup_files, environment_lines_quote_for_the_shell) {
    cli::ready_state state;
    state.pid = 41;
    state.url = "http://127.0.0.1:1";
    state.control_url = "http://127.0.0.1:2/__faultline/";
    state.token = "it's";
    EXPECT_EQ(cli::environment_lines(state),
              "export FAULTLINE_URL='http://127.0.0.1:1'\n"
              "export FAULTLINE_CONTROL_URL='http://127.0.0.1:2/__faultline/'\n"
              "export FAULTLINE_CONTROL_TOKEN='it'\\''s'\n"
              "export FAULTLINE_PID=41\n");
    state.token.reset();
    EXPECT_EQ(cli::environment_lines(state).find("TOKEN"), std::string::npos);
}

int control_status(std::uint16_t port, const std::string& token) {
    const auto reply = server::testing::exchange(port, server::testing::make_request("GET", "/__faultline/health", {},
                                                   {{"Authorization", "Bearer " + token}}));
    const auto res = reply.parsed();
    return res ? static_cast<int>(res->result_int()) : 0;
}

TEST(serve_startup, writes_the_ready_and_env_files_once_listening_and_removes_them_at_exit) {
    const fs::path ready = temp_file("serve_ready.json");
    const fs::path env = temp_file("serve.env");
    fs::remove(ready);
    fs::remove(env);
    child proc{{FAULTLINE_BINARY, "serve", "--rules", "", "--seed", "7", "--ready-file", ready.string(), "--env-file",
                env.string()}};
    ASSERT_TRUE(proc.started());
    const std::string text = wait_for_file(ready);
    ASSERT_FALSE(text.empty());
    const json::object doc = json::parse(text).as_object();
    EXPECT_EQ(doc.size(), 7U) << text;
    EXPECT_EQ(doc.at("pid").to_number<long>(), proc.pid());
    EXPECT_EQ(doc.at("seed").to_number<std::uint64_t>(), 7U);
    const auto port = doc.at("port").to_number<std::uint16_t>();
    const auto control_port = doc.at("control_port").to_number<std::uint16_t>();
    EXPECT_EQ(doc.at("url").as_string(), "http://127.0.0.1:" + std::to_string(port));
    EXPECT_EQ(doc.at("control_url").as_string(), "http://127.0.0.1:" + std::to_string(control_port) + "/__faultline/");
    const std::string token{doc.at("token").as_string()};
    EXPECT_EQ(token.size(), 32U);
    struct stat info{};
    ASSERT_EQ(::stat(ready.c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 0777U, 0600U);
    ASSERT_EQ(::stat(env.c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 0777U, 0600U);
    std::ifstream env_in{env};
    const std::string env_text{std::istreambuf_iterator<char>{env_in}, std::istreambuf_iterator<char>{}};
    EXPECT_EQ(env_text, "export FAULTLINE_URL='http://127.0.0.1:" + std::to_string(port) +
                            "'\nexport FAULTLINE_CONTROL_URL='http://127.0.0.1:" + std::to_string(control_port) +
                            "/__faultline/'\nexport FAULTLINE_CONTROL_TOKEN='" + token +
                            "'\nexport FAULTLINE_PID=" + std::to_string(proc.pid()) + "\n");
    // Listening already: the file is written after every port listens.
    EXPECT_EQ(control_status(control_port, token), 200);
    const auto reply = server::testing::exchange(port, server::testing::make_request("GET", "/kv/a"));
    EXPECT_TRUE(reply.parsed());

    proc.signal(SIGTERM);
    EXPECT_EQ(proc.finish().code, 0);
    EXPECT_FALSE(fs::exists(ready));
    EXPECT_FALSE(fs::exists(env));
}

TEST(serve_startup, print_env_writes_export_lines_then_closes_stdout) {
    child proc{{FAULTLINE_BINARY, "serve", "--rules", "", "--no-control-token", "--print-env"}};
    ASSERT_TRUE(proc.started());
    const std::string url = proc.read_line(std::chrono::seconds{10});
    ASSERT_EQ(url.rfind("export FAULTLINE_URL='http://127.0.0.1:", 0), 0U) << url;
    EXPECT_EQ(proc.read_line(std::chrono::seconds{10}).rfind("export FAULTLINE_CONTROL_URL='http://127.0.0.1:", 0), 0U);
    EXPECT_EQ(proc.read_line(std::chrono::seconds{10}), "export FAULTLINE_PID=" + std::to_string(proc.pid()));
    // The banner went to stderr, and stdout is at its end while the server runs: a command
    // substitution around a backgrounded serve returns here.
    EXPECT_EQ(proc.read_err_line(std::chrono::seconds{10}).rfind("faultline serving on http://127.0.0.1:", 0), 0U);
    EXPECT_EQ(proc.read_line(std::chrono::seconds{10}), "");
    const std::uint16_t port = static_cast<std::uint16_t>(std::stoi(url.substr(url.rfind(':') + 1)));
    EXPECT_TRUE(server::testing::exchange(port, server::testing::make_request("GET", "/kv/a")).parsed());
    proc.signal(SIGTERM);
    EXPECT_EQ(proc.finish().code, 0);
}

TEST(serve_startup, listens_beyond_loopback_only_when_asked) {
    {
        child proc{{FAULTLINE_BINARY, "serve", "--rules", "", "--listen", "0.0.0.0:0"}};
        const auto result = proc.finish();
        EXPECT_EQ(result.code, 2);
        EXPECT_NE(result.err.find("--listen '0.0.0.0:0' is not loopback: pass --allow-non-loopback"), std::string::npos)
            << result.err;
    }
    {
        child proc{{FAULTLINE_BINARY, "serve", "--rules", "", "--allow-non-loopback", "--control-listen", "0.0.0.0",
                    "--no-control-token"}};
        const auto result = proc.finish();
        EXPECT_EQ(result.code, 2);
        EXPECT_NE(result.err.find("the control API then needs a token"), std::string::npos) << result.err;
    }
    const fs::path ready = temp_file("serve_wide_ready.json");
    fs::remove(ready);
    child proc{{FAULTLINE_BINARY, "serve", "--rules", "", "--listen", "0.0.0.0:0", "--control-listen", "0.0.0.0",
                "--allow-non-loopback", "--ready-file", ready.string()}};
    const std::string text = wait_for_file(ready);
    ASSERT_FALSE(text.empty());
    const json::object doc = json::parse(text).as_object();
    const auto port = doc.at("port").to_number<std::uint16_t>();
    const auto control_port = doc.at("control_port").to_number<std::uint16_t>();
    // A wildcard address is reached here through loopback.
    EXPECT_EQ(doc.at("url").as_string(), "http://127.0.0.1:" + std::to_string(port));
    EXPECT_TRUE(server::testing::exchange(port, server::testing::make_request("GET", "/kv/a")).parsed());
    // A control port open to the network takes any Host (a container's name), with the token.
    const std::string token{doc.at("token").as_string()};
    const auto named = server::testing::exchange(control_port, "GET /__faultline/health HTTP/1.1\r\nHost: faultline:8081\r\n"
                                              "Authorization: Bearer " + token + "\r\nConnection: close\r\n\r\n");
    ASSERT_TRUE(named.parsed());
    EXPECT_EQ(named.parsed()->result_int(), 200U);
    const auto without = server::testing::exchange(control_port, "GET /__faultline/health HTTP/1.1\r\nHost: faultline:8081\r\n"
                                                "Connection: close\r\n\r\n");
    ASSERT_TRUE(without.parsed());
    EXPECT_EQ(without.parsed()->result_int(), 401U);
    proc.signal(SIGTERM);
    EXPECT_EQ(proc.finish().code, 0);
}

}  // namespace
}  // namespace faultline::cli::testing
