// Private to the server: how a message goes out on a non-blocking socket, on either side of the
// proxy. What the socket takes at once is written inline (a small message almost always fits the
// socket buffer, and finishing inline spares a trip through the reactor, a system call that
// dominates on loopback); only the rest waits for the reactor.
#pragma once

#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/beast/core/buffers_suffix.hpp>
#include <boost/system/error_code.hpp>

#include <array>
#include <cstddef>

namespace faultline::server::detail {

using head_and_body = std::array<boost::asio::const_buffer, 2>;

// Writes what the socket takes of `buffers` now (`sent` bytes). True when the write is over: all
// of it went, or it failed (`ec`); false when the rest (rest_of(buffers, sent)) must wait.
template <class Socket>
bool write_now(Socket& socket, const head_and_body& buffers, boost::system::error_code& ec, std::size_t& sent) {
    sent = socket.write_some(buffers, ec);
    if (ec == boost::asio::error::would_block || ec == boost::asio::error::try_again) ec = {};
    return ec || sent == boost::asio::buffer_size(buffers);
}

inline boost::beast::buffers_suffix<head_and_body> rest_of(const head_and_body& buffers, std::size_t sent) {
    boost::beast::buffers_suffix<head_and_body> rest{buffers};
    rest.consume(sent);
    return rest;
}

}  // namespace faultline::server::detail
