#include "faultline/drivers/command_driver.hpp"
#include "process_gone.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

namespace faultline::drivers {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

// Generous: these bound a hung test, they are not timing assertions.
constexpr auto long_limit = 20s;

driver_context context(duration limit = long_limit) {
    clock& clk = steady_clock_source::instance();
    return driver_context{"127.0.0.1", 12345, "http://127.0.0.1:12345", 7, clk, clk.now(), limit};
}

driver_result run(std::vector<std::string> argv, command_options options = {}, duration limit = long_limit) {
    command_driver d{std::move(argv), options};
    return d.run(context(limit));
}

TEST(CommandDriver, KeepsExitStatusAndOutput) {
    const auto r = run({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"});
    EXPECT_TRUE(r.error.empty()) << r.error;
    EXPECT_FALSE(r.timed_out);
    EXPECT_TRUE(r.clients.empty());
    ASSERT_TRUE(r.command.has_value());
    EXPECT_EQ(r.command->exit_status, 3);
    EXPECT_EQ(r.command->stdout_text, "out\n");
    EXPECT_EQ(r.command->stderr_text, "err\n");
    EXPECT_FALSE(r.command->killed);
}

TEST(CommandDriver, SeesTheServerUrlInItsEnvironment) {
    const auto r = run({"/bin/sh", "-c", "echo \"$FAULTLINE_URL [$FAULTLINE_OP] [$FAULTLINE_CLIENT]\""});
    ASSERT_TRUE(r.command.has_value());
    EXPECT_EQ(r.command->exit_status, 0);
    // Run once: no operation variables.
    EXPECT_EQ(r.command->stdout_text, "http://127.0.0.1:12345 [] []\n");
}

TEST(CommandDriver, SubstitutesPlaceholdersInArguments) {
    const auto r = run({"/bin/echo", "{url}/payments/{op}", "c{client}", "{unknown}"});
    ASSERT_TRUE(r.command.has_value());
    EXPECT_EQ(r.command->stdout_text, "http://127.0.0.1:12345/payments/0 c0 {unknown}\n");
}

TEST(CommandDriver, KillsAHangingCommandAtTheTimeLimit) {
    command_options o;
    o.kill_grace = 100ms;
    const auto r = run({"/bin/sh", "-c", "echo started; sleep 1000"}, o, 200ms);
    EXPECT_TRUE(r.error.empty()) << r.error;
    EXPECT_TRUE(r.timed_out);
    ASSERT_TRUE(r.command.has_value());
    EXPECT_TRUE(r.command->killed);
    EXPECT_EQ(r.command->exit_status, 128 + SIGTERM);
    EXPECT_EQ(r.command->stdout_text, "started\n");
}

TEST(CommandDriver, KillsACommandThatIgnoresSigterm) {
    command_options o;
    o.kill_grace = 100ms;
    command_driver d{{"/bin/sh", "-c", "trap '' TERM; echo ready; while :; do sleep 1; done"}, o};
    const auto r = d.run(context(200ms));
    ASSERT_TRUE(r.command.has_value());
    EXPECT_TRUE(r.command->killed);
    EXPECT_EQ(r.command->exit_status, 128 + SIGKILL);
    EXPECT_EQ(d.last_stats().killed, 1u);
    EXPECT_EQ(d.last_stats().finished, 1u);
}

TEST(CommandDriver, PerOperationRunsEveryOperationWithBoundedConcurrency) {
    command_options o;
    o.mode = command_mode::per_operation;
    o.operations = 7;
    o.concurrency = 3;
    command_driver d{{"/bin/sh", "-c", "echo \"$FAULTLINE_OP $FAULTLINE_CLIENT {op} {client} {n}\""}, o};
    const auto r = d.run(context());
    EXPECT_TRUE(r.error.empty()) << r.error;
    ASSERT_TRUE(r.command.has_value());
    EXPECT_EQ(r.command->exit_status, 0);
    EXPECT_EQ(d.last_stats().started, 7u);
    EXPECT_EQ(d.last_stats().finished, 7u);
    EXPECT_GE(d.last_stats().peak_running, 1u);
    EXPECT_LE(d.last_stats().peak_running, 3u);

    std::set<std::string> lines;
    std::istringstream in{r.command->stdout_text};
    for (std::string line; std::getline(in, line);) lines.insert(line);
    std::set<std::string> expected;
    for (int op = 0; op < 7; ++op) {
        const int client = op % 3;
        const int n = op / 3;
        expected.insert(std::to_string(op) + " " + std::to_string(client) + " " + std::to_string(op) + " " +
                        std::to_string(client) + " " + std::to_string(n));
    }
    EXPECT_EQ(lines, expected);
}

// A control beside the client: its processes start interleaved with the client's, run besides the
// client's concurrency, and are numbered after the client's operations.
TEST(CommandDriver, AControlRunsInterleavedWithTheClientAndIsNumberedAfterIt) {
    command_options o;
    o.mode = command_mode::per_operation;
    o.operations = 3;
    o.concurrency = 3;
    o.control_argv = {"/bin/sh", "-c", "echo control {op}"};
    o.control_processes = 2;
    command_driver d{{"/bin/sh", "-c", "echo client {op}"}, o};
    const auto r = d.run(context());
    EXPECT_TRUE(r.error.empty()) << r.error;
    ASSERT_TRUE(r.command.has_value());
    EXPECT_EQ(d.last_stats().started, 5u);
    std::set<std::string> lines;
    std::istringstream in{r.command->stdout_text};
    for (std::string line; std::getline(in, line);) lines.insert(line);
    EXPECT_EQ(lines, (std::set<std::string>{"client 0", "client 1", "client 2", "control 3", "control 4"}));
    ASSERT_EQ(r.command->processes.size(), 5u);
    // Started in the order client 0, control 3, client 1, control 4, client 2.
    const auto started = [&](std::uint64_t op) {
        for (const record::process_record& p : r.command->processes) {
            if (p.op == op) return p.started_ns;
        }
        return std::int64_t{-1};
    };
    EXPECT_LT(started(0), started(3));
    EXPECT_LT(started(3), started(1));
    EXPECT_LT(started(1), started(4));
    EXPECT_LT(started(4), started(2));
}

TEST(CommandDriver, PerOperationReportsTheFirstFailureInOperationOrder) {
    command_options o;
    o.mode = command_mode::per_operation;
    o.operations = 4;
    o.concurrency = 2;
    const auto r = run({"/bin/sh", "-c", "exit $((10 + $FAULTLINE_OP % 2))"}, o);
    ASSERT_TRUE(r.command.has_value());
    EXPECT_EQ(r.command->exit_status, 10);
}

TEST(CommandDriver, RecordsEveryProcessOnTheRunClock) {
    command_options o;
    o.mode = command_mode::per_operation;
    o.operations = 3;
    o.concurrency = 2;
    const driver_context ctx = context();
    command_driver d{{"/bin/sh", "-c", "sleep 0.2; exit $((4 + $FAULTLINE_OP))"}, o};
    const auto r = d.run(ctx);
    const std::int64_t after_ns = (ctx.clk.now() - ctx.run_start).count();
    ASSERT_TRUE(r.command.has_value());
    EXPECT_EQ(r.command->exit_status, 4);
    ASSERT_EQ(r.command->processes.size(), 3u);
    std::set<std::int64_t> pids;
    for (std::uint64_t op = 0; op < 3; ++op) {
        const record::process_record& p = r.command->processes[op];
        EXPECT_EQ(p.op, op);
        EXPECT_GT(p.pid, 0);
        pids.insert(p.pid);
        EXPECT_GE(p.started_ns, 0);
        // The shell sleeps 200 ms before it exits, so its recorded life cannot be shorter.
        EXPECT_GE(p.finished_ns - p.started_ns, 200'000'000) << "op " << op;
        EXPECT_LE(p.finished_ns, after_ns);
        EXPECT_EQ(p.exit_status, 4 + static_cast<int>(op));
        EXPECT_EQ(p.signal, std::nullopt);
        EXPECT_FALSE(p.killed);
    }
    EXPECT_EQ(pids.size(), 3u);
    // Two lanes: the third process starts only after one of the first two has exited.
    const auto& ps = r.command->processes;
    EXPECT_GE(ps[2].started_ns, std::min(ps[0].finished_ns, ps[1].finished_ns));
}

TEST(CommandDriver, RecordsTheSignalOfAProcessKilledAtTheTimeLimit) {
    command_options o;
    o.kill_grace = 100ms;
    const auto r = run({"/bin/sh", "-c", "echo started; sleep 1000"}, o, 200ms);
    ASSERT_TRUE(r.command.has_value());
    ASSERT_EQ(r.command->processes.size(), 1u);
    const record::process_record& p = r.command->processes.front();
    EXPECT_EQ(p.op, 0u);
    EXPECT_TRUE(p.killed);
    EXPECT_EQ(p.signal, SIGTERM);
    EXPECT_EQ(p.exit_status, 128 + SIGTERM);
    EXPECT_GE(p.finished_ns, std::chrono::nanoseconds{200ms}.count());
}

TEST(CommandDriver, EachProcessGetsTheIdempotencyKeyOfItsOperation) {
    command_options o;
    o.mode = command_mode::per_operation;
    o.operations = 2;
    const auto r = run({"/bin/sh", "-c", "echo \"$FAULTLINE_OP $FAULTLINE_KEY {key}\""}, o);
    ASSERT_TRUE(r.command.has_value());
    const std::string key0{operation_key(7, 0).view()};
    const std::string key1{operation_key(7, 1).view()};
    EXPECT_EQ(r.command->stdout_text, "0 " + key0 + " " + key0 + "\n1 " + key1 + " " + key1 + "\n");
    // Run once, the process still has a key: operation 0's.
    const auto once = run({"/bin/sh", "-c", "echo \"$FAULTLINE_KEY\""});
    ASSERT_TRUE(once.command.has_value());
    EXPECT_EQ(once.command->stdout_text, key0 + "\n");
}

TEST(CommandDriver, KeepsItsDeclaredFacts) {
    record::declared_client declared;
    declared.deadline = 2s;
    declared.max_attempts = 3;
    const command_driver d{{"true"}, {}, declared};
    EXPECT_EQ(d.declared().deadline, declared.deadline);
    EXPECT_EQ(d.declared().max_attempts, 3u);
    EXPECT_TRUE(make_command_driver({"true"})->declared().empty());
}

TEST(CommandDriver, LargeOutputOnBothStreamsNeitherBlocksNorGrowsUnbounded) {
    command_options o;
    o.output_limit = 1000;
    const auto r = run({"/bin/sh", "-c",
                        "head -c 2000000 /dev/zero | tr '\\0' b >&2; head -c 2000000 /dev/zero | tr '\\0' a; echo done >&2"},
                       o);
    EXPECT_FALSE(r.timed_out);
    ASSERT_TRUE(r.command.has_value());
    EXPECT_EQ(r.command->exit_status, 0);
    EXPECT_EQ(r.command->stdout_text, std::string(1000, 'a') + "\n[faultline: 1999000 more bytes not kept]\n");
    EXPECT_EQ(r.command->stderr_text, std::string(1000, 'b') + "\n[faultline: 1999005 more bytes not kept]\n");
}

TEST(CommandDriver, AProcessLeftBehindDoesNotHoldTheRun) {
    // The background sleep keeps stdout open after the shell exits; the driver must not wait for it.
    const auto r = run({"/bin/sh", "-c", "sleep 1000 & echo started"});
    EXPECT_FALSE(r.timed_out);
    ASSERT_TRUE(r.command.has_value());
    EXPECT_EQ(r.command->exit_status, 0);
    EXPECT_EQ(r.command->stdout_text, "started\n");
    EXPECT_FALSE(r.command->killed);
}

// A file in the test's temporary folder, removed when the test ends.
class temp_file {
public:
    explicit temp_file(const std::string& name)
        : path_{(std::filesystem::temp_directory_path() / (name + "." + std::to_string(::getpid()))).string()} {
        std::filesystem::remove(path_);
    }
    ~temp_file() { std::filesystem::remove(path_); }
    temp_file(const temp_file&) = delete;
    temp_file& operator=(const temp_file&) = delete;

    const std::string& path() const { return path_; }
    // The pid written into it, once it has one; waits at most `limit`.
    std::optional<pid_t> read_pid(std::chrono::milliseconds limit) const {
        const auto deadline = std::chrono::steady_clock::now() + limit;
        do {
            std::ifstream in(path_);
            long pid = 0;
            if (in >> pid && pid > 0) return static_cast<pid_t>(pid);
            std::this_thread::sleep_for(5ms);
        } while (std::chrono::steady_clock::now() < deadline);
        return std::nullopt;
    }

private:
    std::string path_;
};

// A daemon: the client starts a process that calls setsid (a session and process group of its
// own, so signalling the client's group misses it), writes its pid and sleeps; the client exits as
// soon as the pid is written. Without faultline as subreaper the daemon is reparented to PID 1 and
// outlives the run.
TEST(CommandDriver, KillsADaemonTheClientLeftOutsideItsProcessGroup) {
    const temp_file pid_file{"faultline-daemon-pid"};
    command_driver d{{"/bin/sh", "-c",
                      "setsid /bin/sh -c 'echo $$ > \"$0\"; exec sleep 60' \"$0\" </dev/null >/dev/null 2>&1 &"
                      " until [ -s \"$0\" ]; do sleep 0.01; done",
                      pid_file.path()},
                     command_options{}};
    const auto r = d.run(context());
    EXPECT_TRUE(r.error.empty()) << r.error;
    ASSERT_TRUE(r.command.has_value());
    EXPECT_EQ(r.command->exit_status, 0);
    EXPECT_FALSE(r.timed_out);
    const std::optional<pid_t> daemon = pid_file.read_pid(5s);
    ASSERT_TRUE(daemon.has_value());
    EXPECT_TRUE(test_support::ends_within(*daemon, 5s)) << "the setsid daemon (pid " << *daemon << ") outlived the run";
    EXPECT_EQ(d.last_stats().orphans_killed, 1u);
}

// Ctrl-C: the running process tree gets SIGTERM at once (no waiting for the time limit), no further
// operation starts, and the result says it was interrupted.
TEST(CommandDriver, AnInterruptStopsTheRunningProcessTreesAndStartsNoMore) {
    const temp_file pid_file{"faultline-interrupted-pid"};
    command_options options;
    options.mode = command_mode::per_operation;
    options.operations = 5;
    command_driver d{{"/bin/sh", "-c", "sleep 60 & echo $! > \"$0\"; wait", pid_file.path()}, options};
    run_interrupt interrupt;
    driver_context ctx = context();
    ctx.interrupt = &interrupt;
    std::optional<pid_t> sleeper;
    std::thread presser{[&] {
        sleeper = pid_file.read_pid(long_limit);
        interrupt.request(SIGINT);
    }};
    const auto r = d.run(ctx);
    presser.join();
    EXPECT_TRUE(r.error.empty()) << r.error;
    EXPECT_FALSE(r.timed_out);
    ASSERT_TRUE(r.interrupted.has_value());
    EXPECT_EQ(r.interrupted->signal, SIGINT);
    EXPECT_EQ(r.interrupted->processes_stopped, 2u);  // the shell and its sleep
    EXPECT_LT(r.interrupted->at_ns, std::chrono::nanoseconds{long_limit}.count());
    ASSERT_TRUE(r.command.has_value());
    ASSERT_EQ(r.command->processes.size(), 1u);
    EXPECT_TRUE(r.command->processes[0].killed);
    EXPECT_EQ(r.command->processes[0].signal, SIGTERM);
    EXPECT_EQ(d.last_stats().started, 1u);
    ASSERT_TRUE(sleeper.has_value());
    EXPECT_TRUE(test_support::ends_within(*sleeper, 5s));
}

TEST(CommandDriver, AMissingProgramIsAHarnessError) {
    const auto r = run({"/nonexistent/faultline-client"});
    EXPECT_THAT(r.error, HasSubstr("cannot start \"/nonexistent/faultline-client\""));
}

TEST(CommandDriver, RejectsAnEmptyCommand) {
    EXPECT_THROW(command_driver({}, {}), std::invalid_argument);
    EXPECT_THROW(make_command_driver({""}), std::invalid_argument);
    EXPECT_EQ(make_command_driver({"true"})->name(), "command");
    EXPECT_EQ(to_string(command_mode::per_operation), "per_operation");
}

}  // namespace
}  // namespace faultline::drivers
