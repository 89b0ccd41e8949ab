#include "faultline/drivers/interrupt.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <system_error>

namespace faultline::drivers {

static_assert(std::atomic<int>::is_always_lock_free, "request() runs in a signal handler");

run_interrupt::run_interrupt() : fd_{::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)} {
    if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
}

run_interrupt::~run_interrupt() { ::close(fd_); }

void run_interrupt::request(int signal) noexcept {
    int none = 0;
    if (!signal_.compare_exchange_strong(none, signal, std::memory_order_acq_rel)) return;
    const std::uint64_t one = 1;
    // Cannot fail short of a bad descriptor: the counter is far from its maximum.
    [[maybe_unused]] const ssize_t written = ::write(fd_, &one, sizeof one);
}

}  // namespace faultline::drivers
