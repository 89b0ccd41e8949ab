// Private to the server: the byte stream of one accepted HTTP connection — the TCP socket itself, or
// TLS over it (Asio SSL). http_connection reads and writes through it and reaches the TCP socket
// (options, resets, closes, the peer) through socket(): a fault acts on TCP whatever runs over it,
// so a reset is an RST and a lost reply a close without TLS's close_notify, as a crashed server's.
#pragma once

#include "write_now.hpp"

#include "faultline/server/listener.hpp"

#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>

#include <optional>
#include <utility>

namespace faultline::server::detail {

class connection_stream {
public:
    // TLS when `tls` is given (the listener's context, which outlives the connection).
    connection_stream(listener_socket socket, boost::asio::ssl::context* tls) : socket_{std::move(socket)} {
        if (tls) tls_.emplace(socket_, *tls);
    }

    listener_socket& socket() { return socket_; }
    const listener_socket& socket() const { return socket_; }
    bool secure() const { return tls_.has_value(); }
    // The TLS stream (secure() only): its handshake and close_notify, and OpenSSL's handle.
    boost::asio::ssl::stream<listener_socket&>& tls() { return *tls_; }

    template <class Buffers, class Handler>
    void async_read_some(const Buffers& buffers, Handler&& handler) {
        if (tls_) return tls_->async_read_some(buffers, std::forward<Handler>(handler));
        socket_.async_read_some(buffers, std::forward<Handler>(handler));
    }

    template <class Buffers, class Handler>
    void async_write(const Buffers& buffers, Handler&& handler) {
        if (tls_) return boost::asio::async_write(*tls_, buffers, std::forward<Handler>(handler));
        boost::asio::async_write(socket_, buffers, std::forward<Handler>(handler));
    }

    // write_now.hpp's inline write on plain TCP. Over TLS nothing goes inline (sent = 0, false): a
    // record OpenSSL began cannot be left half-written for the reactor to finish.
    bool write_now(const head_and_body& buffers, boost::system::error_code& ec, std::size_t& sent) {
        if (tls_) {
            sent = 0;
            return false;
        }
        return detail::write_now(socket_, buffers, ec, sent);
    }

private:
    listener_socket socket_;
    std::optional<boost::asio::ssl::stream<listener_socket&>> tls_;
};

}  // namespace faultline::server::detail
