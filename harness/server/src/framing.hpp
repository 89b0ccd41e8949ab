// Private to the server: what a request's head must satisfy before it is an attempt, in every mode
// (RFC 9112). A request the service model would refuse, the proxy refuses too, by this same code:
//   - §6.1, §6.3: a Transfer-Encoding must end in `chunked`, name it once, and come without
//     Content-Length (ambiguous framing: request smuggling) — 400; a coding besides the final
//     chunked (`gzip, chunked`) is one this server does not decode — 501;
//   - §3.2: an HTTP/1.1 request has exactly one Host — 400 (two Hosts would let one part of a chain
//     judge the first and another the second).
#pragma once

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/string_body.hpp>

#include <optional>
#include <string>

namespace faultline::server::detail {

struct framing_refusal {
    boost::beast::http::status status;
    std::string message;
};

// Why the request must be refused, or nullopt. Cheap for the usual request (one Host, no
// Transfer-Encoding); the rest is out of line.
std::optional<framing_refusal> framing_problem(const boost::beast::http::request<boost::beast::http::string_body>& request);

}  // namespace faultline::server::detail
