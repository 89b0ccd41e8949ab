// Ctrl-C and SIGTERM on `faultline run`, as a user sends them: the real binary, a real command
// client with a process in its group and a setsid daemon, the signal sent once the client runs.
// The run stops the client's whole tree, judges and reports what ran marked interrupted, and exits
// 130 / 143; a second Ctrl-C ends faultline at once.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <boost/json/parse.hpp>

#include "child_process.hpp"
#include "process_gone.hpp"

namespace faultline::cli::testing {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

// Bounds a hung test; not a timing assertion.
constexpr auto patience = 20s;

void write_file(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// The pids written into `path`, one a line, once there are `count` of them.
std::vector<pid_t> wait_for_pids(const fs::path& path, std::size_t count) {
    const auto deadline = std::chrono::steady_clock::now() + patience;
    do {
        std::ifstream in(path);
        std::vector<pid_t> pids;
        long pid = 0;
        while (in >> pid) pids.push_back(static_cast<pid_t>(pid));
        if (pids.size() >= count) return pids;
        std::this_thread::sleep_for(5ms);
    } while (std::chrono::steady_clock::now() < deadline);
    return {};
}

// A client that starts `sleep` in its own group and a setsid daemon, writes both pids and waits.
std::string scenario(const fs::path& pids, const std::string& extra_client_keys = "") {
    const std::string script = "sleep 60 & echo $! >> " + pids.string() + "; setsid sh -c 'echo $$ >> " +
                               pids.string() + "; exec sleep 60' </dev/null >/dev/null 2>&1 & wait";
    return "name = \"held\"\ntime_limit = \"60s\"\n\n[client]\ndriver = \"command\"\ncommand = [\"/bin/sh\", \"-c\", \"" +
           script + "\"]\n" + extra_client_keys + "\n[[expect]]\ncheck = \"no_double_effects\"\n";
}

// Reads stderr lines until one mentions `what` (the handler's line); "" when none came.
std::string err_line_with(child& proc, std::string_view what) {
    for (int line = 0; line < 16; ++line) {
        const std::string text = proc.read_err_line(std::chrono::duration_cast<std::chrono::milliseconds>(patience));
        if (text.find(what) != std::string::npos) return text;
    }
    return "";
}

void expect_interrupted_run(int signal, int code, const std::string& name) {
    const fs::path pids = temp_file(name + ".pids");
    const fs::path file = temp_file(name + ".toml");
    const fs::path report = temp_file(name + ".json");
    fs::remove(pids);
    write_file(file, scenario(pids));
    child proc{{FAULTLINE_BINARY, "run", file.string(), "--report", "json:" + report.string()}};
    ASSERT_TRUE(proc.started());
    const std::vector<pid_t> clients = wait_for_pids(pids, 2);
    ASSERT_EQ(clients.size(), 2u) << "the client never started";
    proc.signal(signal);
    const auto r = proc.finish();

    EXPECT_EQ(r.code, code) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("interrupted by " + std::string(signal == SIGINT ? "SIGINT" : "SIGTERM") + " after "));
    // The client's shell, the sleep in its group and the daemon in a session of its own.
    EXPECT_THAT(r.out, HasSubstr(" s: stopped 3 client processes"));
    EXPECT_THAT(r.out, HasSubstr("1 of 1 scenario(s) ran, 0 not started"));
    // Judged on what ran: nothing reached the server, so no check passes.
    EXPECT_THAT(r.out, HasSubstr("? no_double_effects: no committed effect: nothing to judge"));
    const boost::json::value doc = boost::json::parse(read_file(report));
    const auto& run = doc.at("scenarios").at(0);
    EXPECT_TRUE(run.at("interrupted").as_bool());
    EXPECT_EQ(run.at("interruption").at("signal").as_string(), signal == SIGINT ? "SIGINT" : "SIGTERM");
    // The client's own process, the sleep in its group and the setsid daemon are all gone.
    for (const pid_t pid : clients) EXPECT_TRUE(test_support::ends_within(pid, 5s)) << "pid " << pid << " outlived the run";
    fs::remove(pids);
    fs::remove(file);
    fs::remove(report);
}

TEST(run_interrupted, sigint_stops_the_client_trees_reports_what_ran_and_exits_130) {
    expect_interrupted_run(SIGINT, 130, "sigint");
}

TEST(run_interrupted, sigterm_does_the_same_and_exits_143) { expect_interrupted_run(SIGTERM, 143, "sigterm"); }

TEST(run_interrupted, a_second_ctrl_c_kills_faultline_at_once) {
    const fs::path pids = temp_file("twice.pids");
    const fs::path file = temp_file("twice.toml");
    fs::remove(pids);
    // The client ignores SIGTERM and the grace period is long, so the first Ctrl-C leaves faultline
    // waiting to send SIGKILL.
    std::string text = scenario(pids, "kill_grace = \"60s\"\n");
    text.replace(text.find("sleep 60 &"), 10, "trap '' TERM; sleep 60 &");
    write_file(file, text);
    child proc{{FAULTLINE_BINARY, "run", file.string()}};
    ASSERT_TRUE(proc.started());
    const std::vector<pid_t> clients = wait_for_pids(pids, 2);
    ASSERT_EQ(clients.size(), 2u);
    proc.signal(SIGINT);
    EXPECT_THAT(err_line_with(proc, "SIGINT"), HasSubstr("Ctrl-C again to kill at once"));
    proc.signal(SIGINT);
    const auto r = proc.finish();
    EXPECT_EQ(r.code, -1) << r.out << r.err;
    EXPECT_EQ(proc.end_signal(), SIGINT);
    for (const pid_t pid : clients) ::kill(pid, SIGKILL);
    fs::remove(pids);
    fs::remove(file);
}

}  // namespace
}  // namespace faultline::cli::testing
