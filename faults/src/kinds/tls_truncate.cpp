// tls_truncate: the truncation attack TLS's close_notify exists for. The service commits; its reply
// goes out over HTTP/1.x with no Content-Length (the body ends with the connection), `body_bytes` of
// the body follow, then the TCP connection ends with a FIN and no close_notify. A client that takes
// the cut body as the whole reply is a finding (check `rejects_truncated_replies`); OpenSSL reports
// "unexpected eof while reading". Where there is no close_notify to leave out (a plain listener) or
// the protocol frames its own bodies (HTTP/2), the server truncates as `truncate` does and journals a
// `fault_not_mapped` event.
#include "faultline/faults/kind.hpp"

namespace faultline::faults {
namespace {

class tls_truncate final : public fault_kind {
public:
    static std::shared_ptr<const fault_kind> make(config::table_reader& keys) {
        auto kind = std::make_shared<tls_truncate>();
        kind->body_bytes_ =
            static_cast<std::size_t>(keys.integer("body_bytes", 0, std::int64_t{1} << 40).value_or(0));
        return kind;
    }

    kind_outcome on_attempt(const attempt_context&, random_source&) const override {
        return {fault_plan{truncate_action{body_bytes_, false, true}, commit_phase::after}, {}};
    }

private:
    std::size_t body_bytes_ = 0;
};

const kind_registration registered{
    "tls_truncate", "a reply framed by the connection's end, cut short, closed without TLS close_notify",
    &tls_truncate::make};

}  // namespace
}  // namespace faultline::faults
