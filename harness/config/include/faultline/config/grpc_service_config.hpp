// Reading a gRPC service config (the JSON a gRPC client is given: "methodConfig" with retryPolicy or
// hedgingPolicy, "retryThrottling") into `record::grpc_service_config`, validated as gRFC A6
// validates it. Every problem is reported, each as a `config_error` naming the file, the JSON path
// (`methodConfig[0].retryPolicy.maxAttempts`) and what is allowed; a JSON syntax error carries its
// line and column. gRPC's other keys (waitForReady, loadBalancingConfig, …) are accepted and not read;
// a key gRPC does not have is an error listing the allowed ones.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <variant>

#include "faultline/config/reader.hpp"
#include "faultline/core/config_error.hpp"
#include "faultline/record/grpc_service_config.hpp"

namespace faultline::config {

// Parses `json`; `file` names it in errors.
std::variant<record::grpc_service_config, config_errors> parse_grpc_service_config(std::string_view json,
                                                                                    std::string_view file);

// Reads and parses the file at `path`; an unreadable one is the error "cannot read the gRPC service config".
std::variant<record::grpc_service_config, config_errors> load_grpc_service_config(const std::string& path);

// A TOML key naming a service config file (`service_config = "retry.json"`), read and validated: a
// relative path is taken from the TOML file's folder, as its author sees it (from the current folder
// when the table has no file). Problems are reported through `r` (the key's position, then the
// file's own errors). `config` is null when the key is absent or its file unusable.
struct grpc_service_config_file {
    std::shared_ptr<const record::grpc_service_config> config;
    std::string path;  // absolute
};
grpc_service_config_file read_grpc_service_config_key(table_reader& r, std::string_view key);

}  // namespace faultline::config
