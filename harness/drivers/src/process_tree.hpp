// What a client command leaves behind (internal to harness/drivers): a process that double-forks
// and calls setsid(2) leaves its process group, so signalling the group misses it, and it would be
// reparented to PID 1 and outlive the run. `client_processes` makes this process a child
// subreaper (prctl PR_SET_CHILD_SUBREAPER), so such orphans are reparented to it instead, and keeps
// the table of the client processes the drivers started and still run. An orphan is then any
// descendant of this process outside the tree of every live client process; `kill_orphans` finds
// them by walking /proc/*/stat (ppid chains), sends SIGTERM, SIGKILL after the grace period, and
// reaps them.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>

namespace faultline::drivers::detail {

// One per process (every command driver shares it, so concurrent scenarios never mistake each
// other's live clients for orphans). Thread-safe.
class client_processes {
public:
    // The first call makes this process a child subreaper.
    static client_processes& instance();

    // Runs `spawn` (it returns the new process's pid, or -1) and records the pid as a live client,
    // with no sweep in between: a process spawned but not yet recorded would look like an orphan.
    pid_t spawn(const std::function<pid_t()>& spawn);
    // The client process was reaped: what it leaves behind is orphaned from now on.
    void forget(pid_t pid);
    // Kills and reaps every orphan (see above): SIGTERM, SIGKILL to those alive after `grace`,
    // repeated for what they forked meanwhile. Returns how many processes it signalled.
    std::uint64_t kill_orphans(std::chrono::milliseconds grace);
    // How many processes make up the tree rooted at `root`, itself included (0 when it is gone).
    static std::uint64_t tree_size(pid_t root);

private:
    client_processes();
    std::set<pid_t> orphans() const;  // under mutex_

    mutable std::mutex mutex_;
    std::set<pid_t> live_;
};

}  // namespace faultline::drivers::detail
