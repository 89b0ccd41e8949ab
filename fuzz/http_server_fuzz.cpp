// Raw request bytes into the fault-injecting server. One harness::server runs for the whole process
// on 127.0.0.1 (ephemeral port) with a rule that answers some requests 503 + Retry-After, so both the
// service's and the fault's reply paths run. Each input is written over a fresh TCP connection,
// which is then half-closed; the reply is read until the server closes. A server that neither
// answers nor closes within `read_bound` after the client's EOF is a finding (abort). Inputs naming
// the control API are skipped: they could add a `hang` rule and stall every later input, and the
// control API has its own target (control_api_fuzz).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string_view>

#include "faultline/server/serve_config.hpp"
#include "faultline/server/server.hpp"
#include "faultline/server/server_context.hpp"

namespace fh = faultline::harness;

namespace {

constexpr int read_bound_seconds = 10;
// Forget the journal and the ledger now and then, so a long run's memory stays flat.
constexpr unsigned reset_every = 4096;

constexpr std::string_view rules = R"(
[[fault]]
name = "busy"
kind = "status"
status = 503
headers = { "Retry-After" = "1" }
[fault.when]
probability = 0.3
)";

struct running_server {
    std::unique_ptr<fh::server_context> context;
    std::unique_ptr<fh::server> server;
};

running_server start() {
    const auto config = fh::parse_serve_config(rules, "fuzz-rules.toml");
    if (!config.ok()) {
        std::fprintf(stderr, "fuzz rules: %s\n", config.errors.front().message.c_str());
        std::abort();
    }
    running_server s;
    s.context = std::make_unique<fh::server_context>(config.config->model, config.config->rules, 1);
    s.server = std::make_unique<fh::server>(*s.context);
    if (const auto ec = s.server->start()) {
        std::fprintf(stderr, "server start: %s\n", ec.message().c_str());
        std::abort();
    }
    return s;
}

running_server& instance() {
    static running_server s = start();
    return s;
}

int connect_to(std::uint16_t port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) std::abort();
    const timeval bound{read_bound_seconds, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &bound, sizeof bound);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &bound, sizeof bound);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) std::abort();
    return fd;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view bytes{reinterpret_cast<const char*>(data), size};
    if (bytes.find("__faultline") != std::string_view::npos) return 0;
    running_server& s = instance();
    static unsigned runs = 0;
    if (++runs % reset_every == 0) s.context->reset();

    const int fd = connect_to(s.server->port());
    std::size_t sent = 0;
    // The server may answer (400) and close before reading everything: a failed send is fine.
    while (sent < size) {
        const ssize_t n = ::send(fd, data + sent, size - sent, MSG_NOSIGNAL);
        if (n <= 0) break;
        sent += static_cast<std::size_t>(n);
    }
    ::shutdown(fd, SHUT_WR);
    std::array<char, 16384> buf{};
    for (;;) {
        const ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
        if (n > 0) continue;
        if (n == 0 || errno == ECONNRESET) break;
        std::fprintf(stderr, "the server neither answered nor closed within %d s of the client's EOF\n",
                     read_bound_seconds);
        std::abort();
    }
    ::close(fd);
    return 0;
}
