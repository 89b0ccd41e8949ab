#include "faultline/score/control_client.hpp"

#include <charconv>
#include <optional>
#include <thread>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include "faultline/config/duration.hpp"

namespace faultline::score {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

// The parts of the runner's URLs, always "http://HOST:PORT/path".
struct endpoint {
    std::string host;
    std::uint16_t port = 0;
    std::string target;
};

std::optional<endpoint> split_url(std::string_view url) {
    constexpr std::string_view scheme = "http://";
    if (!url.starts_with(scheme)) return std::nullopt;
    url.remove_prefix(scheme.size());
    const std::size_t slash = url.find('/');
    const std::string_view authority = url.substr(0, slash);
    const std::size_t colon = authority.rfind(':');
    if (colon == std::string_view::npos) return std::nullopt;
    endpoint out;
    out.host = std::string(authority.substr(0, colon));
    const std::string_view port = authority.substr(colon + 1);
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), out.port);
    if (ec != std::errc{} || end != port.data() + port.size() || out.host.empty()) return std::nullopt;
    out.target = slash == std::string_view::npos ? "/" : std::string(url.substr(slash));
    return out;
}

// One attempt on a fresh connection, bounded by `timeout`; true for a complete 2xx response.
bool attempt(const endpoint& to, const control_options& options) {
    asio::io_context io;
    beast::tcp_stream stream(io);
    http::request<http::string_body> request{http::string_to_verb(options.method), to.target, 11};
    request.set(http::field::host, to.host);
    request.set(http::field::connection, "close");
    request.body() = "control";
    request.prepare_payload();
    beast::flat_buffer buffer;
    http::response<http::string_body> response;
    bool succeeded = false;
    boost::system::error_code ec;
    const asio::ip::address address = asio::ip::make_address(to.host, ec);
    if (ec) return false;
    stream.expires_after(options.timeout);
    stream.async_connect(asio::ip::tcp::endpoint{address, to.port}, [&](beast::error_code connect_error) {
        if (connect_error) return;
        http::async_write(stream, request, [&](beast::error_code write_error, std::size_t) {
            if (write_error) return;
            http::async_read(stream, buffer, response, [&](beast::error_code read_error, std::size_t) {
                succeeded = !read_error && response.result_int() / 100 == 2;
            });
        });
    });
    // Bounded: the stream's deadline cancels whatever is still pending.
    io.run_for(options.timeout + std::chrono::seconds{1});
    return succeeded;
}

}  // namespace

std::uint32_t run_control_client(const control_options& options) {
    const std::optional<endpoint> to = split_url(options.url);
    if (!to) return 0;
    std::uint32_t made = 0;
    while (made < options.attempts) {
        ++made;
        if (attempt(*to, options)) break;
        if (made < options.attempts) std::this_thread::sleep_for(options.delay);
    }
    return made;
}

control_runtime runtime_of(std::string_view program) {
    const std::size_t slash = program.rfind('/');
    const std::string_view name = slash == std::string_view::npos ? program : program.substr(slash + 1);
    if (name == "node" || name == "nodejs") return control_runtime::node;
    if (name == "python" || name.starts_with("python3")) return control_runtime::python;
    return control_runtime::builtin;
}

std::string_view runtime_label(control_runtime runtime) {
    switch (runtime) {
    case control_runtime::node: return "Node.js";
    case control_runtime::python: return "Python";
    case control_runtime::builtin: break;
    }
    return "";
}

std::vector<std::string> control_command(const control_program& program, const control_options& options) {
    const std::string url = "{url}" + std::string(control_path_prefix) + "c{op}";
    if (program.runtime != control_runtime::builtin) {
        const auto delay_ms = std::chrono::duration_cast<std::chrono::milliseconds>(options.delay).count();
        return {program.executable, program.script, url, std::to_string(delay_ms), std::to_string(options.attempts)};
    }
    return {program.executable,
            "score",
            "--control-client",
            url,
            "--control-delay",
            config::format_duration(options.delay),
            "--control-attempts",
            std::to_string(options.attempts)};
}

}  // namespace faultline::score
