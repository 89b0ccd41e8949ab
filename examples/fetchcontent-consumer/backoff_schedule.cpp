// The delays faultline's retry library would wait between attempts with base 100 ms, cap 1 s and no
// jitter: a consumer program built from faultline's sources through FetchContent.
#include <faultline/retry/backoff.hpp>

#include <chrono>
#include <cstdio>

int main() {
    namespace retry = faultline::retry;
    using namespace std::chrono_literals;
    retry::backoff schedule{retry::backoff_policy{}.with_base(100ms).with_cap(1s).with_jitter(retry::jitter_kind::none)};
    faultline::seeded_random random{1};
    for (int retry_index = 1; retry_index <= 5; ++retry_index) {
        const auto delay = std::chrono::duration_cast<std::chrono::milliseconds>(schedule.next(random));
        std::printf("retry %d: %lldms\n", retry_index, static_cast<long long>(delay.count()));
    }
}
