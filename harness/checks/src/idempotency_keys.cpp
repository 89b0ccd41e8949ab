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

#include "support.hpp"

namespace faultline::checks {

namespace {

std::string upper(std::string s) {
    for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

// The client's own attempt number from its headers, when it sent one.
std::optional<std::int64_t> client_attempt_number(const record::journal_record& r) {
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

    record::verdict evaluate(const record::run_record&, const record::operation_groups& operations) const override {
        record::verdict v;
        std::size_t judged = 0;
        std::size_t missing = 0;
        std::size_t unstable = 0;
        // (key, index of an operation that used it), to find keys shared between operations once all
        // are seen: sorting these pairs costs far less than a map with a node per key.
        std::vector<std::pair<record::symbol, std::uint32_t>> key_users;
        key_users.reserve(operations.size());
        std::vector<std::pair<record::symbol, bool>> method_judged;  // the few methods seen, matched once each
        std::vector<const record::journal_record*> bad;               // reused across operations
        std::vector<record::symbol> keys;
        for (std::size_t index = 0; index < operations.size(); ++index) {
            const record::operation_attempts op = operations[index];
            const record::journal_record& first = *op.attempts.front();
            if (!judges(first.method, method_judged)) continue;
            ++judged;
            bad.clear();
            keys.clear();
            std::string detail;
            for (const record::journal_record* r : op.attempts) {
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
                for (const record::journal_record* r : op.attempts) {
                    bad.push_back(r);
                    detail += "\n\"" + r->idempotency_key + "\" on " + describe_attempt(*r);
                }
            } else if (first.identity == record::identity_source::idempotency_key) {
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
            for (record::symbol k : keys) key_users.emplace_back(k, static_cast<std::uint32_t>(index));
            if (detail.empty()) continue;
            std::sort(bad.begin(), bad.end(), [](const auto* a, const auto* b) { return a->seq < b->seq; });
            bad.erase(std::unique(bad.begin(), bad.end()), bad.end());
            add_evidence(v, record::evidence_item{std::string(op.operation), seqs_of(bad), detail});
        }
        // key -> the operations that used it, in operation order, for keys used by more than one
        // (in key order for the evidence).
        std::sort(key_users.begin(), key_users.end(), [](const auto& a, const auto& b) {
            return a.first.id() != b.first.id() ? a.first.id() < b.first.id() : a.second < b.second;
        });
        std::map<record::symbol, std::vector<record::operation_attempts>> shared_users;
        for (std::size_t i = 0; i < key_users.size();) {
            std::size_t end = i + 1;
            while (end < key_users.size() && key_users[end].first == key_users[i].first) ++end;
            if (end - i > 1) {
                auto& users = shared_users[key_users[i].first];
                for (std::size_t j = i; j < end; ++j) users.push_back(operations[key_users[j].second]);
            }
            i = end;
        }
        std::size_t shared = 0;
        for (const auto& [key, ops] : shared_users) {
            ++shared;
            std::vector<std::uint64_t> seqs;
            std::string detail = "key \"" + key.str() + "\" used by " + std::to_string(ops.size()) +
                                 " operations:";
            for (const record::operation_attempts& op : ops) {
                for (const record::journal_record* r : op.attempts) {
                    if (r->idempotency_key != key) continue;
                    seqs.push_back(r->seq);
                    detail += "\n" + std::string(op.operation) + ": " + describe_attempt(*r);
                }
            }
            add_evidence(v, record::evidence_item{std::string(ops.front().operation), seqs, detail});
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
    // Whether operations of `method` are judged (methods_ holds them upper-cased), remembering the
    // answer per method symbol: a run has a handful of methods and many operations.
    bool judges(record::symbol method, std::vector<std::pair<record::symbol, bool>>& seen) const {
        for (const auto& [m, judged] : seen) {
            if (m == method) return judged;
        }
        const bool judged = std::find(methods_.begin(), methods_.end(), upper(method.str())) != methods_.end();
        seen.emplace_back(method, judged);
        return judged;
    }

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

}  // namespace faultline::checks
