// idempotency_keys: non-idempotent operations (methods POST and PATCH by default) carry an
// Idempotency-Key on every attempt, one stable key across the attempts of an operation, and keys
// are distinct between operations. Attempts are grouped into operations by the server's operation
// identity. When that identity is a header or body field the scenario names (or the request hash),
// a key that changes between attempts shows up inside one operation. When the identity is the key
// itself, a changed key makes a new operation; it is caught by the client's attempt header
// (Faultline-Attempt / x-envoy-attempt-count > 1, or grpc-previous-rpc-attempts > 0) on the first
// attempt the server saw with that key. A run without an operation of those methods is insufficient
// evidence: no request needed a key.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <unordered_map>

#include "support.hpp"

namespace faultline::harness::checks {

namespace {

std::string upper(std::string s) {
    for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

// The client's own attempt number from its headers, when it sent one.
std::optional<std::int64_t> client_attempt_number(const journal_record& r) {
    auto parse = [](std::string_view text) -> std::optional<std::int64_t> {
        std::int64_t value = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
        return value;
    };
    if (r.attempt_header) return parse(*r.attempt_header);
    if (r.previous_attempts) {
        if (auto previous = parse(*r.previous_attempts)) return *previous + 1;
    }
    return std::nullopt;
}

class idempotency_keys final : public check {
public:
    explicit idempotency_keys(std::vector<std::string> methods) : methods_(std::move(methods)) {
        for (auto& m : methods_) m = upper(m);
    }

    verdict evaluate(const run_record&, const operation_groups& operations) const override {
        verdict v;
        std::size_t judged = 0;
        std::size_t missing = 0;
        std::size_t unstable = 0;
        // key -> its first operation; a key that another operation uses too moves to `shared_users`
        // (key -> operations, in key order for the evidence): few keys are shared, so the map stays small.
        std::unordered_map<std::string_view, const operation_attempts*> first_user;
        first_user.reserve(operations.size());
        std::map<std::string_view, std::vector<const operation_attempts*>> shared_users;
        for (const auto& op : operations) {
            const journal_record& first = *op.attempts.front();
            if (std::find(methods_.begin(), methods_.end(), upper(first.method.str())) == methods_.end()) continue;
            ++judged;
            std::vector<const journal_record*> bad;
            std::string detail;
            std::vector<std::string_view> keys;
            for (const journal_record* r : op.attempts) {
                if (r->idempotency_key.empty()) {
                    bad.push_back(r);
                    detail += (detail.empty() ? "" : "\n") + ("no Idempotency-Key: " + describe_attempt(*r));
                } else if (std::find(keys.begin(), keys.end(), r->idempotency_key) == keys.end()) {
                    keys.push_back(r->idempotency_key);
                }
            }
            if (!bad.empty()) ++missing;
            if (keys.size() > 1) {
                ++unstable;
                detail += (detail.empty() ? "" : "\n") + std::string("the key changed across attempts:");
                for (const journal_record* r : op.attempts) {
                    bad.push_back(r);
                    detail += "\n\"" + r->idempotency_key + "\" on " + describe_attempt(*r);
                }
            } else if (first.identity == identity_source::idempotency_key) {
                const auto n = client_attempt_number(first);
                if (n && *n > 1) {
                    ++unstable;
                    bad.push_back(&first);
                    detail += (detail.empty() ? "" : "\n") + ("key \"" + first.idempotency_key +
                                                              "\" first seen on the client's attempt " +
                                                              std::to_string(*n) +
                                                              ": the key changed between attempts (or an earlier "
                                                              "attempt had none): " +
                                                              describe_attempt(first));
                }
            }
            for (std::string_view k : keys) {
                const auto [earlier, inserted] = first_user.try_emplace(k, &op);
                if (inserted) continue;
                auto& users = shared_users[k];
                if (users.empty()) users.push_back(earlier->second);
                users.push_back(&op);
            }
            if (detail.empty()) continue;
            std::sort(bad.begin(), bad.end(), [](const auto* a, const auto* b) { return a->seq < b->seq; });
            bad.erase(std::unique(bad.begin(), bad.end()), bad.end());
            add_evidence(v, evidence_item{std::string(op.operation), seqs_of(bad), detail});
        }
        std::size_t shared = 0;
        for (const auto& [key, ops] : shared_users) {
            ++shared;
            std::vector<std::uint64_t> seqs;
            std::string detail = "key \"" + std::string(key) + "\" used by " + std::to_string(ops.size()) +
                                 " operations:";
            for (const operation_attempts* op : ops) {
                for (const journal_record* r : op->attempts) {
                    if (r->idempotency_key != key) continue;
                    seqs.push_back(r->seq);
                    detail += "\n" + std::string(op->operation) + ": " + describe_attempt(*r);
                }
            }
            add_evidence(v, evidence_item{std::string(ops.front()->operation), seqs, detail});
        }
        std::string methods;
        for (const auto& m : methods_) methods += (methods.empty() ? "" : ", ") + m;
        if (judged == 0) {
            v.insufficient_evidence = true;
            v.summary = "no operation with " + methods + ": nothing to judge";
            return v;
        }
        v.passed = v.evidence_total == 0;
        v.summary = std::to_string(judged) + " operations with " + methods + ": " + std::to_string(missing) +
                    " sent an attempt without a key, " + std::to_string(unstable) + " changed their key, " +
                    std::to_string(shared) + " keys were shared between operations";
        return v;
    }

private:
    std::vector<std::string> methods_;
};

std::unique_ptr<check> make_idempotency_keys(config::table_reader& p) {
    auto methods = p.strings("methods").value_or(std::vector<std::string>{"POST", "PATCH"});
    if (methods.empty()) p.fail("methods", "must name at least one method");
    return std::make_unique<idempotency_keys>(std::move(methods));
}

}  // namespace

const core::registration<check_info> registered{
    "idempotency_keys", "non-idempotent operations carry one stable key across attempts, distinct between operations",
    &make_idempotency_keys};

}  // namespace faultline::harness::checks
