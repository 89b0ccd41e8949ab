// latency: every chunk of its stream is held `latency` ± a uniform draw within `jitter` (never below
// zero), counted from when the proxy read it.
#include "faultline/tcp/toxic.hpp"

#include <algorithm>

namespace faultline::tcp {
namespace {

using std::chrono::nanoseconds;

class latency final : public toxic {
public:
    static std::shared_ptr<const toxic> make(config::table_reader& keys) {
        auto t = std::make_shared<latency>();
        t->latency_ = keys.duration("latency", nanoseconds{0}, std::chrono::hours{1}, config::need::required)
                          .value_or(nanoseconds{0});
        t->jitter_ = keys.duration("jitter", nanoseconds{0}, std::chrono::hours{1}).value_or(nanoseconds{0});
        return t;
    }

    void on_chunk(chunk_plan& plan, const stream_state&, random_source& random) const override {
        nanoseconds wait = latency_;
        if (jitter_.count() > 0) {
            const auto span = static_cast<double>(jitter_.count());
            wait += nanoseconds{static_cast<std::int64_t>(uniform(random, -span, span))};
        }
        plan.delay += std::max(wait, nanoseconds{0});
    }

private:
    nanoseconds latency_{0};
    nanoseconds jitter_{0};
};

const toxic_registration registered{"latency", "hold every chunk latency ± jitter", &latency::make};

}  // namespace
}  // namespace faultline::tcp
