// truncate: the service commits; its response head promises the full Content-Length, then only
// `body_bytes` of the body are sent and the connection is closed (FIN).
#include "faultline/faults/kind.hpp"

namespace faultline::faults {
namespace {

class truncate final : public fault_kind {
public:
    static std::shared_ptr<const fault_kind> make(config::table_reader& keys) {
        auto kind = std::make_shared<truncate>();
        kind->body_bytes_ =
            static_cast<std::size_t>(keys.integer("body_bytes", 0, std::int64_t{1} << 40).value_or(0));
        return kind;
    }

    kind_outcome on_attempt(const attempt_context&, random_source&) const override {
        return {fault_plan{truncate_action{body_bytes_, false}, commit_phase::after}, {}};
    }

private:
    std::size_t body_bytes_ = 0;
};

const kind_registration registered{"truncate", "promise a Content-Length, send fewer body bytes, close",
                                   &truncate::make};

}  // namespace
}  // namespace faultline::faults
