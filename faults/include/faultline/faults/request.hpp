// What the fault engine sees of an attempt and of a connection. The server (harness/) builds these
// from its parsed request; the engine and the fault kinds only read them, and never keep references
// beyond the call they are passed to.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

#include "faultline/faults/action.hpp"

namespace faultline::faults {

// Read access to a request's headers. `find` is case-insensitive in `name` (as HTTP field names are)
// and returns the first value. Implementations are adapters over the server's own header storage.
class header_source {
public:
    virtual ~header_source() = default;
    virtual std::optional<std::string_view> find(std::string_view name) const = 0;
};

// A header_source over a `header_list` (tests, and rules evaluated outside a live server).
// Non-owning: the list must outlive this object.
class header_list_source final : public header_source {
public:
    explicit header_list_source(const header_list& headers) : headers_{headers} {}
    std::optional<std::string_view> find(std::string_view name) const override;

private:
    const header_list& headers_;
};

// The request of one attempt, fully read.
struct request_view {
    std::string_view method;  // "POST"; matched case-sensitively, as RFC 9110 says methods are
    std::string_view target;  // origin-form "/payments?x=1"; rules match the path before '?'
    const header_source& headers;
    std::string_view body;
};

// One attempt as the engine decides on it.
struct attempt_context {
    request_view request;
    // Operation identity, hashed (e.g. faultline::hash_bytes of the identity string). Together with
    // the seed, the rule name and `attempt` it fixes every random choice made for this attempt.
    std::uint64_t operation_hash = 0;
    std::uint32_t attempt = 1;       // 1-based, n-th attempt of this operation seen by the server
    std::uint64_t request_seq = 1;   // 1-based, server-wide, in order of request completion
    std::chrono::nanoseconds since_start{0};  // monotonic time since the run started
    // Wall time now: only used to write Retry-After as an HTTP-date. Leave default when unknown
    // (the date is then relative to the epoch, still well-formed).
    std::chrono::system_clock::time_point wall_now{};
};

// A freshly accepted connection, before any byte is read.
struct connection_context {
    std::uint64_t connection_seq = 1;        // 1-based, server-wide, in order of acceptance
    std::chrono::nanoseconds since_start{0};  // monotonic time since the run started
};

}  // namespace faultline::faults
