// An HTTP/2 client for the server's integration tests, on nghttp2's client API: one connection to
// 127.0.0.1, plain (h2c by prior knowledge) or TLS (ALPN offering h2, trusting the given CA), any
// number of requests sent at once as concurrent streams, each stream's reply kept as it came —
// status, fields, body, or the RST_STREAM code that ended it. Bounded by `run_for`: a silent server
// makes a test fail, never hang. Not thread-safe; each test owns its client.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace faultline::server::testing {

struct h2_request {
    h2_request(std::string m, std::string p, std::string b = {},
               std::vector<std::pair<std::string, std::string>> h = {})
        : method{std::move(m)}, path{std::move(p)}, body{std::move(b)}, headers{std::move(h)} {}

    std::string method;
    std::string path;
    std::string body;
    std::vector<std::pair<std::string, std::string>> headers;
};

struct h2_reply {
    std::int32_t stream = 0;
    int status = 0;  // 0: no HEADERS came
    std::map<std::string, std::string> headers;
    std::string body;
    std::optional<std::uint32_t> reset_code;  // the stream's RST_STREAM error code, when one ended it
    bool closed = false;                      // the stream ended (END_STREAM or RST_STREAM)
    std::chrono::steady_clock::time_point first_data{};  // when the first body byte arrived
    std::chrono::steady_clock::time_point closed_at{};
};

struct h2_result {
    std::string connect_error;  // connecting, the TLS handshake, or a server that chose no h2
    std::string alpn;           // what ALPN chose (TLS only)
    std::vector<h2_reply> replies;  // in the order the requests were given
    bool timed_out = false;
    std::optional<std::uint32_t> goaway_code;
    std::optional<std::int32_t> goaway_last_stream;
};

struct h2_client_options {
    std::optional<std::string> trusted_ca_pem;  // TLS with this CA; plain h2c without
    std::chrono::milliseconds timeout{5000};
};

// Sends every request on one new connection and waits until each stream has ended (or the timeout).
h2_result h2_exchange(std::uint16_t port, const std::vector<h2_request>& requests, const h2_client_options& options = {});

}  // namespace faultline::server::testing
