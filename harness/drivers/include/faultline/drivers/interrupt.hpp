// A request to stop the clients now, from a signal handler: `faultline run` turns its first SIGINT
// or SIGTERM into one, every driver of every scenario running at that moment stops its client the
// way the time limit does (a command's process trees get SIGTERM, then SIGKILL after the grace
// period; the builtin clients are cancelled), and the runner records the run as interrupted and
// starts no further scenario.
//
// Waking the drivers goes through an eventfd that becomes readable, and stays readable, once a stop
// is requested: the command driver polls it beside its pipes, the builtin driver waits on it in its
// io_context. So nothing polls a flag on a timer.
#pragma once

#include <atomic>

namespace faultline::drivers {

// Owned by whoever installs the signal handler (the CLI), outliving every run it is passed to.
// Thread-safe; `request` is async-signal-safe.
class run_interrupt {
public:
    // Throws std::system_error when no eventfd can be created.
    run_interrupt();
    ~run_interrupt();
    run_interrupt(const run_interrupt&) = delete;
    run_interrupt& operator=(const run_interrupt&) = delete;

    // Records `signal` (the first request wins; later ones change nothing) and wakes every waiter.
    // Async-signal-safe: an atomic exchange and a write(2).
    void request(int signal) noexcept;
    bool requested() const noexcept { return signal_.load(std::memory_order_acquire) != 0; }
    int signal() const noexcept { return signal_.load(std::memory_order_acquire); }  // 0: none yet
    // Readable once a stop was requested. Never read from, so it stays readable.
    int fd() const noexcept { return fd_; }

private:
    std::atomic<int> signal_{0};
    int fd_ = -1;
};

}  // namespace faultline::drivers
