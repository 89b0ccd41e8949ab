// Replaces the global operator new for retry_bench, counting allocations so the benchmark can
// report allocations per call. In its own translation unit so the compiler cannot pair the malloc
// here with a sized delete elsewhere and warn.
#include <atomic>
#include <cstdlib>
#include <new>

namespace faultline::bench {
std::atomic<long> allocations{0};
}  // namespace faultline::bench

void* operator new(std::size_t size) {
    faultline::bench::allocations.fetch_add(1, std::memory_order_relaxed);
    if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
    throw std::bad_alloc{};
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
