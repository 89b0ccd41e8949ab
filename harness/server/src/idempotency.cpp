#include "faultline/server/idempotency.hpp"

#include "faultline/server/identity.hpp"

#include "faultline/core/random.hpp"

#include <cstdint>
#include <cstring>

namespace faultline::server {

std::string_view to_string(idempotency_decision v) {
    switch (v) {
        case idempotency_decision::proceed: return "proceed";
        case idempotency_decision::replay: return "replay";
        case idempotency_decision::in_flight: return "in_flight";
        case idempotency_decision::payload_mismatch: return "payload_mismatch";
        case idempotency_decision::missing_key: return "missing_key";
    }
    return "unknown";
}

std::uint64_t request_fingerprint(std::string_view method, std::string_view target, std::string_view body) {
    return request_hash(method, target, body);
}

namespace {

// A packed response: the status, the header count, each header's name and value behind their
// lengths, then the body.
std::uint32_t read_u32(std::string_view& in) {
    std::uint32_t v = 0;
    std::memcpy(&v, in.data(), sizeof v);
    in.remove_prefix(sizeof v);
    return v;
}

std::string_view read_text(std::string_view& in) {
    const std::uint32_t length = read_u32(in);
    const std::string_view text = in.substr(0, length);
    in.remove_prefix(length);
    return text;
}

// Packs `r` into the arena; never empty.
std::string_view pack(const service_response& r, byte_arena& arena) {
    std::size_t size = 2 * sizeof(std::uint32_t) + r.body.size();
    for (const http_header& h : r.headers) size += 2 * sizeof(std::uint32_t) + h.name.size() + h.value.size();
    char* const start = arena.allocate(size);
    char* out = start;
    const auto put_u32 = [&](std::size_t n) {
        const auto v = static_cast<std::uint32_t>(n);
        std::memcpy(out, &v, sizeof v);
        out += sizeof v;
    };
    const auto put_text = [&](std::string_view text) {
        std::memcpy(out, text.data(), text.size());
        out += text.size();
    };
    put_u32(static_cast<std::uint32_t>(r.status));
    put_u32(r.headers.size());
    for (const http_header& h : r.headers) {
        put_u32(h.name.size());
        put_text(h.name);
        put_u32(h.value.size());
        put_text(h.value);
    }
    put_text(r.body);
    return {start, size};
}

service_response unpack(std::string_view in, record::effect_kind effect) {
    service_response r;
    r.status = static_cast<int>(read_u32(in));
    r.headers.resize(read_u32(in));
    for (http_header& h : r.headers) {
        h.name = read_text(in);
        h.value = read_text(in);
    }
    r.body = in;
    r.effect = effect;
    return r;
}

idempotency_begin refuse(idempotency_decision decision, int status, std::string_view title, std::string_view detail,
                         record::effect_kind effect) {
    auto response = problem(status, title, detail);
    response.effect = effect;
    return idempotency_begin{decision, std::move(response)};
}

}  // namespace

idempotency_layer::idempotency_layer(idempotency_config config) : config_{config} {}

idempotency_begin idempotency_layer::begin(record::symbol key, effect_semantics semantics,
                                           std::uint64_t fingerprint) {
    if (config_.mode == idempotency_mode::off || semantics == effect_semantics::read) return {};
    if (key.empty()) {
        if (config_.required && semantics == effect_semantics::non_idempotent) {
            return refuse(idempotency_decision::missing_key, 400, "Bad Request",
                          "this operation requires an Idempotency-Key header", record::effect_kind::rejected);
        }
        return {};
    }
    std::lock_guard lock{mutex_};
    auto [it, inserted] = slots_.try_emplace(key, slot{fingerprint, {}});
    if (inserted) return {};
    const auto& s = it->second;
    // A different request under a used key is a client bug whether or not the first is finished.
    if (s.fingerprint != fingerprint) {
        return refuse(idempotency_decision::payload_mismatch, 422, "Unprocessable Content",
                      "this Idempotency-Key was used with a different request", record::effect_kind::conflict);
    }
    if (s.response == nullptr) {
        auto refused = refuse(idempotency_decision::in_flight, 409, "Conflict",
                              "a request with this Idempotency-Key is still being processed", record::effect_kind::conflict);
        refused.response.headers.push_back(
            {std::string{idempotency_marker_header}, std::string{idempotency_marker_in_flight}});
        return refused;
    }
    return idempotency_begin{idempotency_decision::replay, unpack({s.response, s.response_size}, record::effect_kind::replayed)};
}

void idempotency_layer::complete(record::symbol key, const service_response& response) {
    if (config_.mode == idempotency_mode::off || key.empty()) return;
    std::lock_guard lock{mutex_};
    const auto it = slots_.find(key);
    if (it == slots_.end() || it->second.response != nullptr) return;
    const std::string_view packed = pack(response, responses_);
    it->second.response = packed.data();
    it->second.response_size = static_cast<std::uint32_t>(packed.size());
}

void idempotency_layer::abandon(record::symbol key) {
    if (config_.mode == idempotency_mode::off || key.empty()) return;
    std::lock_guard lock{mutex_};
    const auto it = slots_.find(key);
    // Only an in-flight key: a stored result must survive a late abandon.
    if (it != slots_.end() && it->second.response == nullptr) slots_.erase(it);
}

std::size_t idempotency_layer::stored() const {
    std::lock_guard lock{mutex_};
    std::size_t n = 0;
    for (const auto& [key, s] : slots_) if (s.response != nullptr) ++n;
    return n;
}

std::size_t idempotency_layer::in_flight() const {
    std::lock_guard lock{mutex_};
    std::size_t n = 0;
    for (const auto& [key, s] : slots_) if (s.response == nullptr) ++n;
    return n;
}

void idempotency_layer::reset() {
    std::lock_guard lock{mutex_};
    slots_ = {};  // clear() would keep the table's buckets
    responses_.clear();
}

}  // namespace faultline::server
