// Replaces the global operator new for journal_check_bench, keeping the live and peak heap bytes
// (as malloc_usable_size counts them) so it can report bytes per record. In its own translation unit
// so the compiler cannot pair the malloc here with a sized delete elsewhere and warn.
#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <new>

namespace faultline::bench {
std::atomic<long long> live_heap_bytes{0};
std::atomic<long long> peak_heap_bytes{0};
}  // namespace faultline::bench

namespace {

long long usable(void* p) { return static_cast<long long>(malloc_usable_size(p)); }

}  // namespace

void* operator new(std::size_t size) {
    void* p = std::malloc(size == 0 ? 1 : size);
    if (p == nullptr) throw std::bad_alloc{};
    using namespace faultline::bench;
    const long long now = live_heap_bytes.fetch_add(usable(p)) + usable(p);
    long long peak = peak_heap_bytes.load();
    while (now > peak && !peak_heap_bytes.compare_exchange_weak(peak, now)) {
    }
    return p;
}
void operator delete(void* p) noexcept {
    if (p == nullptr) return;
    faultline::bench::live_heap_bytes.fetch_sub(usable(p));
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept { operator delete(p); }
