// reset_peer: the first data of its stream is not forwarded; `timeout` after it arrived the connection
// is reset (RST both ways). Downstream with timeout 0 is a lost reply: the service received the request
// and answered, the client sees ECONNRESET instead of the answer.
#include "faultline/tcp/toxic.hpp"

namespace faultline::tcp {
namespace {

using std::chrono::nanoseconds;

class reset_peer final : public toxic {
public:
    static std::shared_ptr<const toxic> make(config::table_reader& keys) {
        auto t = std::make_shared<reset_peer>();
        t->timeout_ = keys.duration("timeout", nanoseconds{0}, std::chrono::hours{1}).value_or(nanoseconds{0});
        return t;
    }

    void on_chunk(chunk_plan& plan, const stream_state&, random_source&) const override {
        plan.forward = 0;
        if (!plan.end) {
            plan.end = link_end::reset;
            plan.end_after = timeout_;
        }
    }

private:
    nanoseconds timeout_{0};
};

const toxic_registration registered{"reset_peer", "reset the connection when data arrives, after a timeout",
                                    &reset_peer::make};

}  // namespace
}  // namespace faultline::tcp
