#include "stop_signals.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <string_view>

namespace faultline::cli {

namespace {

std::atomic<drivers::run_interrupt*> target{nullptr};

void set_disposition(void (*handler)(int)) {
    struct sigaction action {};
    action.sa_handler = handler;
    ::sigemptyset(&action.sa_mask);
    // Interrupted system calls resume: the drivers wake through the interrupt's descriptor instead.
    action.sa_flags = SA_RESTART;
    for (const int s : {SIGINT, SIGTERM}) ::sigaction(s, &action, nullptr);
}

// Async-signal-safe throughout: an atomic load, the interrupt's request, sigaction, write.
extern "C" void on_stop_signal(int signal) {
    const int saved_errno = errno;
    if (drivers::run_interrupt* interrupt = target.load()) interrupt->request(signal);
    set_disposition(SIG_DFL);
    constexpr std::string_view on_int =
        "\nfaultline: SIGINT: stopping the clients, then judging and reporting what ran (Ctrl-C again to kill "
        "at once)\n";
    constexpr std::string_view on_term =
        "\nfaultline: SIGTERM: stopping the clients, then judging and reporting what ran\n";
    const std::string_view message = signal == SIGINT ? on_int : on_term;
    [[maybe_unused]] const ssize_t written = ::write(STDERR_FILENO, message.data(), message.size());
    errno = saved_errno;
}

}  // namespace

stop_signals::stop_signals(drivers::run_interrupt& interrupt) {
    target.store(&interrupt);
    set_disposition(&on_stop_signal);
}

stop_signals::~stop_signals() {
    set_disposition(SIG_DFL);
    target.store(nullptr);
}

}  // namespace faultline::cli
