#include "faultline/server/identity.hpp"

#include "faultline/core/random.hpp"
#include "faultline/retry/idempotency.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

namespace faultline::server {

namespace {

std::string_view trim_ows(std::string_view s) {
    const auto is_ows = [](char c) { return c == ' ' || c == '\t'; };
    while (!s.empty() && is_ows(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_ows(s.back())) s.remove_suffix(1);
    return s;
}

// The value of a top-level string or number field of a JSON object body, if there is one.
std::optional<std::string> body_field_value(std::string_view body, const std::string& field) {
    boost::system::error_code ec;
    const boost::json::value v = boost::json::parse(body, ec);
    if (ec || !v.is_object()) return std::nullopt;
    const auto* f = v.as_object().if_contains(field);
    if (f == nullptr) return std::nullopt;
    if (f->is_string()) return std::string{f->get_string()};
    if (f->is_number()) return boost::json::serialize(*f);
    return std::nullopt;
}

operation_identity make(std::string value, record::identity_source source, std::string key) {
    const auto h = hash_bytes(value);
    return operation_identity{std::move(value), source, h, std::move(key)};
}

}  // namespace

std::uint64_t request_hash(std::string_view method, std::string_view target, std::string_view body) {
    // Hash each part and chain them, so boundaries between the parts matter.
    return mix64(mix64(hash_bytes(method), hash_bytes(target)), hash_bytes(body));
}

std::string to_hex(std::uint64_t v) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out(16, '0');
    for (std::size_t i = 16; i-- > 0;) {
        out[i] = digits[v & 0xfU];
        v >>= 4;
    }
    return out;
}

operation_identity identify(const identity_config& config, const identity_inputs& request) {
    std::string key = request.idempotency_key ? retry::idempotency_key_value(*request.idempotency_key) : std::string{};
    if (!key.empty()) {
        auto value = key;
        return make(std::move(value), record::identity_source::idempotency_key, std::move(key));
    }
    if (!config.header.empty() && request.named_header) {
        auto value = std::string{trim_ows(*request.named_header)};
        if (!value.empty()) return make(std::move(value), record::identity_source::header, std::move(key));
    }
    if (!config.body_field.empty() && !request.body.empty()) {
        if (auto value = body_field_value(request.body, config.body_field)) {
            return make(std::move(*value), record::identity_source::body_field, std::move(key));
        }
    }
    return make(to_hex(request_hash(request.method, request.target, request.body)), record::identity_source::request_hash,
                std::move(key));
}

operation_identity identify(const identity_config& config, const faults::request_view& request) {
    identity_inputs in;
    in.method = request.method;
    in.target = request.target;
    in.body = request.body;
    in.idempotency_key = request.headers.find(idempotency_key_header);
    if (!config.header.empty()) in.named_header = request.headers.find(config.header);
    return identify(config, in);
}

std::uint32_t attempt_counter::next(record::symbol operation) {
    auto& s = stripes_[operation.id() % stripe_count];
    std::lock_guard lock{s.mutex};
    return ++s.counts[operation];
}

std::uint32_t attempt_counter::seen(record::symbol operation) const {
    const auto& s = stripes_[operation.id() % stripe_count];
    std::lock_guard lock{s.mutex};
    const auto it = s.counts.find(operation);
    return it == s.counts.end() ? 0U : it->second;
}

std::size_t attempt_counter::operations() const {
    std::size_t n = 0;
    for (const auto& s : stripes_) {
        std::lock_guard lock{s.mutex};
        n += s.counts.size();
    }
    return n;
}

void attempt_counter::reset() {
    for (auto& s : stripes_) {
        std::lock_guard lock{s.mutex};
        s.counts = {};  // clear() would keep the table's buckets
    }
}

}  // namespace faultline::server
