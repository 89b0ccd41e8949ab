// bandwidth: its stream carries at most `rate` bytes per second. Bytes are written in pieces of at
// most a twentieth of a second's worth, each after waiting for its share of the rate, so the limit
// holds from the first byte and a slow rate still moves data steadily.
#include "faultline/tcp/toxic.hpp"

#include <algorithm>

namespace faultline::tcp {
namespace {

class bandwidth final : public toxic {
public:
    static std::shared_ptr<const toxic> make(config::table_reader& keys) {
        auto t = std::make_shared<bandwidth>();
        // Up to 1 TB/s: more would be no limit on loopback, and size * 1e9 stays inside 64 bits.
        t->rate_ = static_cast<std::uint64_t>(
            keys.integer("rate", 1, std::int64_t{1} << 40, config::need::required).value_or(1));
        return t;
    }

    std::size_t piece_limit(random_source&) const override {
        return static_cast<std::size_t>(std::max<std::uint64_t>(1, rate_ / pieces_per_second));
    }

    std::chrono::nanoseconds piece_wait(std::size_t size, bool) const override {
        // size <= one read (tcp_proxy::read_buffer_size, 64 KiB), so size * 1e9 cannot overflow.
        return std::chrono::nanoseconds{static_cast<std::int64_t>(size * 1'000'000'000ULL / rate_)};
    }

private:
    static constexpr std::uint64_t pieces_per_second = 20;
    std::uint64_t rate_ = 1;  // bytes per second
};

const toxic_registration registered{"bandwidth", "limit the stream to rate bytes per second", &bandwidth::make};

}  // namespace
}  // namespace faultline::tcp
