// Private to the server: the backend the proxy puts behind the connection — a real service, over a
// pool of kept-alive connections per worker (touched only on that worker's thread, so no lock).
// The exchange:
//   - forwards the request as HTTP/1.1 with the client's fields less the hop-by-hop ones (and
//     Expect: the connection answered 100-continue itself and holds the whole body), exactly one
//     Host (the client's; for an HTTP/1.0 client without one, the upstream's), its own framing;
//   - never sends a request twice: a pooled connection is checked before the write (one peek), and
//     one found closed is replaced; a connection that dies after the write (the upstream may have
//     read the request, and executed it) is the attempt's outcome — 502, journaled `closed` or
//     `reset` — whatever the method;
//   - reads 1xx interim replies before the final one: 100 is dropped (the connection sent its
//     own), 103 and the others are handed on ahead of the reply, 101 (nothing asked to upgrade) is a
//     broken reply (502, `bad_reply`);
//   - resolves the upstream's name at start() (Docker and Kubernetes service names), and tries
//     each address it resolved to in turn on each new connection;
//   - speaks TLS to it when asked (SNI with its name, the chain and name verified unless
//     verification is off), the TLS session pooled with its connection.
// An attempt on a non-idempotent or idempotent-write route (the [server] routes) commits when the
// upstream answers it with a 2xx: the record's effect and a ledger entry.
#pragma once

#include "backend.hpp"

#include "faultline/server/listener.hpp"
#include "faultline/server/server_context.hpp"
#include "faultline/tls/contexts.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/system/error_code.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace faultline::server::detail {

class connection_stream;

struct upstream_settings {
    std::string host = "127.0.0.1";  // a name or an IP address
    std::uint16_t port = 0;
    std::chrono::milliseconds connect_timeout{2000};    // each new connection, else 502 (connect_timeout)
    std::chrono::milliseconds upstream_timeout{30000};  // forwarded -> complete reply, else 504
    std::size_t body_limit = 64 * 1024 * 1024;          // reply bodies; larger are a 502
    std::size_t idle_per_worker = 256;                  // kept-alive connections pooled per worker
    std::size_t workers = 1;
    std::optional<tls::client_options> tls;             // TLS to the upstream (nullopt: plain TCP)
};

class upstream_backend final : public backend {
public:
    upstream_backend(server_context& context, upstream_settings settings);
    ~upstream_backend() override;

    // Resolves the upstream once, before the proxy listens. Errors: the name does not resolve.
    boost::system::error_code resolve();

    std::unique_ptr<backend_channel> open_channel(std::size_t worker, listener_executor executor) override;
    std::optional<std::chrono::nanoseconds> watch_period() const override;
    bool stamps_replies() const override { return false; }

    // Closes the pooled connections; once the workers are joined (nothing else touches the pools).
    void close_idle();

    std::uint64_t forwarded() const { return forwarded_.load(); }
    std::uint64_t connects() const { return connects_.load(); }
    std::uint64_t failures() const { return failures_.load(); }

private:
    friend class upstream_channel;

    struct idle_connection {
        std::unique_ptr<connection_stream> stream;  // a TLS session stays with its socket
        boost::beast::flat_buffer buffer;  // kept, so a reused connection reads into memory it has
    };

    server_context& context_;
    const upstream_settings settings_;
    const tls::context_ptr tls_;  // with settings_.tls
    std::vector<boost::asio::ip::tcp::endpoint> endpoints_;
    std::vector<std::vector<idle_connection>> pools_;  // one per worker
    std::atomic<std::uint64_t> forwarded_{0};
    std::atomic<std::uint64_t> connects_{0};
    std::atomic<std::uint64_t> failures_{0};
};

}  // namespace faultline::server::detail
