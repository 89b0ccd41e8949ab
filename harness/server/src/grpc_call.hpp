// Private to the server: what makes an HTTP/2 stream a gRPC call (gRPC's PROTOCOL-HTTP2.md), read and
// written where the stream meets it — the request's content-type and grpc-timeout, the service's
// reply in gRPC's form, and which reply fields travel as trailers. No message is decoded: the
// request's bytes are the operation's (identity, body hash), and the reply's message is empty, the
// encoding every protobuf message type reads as "all fields default".
#pragma once

#include "faultline/core/grpc_status.hpp"
#include "faultline/server/service.hpp"

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace faultline::server::detail {

inline bool is_grpc_content_type(std::string_view content_type) { return content_type.starts_with("application/grpc"); }

// grpc-timeout ("100m", "2S", "1500000u": at most 8 digits and a unit) in whole ms, rounded down;
// nullopt when malformed.
inline std::optional<std::int64_t> grpc_timeout_ms(std::string_view value) {
    if (value.size() < 2 || value.size() > 9) return std::nullopt;
    std::int64_t amount = 0;
    const std::string_view digits = value.substr(0, value.size() - 1);
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), amount);
    if (ec != std::errc{} || end != digits.data() + digits.size() || amount < 0) return std::nullopt;
    switch (value.back()) {
        case 'H': return amount * 3'600'000;
        case 'M': return amount * 60'000;
        case 'S': return amount * 1000;
        case 'm': return amount;
        case 'u': return amount / 1000;
        case 'n': return amount / 1'000'000;
        default: return std::nullopt;
    }
}

// A reply field that gRPC sends in the trailers, after the message.
inline bool is_grpc_trailer(std::string_view lower_name) {
    return lower_name == "grpc-status" || lower_name == "grpc-message" || lower_name == "grpc-retry-pushback-ms" ||
           lower_name == "grpc-status-details-bin";
}

// One length-prefixed message, uncompressed.
inline std::string grpc_message_frame(std::string_view message) {
    std::string frame(5, '\0');
    const auto n = static_cast<std::uint32_t>(message.size());
    frame[1] = static_cast<char>(n >> 24);
    frame[2] = static_cast<char>(n >> 16);
    frame[3] = static_cast<char>(n >> 8);
    frame[4] = static_cast<char>(n);
    frame.append(message);
    return frame;
}

// The service's reply as a gRPC service gives it: a 2xx is OK with one empty message; anything else
// is trailers-only with the status grpc_status_for_reply names and the reply's body as its message.
inline service_response grpc_reply_of(service_response reply) {
    const grpc_status status = grpc_status_for_reply(reply.status);
    service_response out;
    out.status = 200;
    out.effect = reply.effect;
    out.unmatched = std::move(reply.unmatched);
    out.headers.push_back({"content-type", "application/grpc"});
    out.headers.push_back({"grpc-status", std::to_string(static_cast<int>(status))});
    if (status == grpc_status::ok) {
        out.body = grpc_message_frame({});
    } else if (!reply.body.empty()) {
        out.headers.push_back({"grpc-message", grpc_message_encoded(reply.body.substr(0, 512))});
    }
    return out;
}

}  // namespace faultline::server::detail
