// tls: the TLS handshake of a connection fails, on a TLS listener (`[server] tls`, `serve --tls`).
// A connection-level kind: the server acts on accept, before any request exists. `how` says what
// the client sees:
//  - "abort_handshake": its hello is read, then the connection is reset: a transport failure before
//    any request byte, safe to retry for any method;
//  - "stall_handshake": its hello is never answered, until header_timeout closes the connection: a
//    client needs a connect (or attempt) timeout to get out;
//  - "expired_certificate", "wrong_name", "untrusted_issuer": the server presents a certificate the
//    client must refuse. Refusing it is right and retrying cannot fix it; a request that arrives
//    over it comes from a client that accepted it (check `rejects_bad_certificates`).
#include "faultline/faults/kind.hpp"

#include <string>
#include <vector>

namespace faultline::faults {
namespace {

class tls final : public fault_kind {
public:
    explicit tls(connection_verdict verdict) : verdict_{verdict} {}

    static std::shared_ptr<const fault_kind> make(config::table_reader& keys) {
        std::vector<std::string> hows;
        for (const connection_verdict v : connection_verdict_names.values()) {
            if (is_tls_verdict(v)) hows.emplace_back(connection_verdict_names(v));
        }
        const std::optional<std::string> how = keys.choice("how", hows, config::need::required);
        return std::make_shared<tls>(how ? *connection_verdict_names.from(*how) : connection_verdict::tls_abort_handshake);
    }

    fault_level level() const override { return fault_level::connection; }

    connection_verdict on_connection(const connection_context&) const override { return verdict_; }

private:
    const connection_verdict verdict_;
};

const kind_registration registered{
    "tls", "a TLS handshake that fails: aborted, stalled, or a certificate the client must refuse", &tls::make};

}  // namespace
}  // namespace faultline::faults
