#include "faultline/server/upstream.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>

namespace faultline::server {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

std::vector<tcp::endpoint> resolve_upstream(const std::string& host, std::uint16_t port, error_code& ec) {
    asio::io_context io;
    tcp::resolver resolver{io};
    const auto results = resolver.resolve(host, std::to_string(port), tcp::resolver::numeric_service, ec);
    std::vector<tcp::endpoint> out;
    if (ec) return out;
    for (const auto& entry : results) out.push_back(entry.endpoint());
    if (out.empty()) ec = asio::error::host_not_found;
    return out;
}

error_code probe_upstream(const std::string& host, std::uint16_t port, std::chrono::milliseconds timeout) {
    error_code ec;
    const auto endpoints = resolve_upstream(host, port, ec);
    if (ec) return ec;
    asio::io_context io;
    tcp::socket socket{io};
    error_code result = asio::error::timed_out;
    asio::async_connect(socket, endpoints, [&result](error_code e, const tcp::endpoint&) { result = e; });
    io.run_for(timeout);
    error_code ignored;
    socket.close(ignored);
    return result;
}

}  // namespace faultline::server
