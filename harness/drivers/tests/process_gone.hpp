// Test helper shared by the driver tests and the CLI's interrupt tests: whether a process that is
// not this one's child (a daemon the client left, reparented to faultline) has gone.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cerrno>
#include <chrono>
#include <thread>

namespace faultline::test_support {

// Whether `pid` is gone (not even a zombie) within `limit`. Someone else reaps it, so there is
// nothing to wait on but its disappearance: polled every 5 ms. Kills it at the end when it is not
// gone, so a failing test leaves nothing behind.
inline bool ends_within(pid_t pid, std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    do {
        if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds{5});
    } while (std::chrono::steady_clock::now() < deadline);
    ::kill(pid, SIGKILL);
    return false;
}

}  // namespace faultline::test_support
