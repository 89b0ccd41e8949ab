// refused: the connection is ended as soon as it is accepted, before the upstream is dialled (`then`:
// "reset", an RST, the default; or "close", a FIN with no data). A connection-level toxic with no
// stream; which connections it hits (a window after the proxy started, every n-th) is the engine's
// `from`, `for`, `first` and `every`.
#include "faultline/tcp/toxic.hpp"

namespace faultline::tcp {
namespace {

class refused final : public toxic {
public:
    static std::shared_ptr<const toxic> make(config::table_reader& keys) {
        auto t = std::make_shared<refused>();
        t->then_ = keys.choice("then", {"reset", "close"}).value_or("reset") == "close" ? link_end::close
                                                                                        : link_end::reset;
        return t;
    }

    bool per_direction() const override { return false; }
    std::optional<link_end> on_accept() const override { return then_; }

private:
    link_end then_ = link_end::reset;
};

const toxic_registration registered{"refused", "end new connections on accept (RST or FIN)", &refused::make};

}  // namespace
}  // namespace faultline::tcp
