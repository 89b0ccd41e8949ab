// `faultline serve` as a real process: it prints its URL, serves, answers the control API, stops on
// SIGTERM with exit 0 and leaves the journal file behind; a bad rules file exits 2 with positions.
#include "test_client.hpp"

#include "faultline/record/journal_json.hpp"

#include <gtest/gtest.h>

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

extern char** environ;

namespace faultline::harness::testing {
namespace {

namespace fs = std::filesystem;

// A child process with its stdout and stderr on pipes.
class child {
public:
    explicit child(std::vector<std::string> args) {
        int out[2];
        int err[2];
        if (::pipe(out) != 0 || ::pipe(err) != 0) return;
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
        posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
        posix_spawn_file_actions_addclose(&actions, out[0]);
        posix_spawn_file_actions_addclose(&actions, err[0]);
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        if (posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid_ = -1;
        posix_spawn_file_actions_destroy(&actions);
        ::close(out[1]);
        ::close(err[1]);
        out_ = out[0];
        err_ = err[0];
    }
    ~child() {
        if (pid_ > 0 && !reaped_) {
            ::kill(pid_, SIGKILL);
            wait();
        }
        if (out_ >= 0) ::close(out_);
        if (err_ >= 0) ::close(err_);
    }
    child(const child&) = delete;
    child& operator=(const child&) = delete;

    bool started() const { return pid_ > 0; }

    // One line of stdout, waiting at most `timeout` for it.
    std::string read_line(std::chrono::milliseconds timeout) {
        // Each round either reads at least one byte or ends, and a round waits at most `timeout`.
        for (std::size_t round = 0; round < 4096; ++round) {
            if (const auto nl = buffered_.find('\n'); nl != std::string::npos) {
                std::string line = buffered_.substr(0, nl);
                buffered_.erase(0, nl + 1);
                return line;
            }
            pollfd p{out_, POLLIN, 0};
            if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return {};
            std::array<char, 256> chunk{};
            const auto n = ::read(out_, chunk.data(), chunk.size());
            if (n <= 0) return {};
            buffered_.append(chunk.data(), static_cast<std::size_t>(n));
        }
        return {};
    }

    // All of stderr (the child has exited or closed it).
    std::string drain_stderr() {
        std::string all;
        std::array<char, 1024> chunk{};
        for (std::size_t round = 0; round < 1024; ++round) {
            const auto n = ::read(err_, chunk.data(), chunk.size());
            if (n <= 0) break;
            all.append(chunk.data(), static_cast<std::size_t>(n));
        }
        return all;
    }

    void signal(int sig) { ::kill(pid_, sig); }

    // The exit code, or -1 if it did not exit normally.
    int wait() {
        int status = 0;
        if (::waitpid(pid_, &status, 0) != pid_) return -1;
        reaped_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }

private:
    pid_t pid_ = -1;
    int out_ = -1;
    int err_ = -1;
    bool reaped_ = false;
    std::string buffered_;
};

fs::path temp_file(const std::string& name) {
    return fs::temp_directory_path() / ("faultline_cli_" + std::to_string(::getpid()) + "_" + name);
}

TEST(serve_command, serves_until_sigterm_and_writes_the_journal) {
    const fs::path rules = temp_file("rules.toml");
    const fs::path journal = temp_file("journal.jsonl");
    std::ofstream{rules} << "[server]\nthreads = 2\n\n[[fault]]\nname = \"teapot\"\nkind = \"status\"\nstatus = 418\n"
                            "[fault.match]\npath = \"/tea\"\n";
    child proc{{FAULTLINE_BINARY, "serve", "--rules", rules.string(), "--seed", "99", "--journal", journal.string()}};
    ASSERT_TRUE(proc.started());

    const std::string line = proc.read_line(std::chrono::seconds{10});
    const std::string prefix = "faultline serving on http://127.0.0.1:";
    ASSERT_EQ(line.rfind(prefix, 0), 0U) << line;
    EXPECT_NE(line.find("(seed 99)"), std::string::npos) << line;
    const auto port = static_cast<std::uint16_t>(std::stoi(line.substr(prefix.size())));
    EXPECT_NE(proc.read_line(std::chrono::seconds{10}).find("/__faultline/"), std::string::npos);

    const auto health = exchange(port, make_request("GET", "/__faultline/health"));
    ASSERT_TRUE(health.parsed()) << health.bytes;
    EXPECT_EQ(health.parsed()->result_int(), 200);
    const auto tea = exchange(port, make_request("GET", "/tea"));
    ASSERT_TRUE(tea.parsed());
    EXPECT_EQ(tea.parsed()->result_int(), 418);

    proc.signal(SIGTERM);
    EXPECT_EQ(proc.wait(), 0) << proc.drain_stderr();

    const auto records = read_jsonl(journal.string());
    ASSERT_TRUE(records.ok());
    ASSERT_EQ(records.records.size(), 1U);  // control requests are not journaled
    EXPECT_EQ(records.records[0].status, 418);
    EXPECT_EQ(records.records[0].rule, "teapot");
    fs::remove(rules);
    fs::remove(journal);
}

TEST(serve_command, bad_rules_file_exits_2_with_every_error_positioned) {
    const fs::path rules = temp_file("bad.toml");
    std::ofstream{rules} << "[[fault]]\nkind = \"status\"\nstatus = 99\n\n[[fault]]\nkind = \"warp\"\n";
    child proc{{FAULTLINE_BINARY, "serve", "--rules", rules.string()}};
    ASSERT_TRUE(proc.started());
    EXPECT_EQ(proc.wait(), 2);
    const std::string err = proc.drain_stderr();
    EXPECT_NE(err.find(rules.string() + ":3:"), std::string::npos) << err;
    EXPECT_NE(err.find(rules.string() + ":6:"), std::string::npos) << err;
    fs::remove(rules);
}

TEST(serve_command, missing_rules_option_is_a_usage_error) {
    child proc{{FAULTLINE_BINARY, "serve"}};
    ASSERT_TRUE(proc.started());
    EXPECT_EQ(proc.wait(), 2);
}

}  // namespace
}  // namespace faultline::harness::testing
