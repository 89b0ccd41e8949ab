// goaway: HTTP/2's GOAWAY, the server going away with the attempt's stream in flight. Phase "before"
// (default): its last-stream-id stops below the stream, which was not processed, so a client may
// retry it on a new connection whatever the method (RFC 9113 6.8). Phase "after": the service
// commits first, the GOAWAY covers the stream, and the connection ends with no reply: the reply is
// lost after the commit. HTTP/1.1 has no GOAWAY: there the connection is closed with no reply (phase
// "after": the lost response), and a fault_not_mapped event says so for "before".
#include "faultline/faults/kind.hpp"

namespace faultline::faults {
namespace {

class goaway final : public fault_kind {
public:
    static std::shared_ptr<const fault_kind> make(config::table_reader& keys) {
        auto kind = std::make_shared<goaway>();
        kind->phase_ = keys.choice("phase", {"before", "after"}) == "after" ? commit_phase::after : commit_phase::before;
        return kind;
    }

    kind_outcome on_attempt(const attempt_context&, random_source&) const override {
        return {fault_plan{drop_action{drop_mode::go_away}, phase_}, {}};
    }

private:
    commit_phase phase_ = commit_phase::before;
};

const kind_registration registered{"goaway",
                                   "HTTP/2: GOAWAY with the stream unprocessed (phase before) or processed and its "
                                   "reply lost (after); HTTP/1.1: close, no reply",
                                   &goaway::make};

}  // namespace
}  // namespace faultline::faults
