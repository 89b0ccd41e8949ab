// The `[server]` table of a scenario or rules file: which service the server plays, how it finds
// operation identities, its idempotency mode and its journal bound. Validation is strict and read
// through config::table_reader: unknown keys, wrong types and bad values are reported as
// `file:line:column: [server]: key: message` (or `[[server.endpoint]]: …`), listing the allowed keys
// or values. Other parts of the server may own further keys of the same table; they pass them
// as `extra_keys` so they are not reported as unknown (and parse them themselves).
//
//   [server]
//   service = "default"              # "default" (built-in endpoints) | "empty" (declared ones only)
//   idempotency = "keys"             # "off" (default) | "keys"
//   idempotency_required = false     # keys mode: refuse non-idempotent requests without a key (400)
//   identity_header = "X-Request-Id" # operation identity from this header when no Idempotency-Key
//   identity_field = "order_id"      # else from this top-level JSON body field
//   catch_all = "not_found"          # unmatched requests: "not_found" (404 naming the nearest
//                                    # endpoint, journaled as unmatched) | "none" (200 ok, no
//                                    # effect) | "by_method" (200 ok, effect by method)
//   journal_max_records = 1000000    # in-memory journal bound (> 0)
//
//   # limits the server enforces on its clients (server_options.hpp's server_limits)
//   header_timeout = "10s"           # accept / first byte -> request read, else closed (1ms..1h)
//   idle_timeout = "60s"             # kept-alive connection idle between requests (1ms..24h)
//   write_timeout = "30s"            # a response write the client does not take, then reset (1ms..1h)
//   max_connections = 4096           # open service connections (1..1000000); at the cap the
//                                    # longest-idle kept-alive one is closed, else the new one
//   max_fault_wait = "1h"            # longest delay / hang / queue wait a rule may ask (1ms..24h)
//   max_concurrent_streams = 100     # an HTTP/2 connection's SETTINGS_MAX_CONCURRENT_STREAMS (1..10000)
//
//   [[server.endpoint]]              # matched before the built-in ones, in order
//   method = "POST"                  # or "*"
//   path = "/orders/{id}/pay"        # `{name}` = one segment, final `*` = the rest
//   effect = "non_idempotent"        # | "idempotent_write" | "read" | "none"
//   status = 201                     # 100..599, default 200
//   body = '{"paid":{n}}'            # "{n}" = how many times this endpoint ran
//   content_type = "application/json"
#pragma once

#include "faultline/core/config_error.hpp"
#include "faultline/server/identity.hpp"
#include "faultline/server/idempotency.hpp"
#include "faultline/server/server_options.hpp"
#include "faultline/server/service.hpp"

#include <toml++/toml.h>

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string_view>

namespace faultline::server {

struct model_config {
    service_config service;
    identity_config identity;
    idempotency_config idempotency;
    std::size_t journal_max_records = 1'000'000;
    server_limits limits;
};

// Parses `table` (the value of `[server]`). `file` names the source in errors when toml++ does not
// know it. Returns nullopt and appends to `errors` if anything is wrong (all problems are reported).
std::optional<model_config> parse_model_config(const toml::table& table, std::string_view file,
                                               config_errors& errors,
                                               std::initializer_list<std::string_view> extra_keys = {});

}  // namespace faultline::server
