// timeout: its stream is a black hole (data and EOF are dropped), and the connection is closed
// `timeout` after it was accepted; with timeout = 0 it is held until a peer gives up, or at most the
// proxy's bound on a held connection (tcp_proxy_options::max_hold, `--max-hold`).
#include "faultline/tcp/toxic.hpp"

namespace faultline::tcp {
namespace {

using std::chrono::nanoseconds;

class timeout final : public toxic {
public:
    static std::shared_ptr<const toxic> make(config::table_reader& keys) {
        auto t = std::make_shared<timeout>();
        t->timeout_ = keys.duration("timeout", nanoseconds{0}, std::chrono::hours{1}).value_or(nanoseconds{0});
        return t;
    }

    std::optional<nanoseconds> lifetime() const override { return timeout_; }
    bool passes_eof() const override { return false; }
    void on_chunk(chunk_plan& plan, const stream_state&, random_source&) const override { plan.forward = 0; }

private:
    nanoseconds timeout_{0};
};

const toxic_registration registered{"timeout", "drop the stream's data; close after a timeout (0: hold)",
                                    &timeout::make};

}  // namespace
}  // namespace faultline::tcp
