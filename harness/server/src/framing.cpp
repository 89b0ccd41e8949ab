#include "framing.hpp"

#include "http_fields.hpp"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <vector>

namespace faultline::server::detail {

namespace http = boost::beast::http;

namespace {

// The codings of every Transfer-Encoding field, in order, lower-cased. Out of line and cold: most
// requests have no Transfer-Encoding, and this code must not crowd the hot path's inlining.
[[gnu::cold, gnu::noinline]] std::optional<framing_refusal> transfer_coding_problem(
    const http::request<http::string_body>& request) {
    const http::fields& fields = request.base();
    if (fields.find(http::field::content_length) != fields.end()) {
        return framing_refusal{http::status::bad_request, "bad request: Transfer-Encoding with Content-Length"};
    }
    std::vector<std::string> codings;
    const auto [first, last] = fields.equal_range(http::field::transfer_encoding);
    for (auto it = first; it != last; ++it) {
        std::string_view list = to_std(it->value());
        // Each round consumes one comma-separated item, so this ends within list.size() rounds.
        while (!list.empty()) {
            const auto comma = list.find(',');
            std::string_view item = list.substr(0, comma);
            const auto begin = item.find_first_not_of(" \t");
            const auto end = item.find_last_not_of(" \t");
            item = begin == std::string_view::npos ? std::string_view{} : item.substr(begin, end - begin + 1);
            if (!item.empty()) {
                std::string lowered{item};
                std::transform(lowered.begin(), lowered.end(), lowered.begin(),
                               [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
                codings.push_back(std::move(lowered));
            }
            if (comma == std::string_view::npos) break;
            list.remove_prefix(comma + 1);
        }
    }
    if (codings.empty() || codings.back() != "chunked" || std::count(codings.begin(), codings.end(), "chunked") != 1) {
        return framing_refusal{http::status::bad_request,
                               "bad request: Transfer-Encoding must end in chunked, applied once (RFC 9112 6.3)"};
    }
    if (codings.size() > 1) {
        return framing_refusal{http::status::not_implemented,
                               "transfer coding '" + codings.front() + "' is not implemented; only chunked is"};
    }
    return std::nullopt;
}

[[gnu::cold, gnu::noinline]] framing_refusal host_problem(std::size_t hosts) {
    return framing_refusal{http::status::bad_request,
                           hosts == 0 ? "bad request: an HTTP/1.1 request needs a Host (RFC 9112 3.2)"
                                      : "bad request: more than one Host (RFC 9112 3.2)"};
}

}  // namespace

std::optional<framing_refusal> framing_problem(const http::request<http::string_body>& request) {
    // One pass over the few fields, comparing the names Beast already resolved: cheaper than two
    // lookups in its name index, which compare strings.
    std::size_t hosts = 0;
    bool coded = false;
    for (const auto& field : request.base()) {
        if (field.name() == http::field::host) ++hosts;
        coded = coded || field.name() == http::field::transfer_encoding;
    }
    if (hosts > 1 || (hosts == 0 && request.version() >= 11)) return host_problem(hosts);
    if (coded) return transfer_coding_problem(request);
    return std::nullopt;
}

}  // namespace faultline::server::detail
