// refused_stream: the request is refused before it is processed — HTTP/2's RST_STREAM with
// REFUSED_STREAM (RFC 9113 8.7: the server did no work on it, so even a non-idempotent request may be
// retried). Nothing is committed. HTTP/1.1 has no way to say "not processed": there the connection
// is closed with no reply, as `close` does, and the journal says so (a fault_not_mapped event).
#include "faultline/faults/kind.hpp"

namespace faultline::faults {
namespace {

class refused_stream final : public fault_kind {
public:
    static std::shared_ptr<const fault_kind> make(config::table_reader&) { return std::make_shared<refused_stream>(); }

    kind_outcome on_attempt(const attempt_context&, random_source&) const override {
        return {fault_plan{drop_action{drop_mode::refuse_stream}, commit_phase::before}, {}};
    }
};

const kind_registration registered{"refused_stream",
                                   "HTTP/2: RST_STREAM REFUSED_STREAM before processing (safe to retry); "
                                   "HTTP/1.1: close, no reply",
                                   &refused_stream::make};

}  // namespace
}  // namespace faultline::faults
