// The `faultline` binary as a child process for the CLI tests: argv, stdout and stderr on pipes, exit
// code; killed (by its PID) if a test ends while it still runs.
#pragma once

#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace faultline::cli::testing {

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
        // Only fds 1 and 2 hold the pipes' write ends in the child, so its closing stdout is an EOF here.
        posix_spawn_file_actions_addclose(&actions, out[1]);
        posix_spawn_file_actions_addclose(&actions, err[1]);
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
    pid_t pid() const { return pid_; }

    // One line of stdout, waiting at most `timeout` for it.
    std::string read_line(std::chrono::milliseconds timeout) { return read_line_of(out_, buffered_, timeout); }
    // One line of stderr, waiting at most `timeout` for it (finish() still returns the rest).
    std::string read_err_line(std::chrono::milliseconds timeout) {
        return read_line_of(err_, buffered_err_, timeout);
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

    // Reads stdout and stderr to their end (so a chatty child never blocks on a full pipe), then
    // waits for the exit.
    struct result {
        int code = -1;
        std::string out;
        std::string err;
    };
    result finish() {
        result r;
        r.out = std::move(buffered_);
        r.err = std::move(buffered_err_);
        pollfd fds[2] = {{out_, POLLIN, 0}, {err_, POLLIN, 0}};
        std::array<char, 4096> chunk{};
        // Each round reads at least one byte or closes one pipe; the child's own run is bounded.
        while (fds[0].fd >= 0 || fds[1].fd >= 0) {
            if (::poll(fds, 2, -1) < 0) break;
            for (int i = 0; i < 2; ++i) {
                if (fds[i].fd < 0 || fds[i].revents == 0) continue;
                const auto n = ::read(fds[i].fd, chunk.data(), chunk.size());
                if (n <= 0) {
                    fds[i].fd = -1;
                    continue;
                }
                (i == 0 ? r.out : r.err).append(chunk.data(), static_cast<std::size_t>(n));
            }
        }
        r.code = wait();
        return r;
    }

    // The exit code, or -1 if it did not exit normally.
    int wait() {
        int status = 0;
        if (::waitpid(pid_, &status, 0) != pid_) return -1;
        reaped_ = true;
        if (WIFSIGNALED(status)) signal_ = WTERMSIG(status);
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    // The signal that ended it (after wait or finish), 0 when it exited.
    int end_signal() const { return signal_; }

private:
    static std::string read_line_of(int fd, std::string& buffered, std::chrono::milliseconds timeout) {
        // Each round either reads at least one byte or ends, and a round waits at most `timeout`.
        for (std::size_t round = 0; round < 4096; ++round) {
            if (const auto nl = buffered.find('\n'); nl != std::string::npos) {
                std::string line = buffered.substr(0, nl);
                buffered.erase(0, nl + 1);
                return line;
            }
            pollfd p{fd, POLLIN, 0};
            if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return {};
            std::array<char, 256> chunk{};
            const auto n = ::read(fd, chunk.data(), chunk.size());
            if (n <= 0) return {};
            buffered.append(chunk.data(), static_cast<std::size_t>(n));
        }
        return {};
    }

    pid_t pid_ = -1;
    int out_ = -1;
    int err_ = -1;
    bool reaped_ = false;
    int signal_ = 0;
    std::string buffered_;
    std::string buffered_err_;
};

// The contents of `path` once it exists (a server's --ready-file, renamed into place whole), or ""
// when it did not appear within `limit`. Each look follows a file event in its directory (inotify),
// or at most 100 ms, so the wait needs no sleep and stays bounded.
inline std::string wait_for_file(const fs::path& path, std::chrono::milliseconds limit = std::chrono::seconds{10}) {
    const int watch = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (watch < 0) return {};
    ::inotify_add_watch(watch, path.parent_path().c_str(), IN_MOVED_TO | IN_CLOSE_WRITE | IN_CREATE);
    const auto deadline = std::chrono::steady_clock::now() + limit;
    std::string contents;
    while (std::chrono::steady_clock::now() < deadline) {
        if (std::ifstream in{path}; in) {
            contents.assign(std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{});
            break;
        }
        pollfd p{watch, POLLIN, 0};
        if (::poll(&p, 1, 100) > 0) {
            std::array<char, 4096> drained{};
            while (::read(watch, drained.data(), drained.size()) > 0) {
            }
        }
    }
    ::close(watch);
    return contents;
}

// `faultline ARGS...` run to its end: exit code, stdout, stderr.
inline child::result run_faultline(std::vector<std::string> args) {
    args.insert(args.begin(), FAULTLINE_BINARY);
    child proc{std::move(args)};
    return proc.finish();
}

// A file's whole contents ("" when it cannot be read).
inline std::string read_file(const fs::path& path) {
    std::ifstream in{path, std::ios::binary};
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// A path in the temp directory unique to this test process.
inline fs::path temp_file(const std::string& name) {
    return fs::temp_directory_path() / ("faultline_cli_" + std::to_string(::getpid()) + "_" + name);
}

}  // namespace faultline::cli::testing
