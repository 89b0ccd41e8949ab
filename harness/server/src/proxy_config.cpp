#include "faultline/server/proxy_config.hpp"

#include "faultline/config/reader.hpp"

#include <boost/asio/ip/address.hpp>

#include <charconv>

namespace faultline::server {

std::optional<host_port> parse_host_port(std::string_view text) {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) return std::nullopt;
    std::string_view address = text.substr(0, colon);
    if (address.size() >= 2 && address.front() == '[' && address.back() == ']') {
        address = address.substr(1, address.size() - 2);
    }
    std::uint16_t port = 0;
    const char* first = text.data() + colon + 1;
    const char* last = text.data() + text.size();
    const auto [end, ec] = std::from_chars(first, last, port);
    if (ec != std::errc{} || end != last) return std::nullopt;
    return host_port{std::string{address}, port};
}

proxy_options proxy_config::options() const {
    proxy_options out;
    out.upstream_address = upstream.address;
    out.upstream_port = upstream.port;
    out.connect_timeout = connect_timeout;
    out.upstream_timeout = upstream_timeout;
    return out;
}

std::optional<proxy_config> parse_proxy_config(const toml::table& table, std::string_view file,
                                               config_errors& errors) {
    config::table_reader r{table, std::string{file}, "[proxy]", errors};
    proxy_config out;
    if (const auto text = r.string("upstream", config::need::required)) {
        const auto parsed = parse_host_port(*text);
        boost::system::error_code ec;
        const auto ip = parsed ? boost::asio::ip::make_address(parsed->address, ec) : boost::asio::ip::address{};
        if (!parsed || ec || parsed->port == 0) {
            r.fail("upstream", "expected ADDRESS:PORT with an IP address and a port in [1, 65535], e.g. "
                               "\"127.0.0.1:9000\", got \"" + *text + "\"");
        } else if (!ip.is_loopback()) {
            r.fail("upstream", "must be a loopback address (a scenario keeps all traffic on loopback; "
                               "`faultline proxy` fronts other hosts), got \"" + *text + "\"");
        } else {
            out.upstream = *parsed;
        }
    }
    using namespace std::chrono_literals;
    const auto millis = [](std::chrono::nanoseconds d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d); };
    if (const auto d = r.duration("connect_timeout", 1ms, 1h)) out.connect_timeout = millis(*d);
    if (const auto d = r.duration("upstream_timeout", 1ms, 1h)) out.upstream_timeout = millis(*d);
    r.finish();
    if (!r.ok()) return std::nullopt;
    return out;
}

}  // namespace faultline::server
