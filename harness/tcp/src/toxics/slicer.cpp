// slicer: its stream's data is written in small pieces of `average_size` ± a uniform draw within
// `size_variation` bytes (at least 1), with `delay` between pieces: a peer that reads a message in
// one call is shown it arriving in several.
#include "faultline/tcp/toxic.hpp"

namespace faultline::tcp {
namespace {

using std::chrono::nanoseconds;

class slicer final : public toxic {
public:
    static std::shared_ptr<const toxic> make(config::table_reader& keys) {
        auto t = std::make_shared<slicer>();
        constexpr std::int64_t max_size = 1 << 20;
        t->average_ = keys.integer("average_size", 1, max_size, config::need::required).value_or(1);
        t->variation_ = keys.integer("size_variation", 0, max_size).value_or(0);
        t->delay_ = keys.duration("delay", nanoseconds{0}, std::chrono::seconds{10}).value_or(nanoseconds{0});
        if (t->variation_ >= t->average_ && keys.ok()) {
            keys.fail("size_variation", "must be less than average_size = " + std::to_string(t->average_) +
                                            ", got " + std::to_string(t->variation_));
        }
        return t;
    }

    std::size_t piece_limit(random_source& random) const override {
        if (variation_ == 0) return static_cast<std::size_t>(average_);
        const auto offset = static_cast<std::int64_t>(uniform_below(random, static_cast<std::uint64_t>(2 * variation_ + 1)));
        return static_cast<std::size_t>(average_ - variation_ + offset);
    }

    nanoseconds piece_wait(std::size_t, bool first) const override { return first ? nanoseconds{0} : delay_; }

private:
    std::int64_t average_ = 1;
    std::int64_t variation_ = 0;  // < average_, so a piece is at least 1 byte
    nanoseconds delay_{0};
};

const toxic_registration registered{"slicer", "write the stream in small pieces, with a delay between them",
                                    &slicer::make};

}  // namespace
}  // namespace faultline::tcp
