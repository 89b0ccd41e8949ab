// limit_data: once `bytes` bytes of its stream have been forwarded, the connection is ended (`then`:
// "close", a FIN both ways, or "reset", an RST both ways); the bytes beyond the limit are dropped.
// With bytes = 0 the first data ends it.
#include "faultline/tcp/toxic.hpp"

#include <algorithm>

namespace faultline::tcp {
namespace {

class limit_data final : public toxic {
public:
    static std::shared_ptr<const toxic> make(config::table_reader& keys) {
        auto t = std::make_shared<limit_data>();
        t->bytes_ = static_cast<std::uint64_t>(
            keys.integer("bytes", 0, std::int64_t{1} << 50, config::need::required).value_or(0));
        t->then_ = keys.choice("then", {"close", "reset"}).value_or("close") == "reset" ? link_end::reset
                                                                                        : link_end::close;
        return t;
    }

    void on_chunk(chunk_plan& plan, const stream_state& state, random_source&) const override {
        const std::uint64_t allowance = bytes_ - std::min(bytes_, state.forwarded);
        if (plan.forward < allowance) return;
        plan.forward = static_cast<std::size_t>(allowance);
        if (!plan.end) plan.end = then_;
    }

private:
    std::uint64_t bytes_ = 0;
    link_end then_ = link_end::close;
};

const toxic_registration registered{"limit_data", "end the connection once N bytes of the stream passed",
                                    &limit_data::make};

}  // namespace
}  // namespace faultline::tcp
