// rejects_bad_certificates: a client refuses a TLS certificate it must refuse — expired, for another
// name, or from an issuer it was never given (the `tls` fault kind with how = expired_certificate,
// wrong_name or untrusted_issuer). Every request that arrived over such a certificate is a finding:
// the client accepted it, so a man in the middle would have read it. The refusals themselves are the
// server's certificate_refused events; with neither a refusal nor such a request the fault never met
// the client, and the verdict is insufficient evidence.
#include "support.hpp"

namespace faultline::checks {

namespace {

class rejects_bad_certificates final : public check {
public:
    record::verdict evaluate(const record::run_record& run, const record::operation_groups& operations) const override {
        record::verdict v;
        std::size_t refused = 0;
        for (const record::server_event& e : run.server_events) {
            refused += e.kind == record::server_event_kind::certificate_refused ? 1U : 0U;
        }
        std::size_t accepted = 0;
        for (const auto& op : operations) {
            std::vector<const record::journal_record*> over_bad;
            for (const record::journal_record* r : op.attempts) {
                if (r->fault == "tls") over_bad.push_back(r);
            }
            if (over_bad.empty()) continue;
            accepted += over_bad.size();
            std::string detail = std::to_string(over_bad.size()) +
                                 " requests sent over a certificate the client had to refuse (rule `" +
                                 std::string(over_bad.front()->rule) + "`):";
            for (const record::journal_record* r : over_bad) detail += "\n" + describe_attempt(*r);
            add_evidence(v, record::evidence_item{std::string(op.operation), seqs_of(over_bad), detail});
        }
        if (refused == 0 && accepted == 0) {
            v.insufficient_evidence = true;
            v.summary = "no connection was offered a bad certificate (a `tls` fault with how = expired_certificate, "
                        "wrong_name or untrusted_issuer that fired)";
            return v;
        }
        v.passed = accepted == 0;
        v.summary = std::to_string(refused) + " handshakes with a bad certificate refused by the client; " +
                    std::to_string(accepted) + " requests sent over one anyway";
        return v;
    }

    // A client that refuses every bad certificate sends nothing: the refusals are the evidence.
    bool judges_without_operations() const override { return true; }
};

std::unique_ptr<check> make_rejects_bad_certificates(config::table_reader&) {
    return std::make_unique<rejects_bad_certificates>();
}

}  // namespace

const core::registration<check_info> registered{
    "rejects_bad_certificates",
    "no request is sent over a TLS certificate the client must refuse (expired, another name, untrusted issuer)",
    &make_rejects_bad_certificates};

}  // namespace faultline::checks
