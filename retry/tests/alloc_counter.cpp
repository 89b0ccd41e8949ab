// Replaces the global operator new/delete for the test program. In its own translation unit so the
// compiler cannot pair the malloc here with a sized delete elsewhere and warn.
#include "alloc_counter.hpp"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<long> allocations{0};
}  // namespace

void* operator new(std::size_t size) {
    allocations.fetch_add(1, std::memory_order_relaxed);
    if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
    throw std::bad_alloc{};
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace faultline::retry::testing {

long allocation_count() { return allocations.load(std::memory_order_relaxed); }

}  // namespace faultline::retry::testing
