// Control-API request bodies: POST /__faultline/rules with a fuzzed body, as JSON or as TOML (the
// first byte picks the content type and whether a ?position= query is sent), straight into
// control_api::handle — no sockets. After each input the rules are deleted again, so every input
// starts from the same empty rule set and a finding replays alone.
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/verb.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "faultline/server/control_api.hpp"
#include "faultline/server/server_context.hpp"

namespace http = boost::beast::http;
using faultline::server::control_api;

namespace {

faultline::server::server_context& context() {
    static faultline::server::server_context ctx{{}, {}, 1};
    return ctx;
}

control_api::request make_request(http::verb verb, std::string target) {
    control_api::request req{verb, target, 11};
    req.set(http::field::host, "127.0.0.1");
    return req;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    static const control_api api{context(), {}};
    const std::uint8_t selector = data[0];
    auto req = make_request(http::verb::post, (selector & 2) != 0 ? "/__faultline/rules?position=0" : "/__faultline/rules");
    req.set(http::field::content_type, (selector & 1) != 0 ? "application/toml" : "application/json");
    req.body().assign(reinterpret_cast<const char*>(data) + 1, size - 1);
    req.prepare_payload();
    const auto res = api.handle(req);
    // handle() answers every request; a 5xx means an exception escaped a parser.
    if (res.result_int() >= 500) std::abort();
    (void)api.handle(make_request(http::verb::delete_, "/__faultline/rules"));
    return 0;
}
