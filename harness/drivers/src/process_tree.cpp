#include "process_tree.hpp"

#include <dirent.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace faultline::drivers::detail {

namespace {

using namespace std::chrono_literals;

// A process that is not our child cannot be waited for, so its end is looked for this often.
constexpr auto exit_check_interval = 5ms;
// After SIGKILL a process ends as soon as the kernel gets to it; this only bounds a stuck one (D state).
constexpr auto kill_wait_limit = 2s;
// Rounds of SIGTERM/SIGKILL: each catches what the previous round's processes forked before dying.
constexpr int sweep_rounds = 4;

struct proc_stat {
    pid_t ppid = 0;
    char state = '?';
};

// /proc/<pid>/stat: "pid (comm) state ppid …"; comm may hold spaces and parentheses, so the fields
// are read after the last ')'.
std::optional<proc_stat> read_stat(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(in, line)) return std::nullopt;
    const std::size_t close = line.rfind(')');
    if (close == std::string::npos || close + 2 >= line.size()) return std::nullopt;
    proc_stat out;
    out.state = line[close + 2];
    out.ppid = static_cast<pid_t>(std::strtol(line.c_str() + close + 3, nullptr, 10));
    return out;
}

// Every process's parent, from /proc.
std::map<pid_t, proc_stat> all_processes() {
    std::map<pid_t, proc_stat> out;
    DIR* dir = ::opendir("/proc");
    if (dir == nullptr) return out;
    while (const dirent* entry = ::readdir(dir)) {
        char* end = nullptr;
        const long pid = std::strtol(entry->d_name, &end, 10);
        if (pid <= 0 || *end != '\0') continue;
        if (const auto stat = read_stat(static_cast<pid_t>(pid))) out.emplace(static_cast<pid_t>(pid), *stat);
    }
    ::closedir(dir);
    return out;
}

bool gone(pid_t pid) {
    const auto stat = read_stat(pid);
    return !stat || stat->state == 'Z' || stat->state == 'X';
}

// Reaps the orphans that are our children (those reparented to us) and have ended.
void reap_ended(const std::set<pid_t>& pids) {
    for (const pid_t pid : pids) {
        int status = 0;
        while (::waitpid(pid, &status, WNOHANG) < 0 && errno == EINTR) {
        }
    }
}

}  // namespace

client_processes& client_processes::instance() {
    static client_processes table;
    return table;
}

client_processes::client_processes() {
    // Orphaned descendants are reparented to the nearest subreaper ancestor instead of PID 1, so
    // they stay visible (and killable) below this process. Failing it (not Linux) leaves the process
    // group kill as the only cleanup.
    ::prctl(PR_SET_CHILD_SUBREAPER, 1L, 0L, 0L, 0L);
}

pid_t client_processes::spawn(const std::function<pid_t()>& spawn) {
    const std::lock_guard lock{mutex_};
    const pid_t pid = spawn();
    if (pid > 0) live_.insert(pid);
    return pid;
}

void client_processes::forget(pid_t pid) {
    const std::lock_guard lock{mutex_};
    live_.erase(pid);
}

std::set<pid_t> client_processes::orphans() const {
    const std::map<pid_t, proc_stat> processes = all_processes();
    std::multimap<pid_t, pid_t> children;
    for (const auto& [pid, stat] : processes) children.emplace(stat.ppid, pid);
    std::set<pid_t> out;
    std::vector<pid_t> pending{::getpid()};
    // Bounded: a pid is visited at most once (the ppid links form a tree).
    while (!pending.empty()) {
        const pid_t parent = pending.back();
        pending.pop_back();
        const auto [first, last] = children.equal_range(parent);
        for (auto it = first; it != last; ++it) {
            const pid_t pid = it->second;
            if (live_.contains(pid) || !out.insert(pid).second) continue;  // a live client's tree is its own
            pending.push_back(pid);
        }
    }
    return out;
}

std::uint64_t client_processes::tree_size(pid_t root) {
    const std::map<pid_t, proc_stat> processes = all_processes();
    if (!processes.contains(root)) return 0;
    std::multimap<pid_t, pid_t> children;
    for (const auto& [pid, stat] : processes) children.emplace(stat.ppid, pid);
    std::uint64_t size = 0;
    std::vector<pid_t> pending{root};
    // Bounded: the ppid links form a tree, so each process is counted once.
    while (!pending.empty()) {
        const pid_t parent = pending.back();
        pending.pop_back();
        ++size;
        const auto [first, last] = children.equal_range(parent);
        for (auto it = first; it != last; ++it) pending.push_back(it->second);
    }
    return size;
}

std::uint64_t client_processes::kill_orphans(std::chrono::milliseconds grace) {
    std::set<pid_t> signalled;
    for (int round = 0; round < sweep_rounds; ++round) {
        std::set<pid_t> found;
        {
            const std::lock_guard lock{mutex_};
            found = orphans();
        }
        reap_ended(found);
        std::set<pid_t> alive;
        for (const pid_t pid : found) {
            if (!gone(pid)) alive.insert(pid);
        }
        if (alive.empty()) break;
        // The first round asks politely; what survives the grace period, or was forked since, is killed.
        const bool first = round == 0;
        for (const pid_t pid : alive) {
            ::kill(pid, first ? SIGTERM : SIGKILL);
            signalled.insert(pid);
        }
        const auto deadline = std::chrono::steady_clock::now() + (first ? std::chrono::milliseconds{grace}
                                                                           : std::chrono::milliseconds{kill_wait_limit});
        while (std::chrono::steady_clock::now() < deadline) {
            reap_ended(alive);
            bool all_gone = true;
            for (const pid_t pid : alive) all_gone = all_gone && gone(pid);
            if (all_gone) break;
            std::this_thread::sleep_for(exit_check_interval);
        }
        reap_ended(alive);
    }
    return signalled.size();
}

}  // namespace faultline::drivers::detail
