// gRPC's status codes (grpc/doc/statuscodes.md), named as gRPC names them: the fault kind that sends
// one, the journal that records it and the checks that judge a service config's
// retryableStatusCodes all read this one table.
#pragma once

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "faultline/core/enum_names.hpp"

namespace faultline {

enum class grpc_status : std::uint8_t {
    ok,
    cancelled,
    unknown,
    invalid_argument,
    deadline_exceeded,
    not_found,
    already_exists,
    permission_denied,
    resource_exhausted,
    failed_precondition,
    aborted,
    out_of_range,
    unimplemented,
    internal,
    unavailable,
    data_loss,
    unauthenticated,
};

inline constexpr enum_names grpc_status_names{std::to_array<enum_name<grpc_status>>({
    {grpc_status::ok, "OK"},
    {grpc_status::cancelled, "CANCELLED"},
    {grpc_status::unknown, "UNKNOWN"},
    {grpc_status::invalid_argument, "INVALID_ARGUMENT"},
    {grpc_status::deadline_exceeded, "DEADLINE_EXCEEDED"},
    {grpc_status::not_found, "NOT_FOUND"},
    {grpc_status::already_exists, "ALREADY_EXISTS"},
    {grpc_status::permission_denied, "PERMISSION_DENIED"},
    {grpc_status::resource_exhausted, "RESOURCE_EXHAUSTED"},
    {grpc_status::failed_precondition, "FAILED_PRECONDITION"},
    {grpc_status::aborted, "ABORTED"},
    {grpc_status::out_of_range, "OUT_OF_RANGE"},
    {grpc_status::unimplemented, "UNIMPLEMENTED"},
    {grpc_status::internal, "INTERNAL"},
    {grpc_status::unavailable, "UNAVAILABLE"},
    {grpc_status::data_loss, "DATA_LOSS"},
    {grpc_status::unauthenticated, "UNAUTHENTICATED"},
})};

inline std::string_view to_string(grpc_status s) { return grpc_status_names(s); }

// "UNAVAILABLE", "unavailable" or "14", as service configs and trailers write a status.
inline std::optional<grpc_status> parse_grpc_status(std::string_view text) {
    unsigned code = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), code);
    if (ec == std::errc{} && end == text.data() + text.size()) {
        if (code > static_cast<unsigned>(grpc_status::unauthenticated)) return std::nullopt;
        return static_cast<grpc_status>(code);
    }
    std::string upper{text};
    std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
    return grpc_status_names.from(upper);
}

// A grpc-message value: bytes outside printable ASCII, and '%', percent-encoded (gRPC's
// PROTOCOL-HTTP2.md), so any text travels in a header field.
inline std::string grpc_message_encoded(std::string_view text) {
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(text.size());
    for (const char ch : text) {
        const auto byte = static_cast<unsigned char>(ch);
        if (byte >= 0x20 && byte <= 0x7e && byte != '%') {
            out += ch;
        } else {
            out += '%';
            out += hex[byte >> 4];
            out += hex[byte & 0xf];
        }
    }
    return out;
}

// What a gRPC client makes of an HTTP reply that carries no grpc-status (a proxy's or a load
// balancer's 503 in front of the service): gRPC's http-grpc-status-mapping.md.
constexpr grpc_status grpc_status_seen_by_client(int http_status) {
    switch (http_status) {
        case 400: return grpc_status::internal;
        case 401: return grpc_status::unauthenticated;
        case 403: return grpc_status::permission_denied;
        case 404: return grpc_status::unimplemented;
        case 429:
        case 502:
        case 503:
        case 504: return grpc_status::unavailable;
        default: return grpc_status::unknown;
    }
}

// What a gRPC service answers where an HTTP service answers `http_status`: the service model's
// replies (409 for a key in flight, 404 for no such endpoint, …) in gRPC's terms.
constexpr grpc_status grpc_status_for_reply(int http_status) {
    if (http_status >= 200 && http_status < 300) return grpc_status::ok;
    switch (http_status) {
        case 400: return grpc_status::invalid_argument;
        case 401: return grpc_status::unauthenticated;
        case 403: return grpc_status::permission_denied;
        case 404:
        case 501: return grpc_status::unimplemented;
        case 409: return grpc_status::aborted;
        case 412:
        case 422: return grpc_status::failed_precondition;
        case 429: return grpc_status::resource_exhausted;
        case 499: return grpc_status::cancelled;
        case 500: return grpc_status::internal;
        case 503: return grpc_status::unavailable;
        case 504: return grpc_status::deadline_exceeded;
        default: return http_status < 500 ? grpc_status::failed_precondition : grpc_status::unknown;
    }
}

// The other way, for a gRPC status asked of a request that is not a gRPC call (grpc-gateway's table).
constexpr int http_status_for(grpc_status s) {
    switch (s) {
        case grpc_status::ok: return 200;
        case grpc_status::cancelled: return 499;
        case grpc_status::invalid_argument:
        case grpc_status::failed_precondition:
        case grpc_status::out_of_range: return 400;
        case grpc_status::deadline_exceeded: return 504;
        case grpc_status::not_found: return 404;
        case grpc_status::already_exists:
        case grpc_status::aborted: return 409;
        case grpc_status::permission_denied: return 403;
        case grpc_status::unauthenticated: return 401;
        case grpc_status::resource_exhausted: return 429;
        case grpc_status::unimplemented: return 501;
        case grpc_status::unavailable: return 503;
        case grpc_status::unknown:
        case grpc_status::internal:
        case grpc_status::data_loss: return 500;
    }
    return 500;
}

}  // namespace faultline
