// gRPC's status codes (grpc/doc/statuscodes.md), named as gRPC names them: the fault kind that sends
// one, the journal that records it and the checks that judge a service config's
// retryableStatusCodes all read this one table.
#pragma once

#include <array>
#include <cstdint>
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

}  // namespace faultline
