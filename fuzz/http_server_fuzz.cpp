// Raw request bytes into the fault-injecting server. One server::server runs for the whole process
// on 127.0.0.1 (ephemeral port) with a rule that answers some requests 503 + Retry-After, so both the
// service's and the fault's reply paths run. Each input is written over a fresh TCP connection,
// which is then half-closed; the reply is read until the server closes. A server that neither
// answers nor closes within `read_bound` after the client's EOF is a finding (abort). Inputs naming
// the control API are skipped: they could add a `hang` rule and stall every later input, and the
// control API has its own target (control_api_fuzz).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>

#include "faultline/server/serve_config.hpp"
#include "faultline/server/server.hpp"
#include "faultline/server/server_context.hpp"


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
    std::unique_ptr<faultline::server::server_context> context;
    std::unique_ptr<faultline::server::server> server;
};

running_server start() {
    const auto config = faultline::server::parse_serve_config(rules, "fuzz-rules.toml");
    if (!config.ok()) {
        std::fprintf(stderr, "fuzz rules: %s\n", config.errors.front().message.c_str());
        std::abort();
    }
    running_server s;
    s.context = std::make_unique<faultline::server::server_context>(config.config->model, config.config->rules, 1);
    s.server = std::make_unique<faultline::server::server>(*s.context);
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
    // The client half-closes first, so each input leaves a TIME_WAIT socket on the client's side for
    // a minute; from one source address the ephemeral ports run out after ~28,000 inputs and
    // connect() fails. Each connection comes from the next of 62,500 loopback source addresses.
    static std::uint32_t next_source = 0;
    const std::uint32_t n = next_source++ % 62'500;
    sockaddr_in source{};
    source.sin_family = AF_INET;
    source.sin_addr.s_addr = htonl((127U << 24) | ((1 + n / 250) << 8) | (1 + n % 250));
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&source), sizeof source) != 0) {
        std::fprintf(stderr, "bind a loopback source address: %s\n", std::strerror(errno));
        std::abort();
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    // libFuzzer's once-a-second SIGALRM (-timeout) interrupts blocking calls: EINTR is not a finding.
    // An interrupted connect() goes on in the background; wait for it and read its result.
    int error = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0 ? 0 : errno;
    if (error == EINTR) {
        pollfd writable{fd, POLLOUT, 0};
        while (::poll(&writable, 1, read_bound_seconds * 1000) < 0 && errno == EINTR) {
        }
        socklen_t length = sizeof error;
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
    }
    if (error != 0) {
        std::fprintf(stderr, "connect to the server: %s\n", std::strerror(error));
        std::abort();
    }
    return fd;
}

// For a finding's report: does the server still answer a plain request on a new connection?
bool server_answers(std::uint16_t port) {
    const int fd = connect_to(port);
    constexpr std::string_view request = "GET /kv/probe HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    const bool sent = ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size());
    std::array<char, 64> buf{};
    ssize_t n = -1;
    while (sent && (n = ::recv(fd, buf.data(), buf.size(), 0)) < 0 && errno == EINTR) {
    }
    const bool answered = n > 0;
    ::close(fd);
    return answered;
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
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        sent += static_cast<std::size_t>(n);
    }
    ::shutdown(fd, SHUT_WR);
    std::array<char, 16384> buf{};
    for (;;) {
        const ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
        if (n > 0 || (n < 0 && errno == EINTR)) continue;
        if (n == 0 || errno == ECONNRESET) break;
        std::fprintf(stderr, "the server neither answered nor closed within %d s of the client's EOF; "
                     "a plain GET on a new connection now %s\n",
                     read_bound_seconds, server_answers(s.server->port()) ? "is answered" : "gets no answer either");
        std::abort();
    }
    ::close(fd);
    return 0;
}
