// Raw bytes into the fault-injecting proxy from both sides. One server::proxy runs for the whole
// process on 127.0.0.1 in front of an upstream of this file's own (a thread with a listening socket),
// with a rule that answers some requests 503 after forwarding them, so the fault path runs on top of
// the upstream's reply. An input is the client's bytes, then optionally the separator `\0UPSTREAM\0`
// and the upstream's bytes (without it the upstream answers a plain 200). Each input: the client's
// bytes go over a fresh connection, half-closed; whatever connection the proxy opens to the upstream
// is read up to the end of a request head and answered with the upstream's bytes, then closed; the
// client reads until the proxy closes. A proxy that neither answers nor closes within `read_bound`
// after the client's EOF is a finding (abort).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "faultline/server/proxy.hpp"
#include "faultline/server/serve_config.hpp"
#include "faultline/server/server_context.hpp"


namespace {

constexpr int read_bound_seconds = 10;
// Forget the journal and the ledger now and then, so a long run's memory stays flat.
constexpr unsigned reset_every = 4096;
constexpr std::string_view separator{"\0UPSTREAM\0", 10};
constexpr std::string_view plain_reply = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

constexpr std::string_view rules = R"(
[[fault]]
name = "busy-after-commit"
kind = "status"
status = 503
phase = "after"
headers = { "Retry-After" = "1" }
[fault.when]
probability = 0.3
)";

void fail(const char* what) {
    std::fprintf(stderr, "%s: %s\n", what, std::strerror(errno));
    std::abort();
}

void set_timeouts(int fd, int seconds) {
    const timeval bound{seconds, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &bound, sizeof bound);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &bound, sizeof bound);
}

void send_all(int fd, std::string_view bytes) {
    std::size_t sent = 0;
    // The peer may close before reading everything: a failed send ends the input's write, no more.
    while (sent < bytes.size()) {
        const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        sent += static_cast<std::size_t>(n);
    }
}

// The upstream: one connection at a time, on a thread of its own for the whole process.
class upstream {
public:
    upstream() {
        listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
        if (listener_ < 0) fail("upstream socket");
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t length = sizeof addr;
        if (::bind(listener_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
            ::listen(listener_, 64) != 0 || ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &length) != 0) {
            fail("upstream listen");
        }
        port_ = ntohs(addr.sin_port);
        thread_ = std::thread{[this] { serve(); }};
        thread_.detach();  // runs as long as the process
    }

    std::uint16_t port() const { return port_; }
    void answer_with(std::string_view bytes) {
        const std::lock_guard lock{mutex_};
        reply_.assign(bytes);
    }

private:
    void serve() {
        for (;;) {
            const int fd = ::accept(listener_, nullptr, nullptr);
            if (fd < 0) {
                if (errno == EINTR || errno == ECONNABORTED) continue;
                fail("upstream accept");
            }
            set_timeouts(fd, 2);
            // Up to the end of a request head (or what arrives within the bound), then the reply.
            std::string request;
            std::array<char, 4096> buf{};
            while (request.find("\r\n\r\n") == std::string::npos && request.size() < 65536) {
                const ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
                if (n < 0 && errno == EINTR) continue;
                if (n <= 0) break;
                request.append(buf.data(), static_cast<std::size_t>(n));
            }
            std::string reply;
            {
                const std::lock_guard lock{mutex_};
                reply = reply_;
            }
            send_all(fd, reply);
            ::close(fd);
        }
    }

    int listener_ = -1;
    std::uint16_t port_ = 0;
    std::thread thread_;
    std::mutex mutex_;
    std::string reply_;
};

struct running_proxy {
    std::unique_ptr<upstream> behind;
    std::unique_ptr<faultline::server::server_context> context;
    std::unique_ptr<faultline::server::proxy> proxy;
};

running_proxy start() {
    const auto config = faultline::server::parse_serve_config(rules, "fuzz-rules.toml");
    if (!config.ok()) {
        std::fprintf(stderr, "fuzz rules: %s\n", config.errors.front().message.c_str());
        std::abort();
    }
    running_proxy p;
    p.behind = std::make_unique<upstream>();
    p.context = std::make_unique<faultline::server::server_context>(config.config->model, config.config->rules, 1);
    faultline::server::proxy_options options;
    options.upstream_port = p.behind->port();
    options.upstream_timeout = std::chrono::seconds{3};
    options.connect_timeout = std::chrono::seconds{2};
    p.proxy = std::make_unique<faultline::server::proxy>(*p.context, options);
    if (const auto ec = p.proxy->start()) {
        std::fprintf(stderr, "proxy start: %s\n", ec.message().c_str());
        std::abort();
    }
    return p;
}

running_proxy& instance() {
    static running_proxy p = start();
    return p;
}

// A client socket that leaves no TIME_WAIT behind when closed (an RST once the proxy has closed its
// side), so a long run never runs out of ephemeral ports.
int connect_to(std::uint16_t port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) fail("client socket");
    set_timeouts(fd, read_bound_seconds);
    const linger abort_on_close{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort_on_close, sizeof abort_on_close);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    // libFuzzer's SIGALRM interrupts blocking calls: an interrupted connect() goes on in the
    // background, and its outcome is read once the socket is writable.
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) return fd;
    if (errno != EINTR) fail("connect to the proxy");
    pollfd writable{fd, POLLOUT, 0};
    while (::poll(&writable, 1, read_bound_seconds * 1000) < 0 && errno == EINTR) {
    }
    int error = 0;
    socklen_t length = sizeof error;
    ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
    errno = error;
    if (error != 0) fail("connect to the proxy");
    return fd;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input{reinterpret_cast<const char*>(data), size};
    const auto split = input.find(separator);
    const std::string_view client = input.substr(0, split);
    const std::string_view upstream_bytes = split == std::string_view::npos ? plain_reply : input.substr(split + separator.size());
    running_proxy& p = instance();
    static unsigned runs = 0;
    if (++runs % reset_every == 0) p.context->reset();
    p.behind->answer_with(upstream_bytes);

    const int fd = connect_to(p.proxy->port());
    send_all(fd, client);
    ::shutdown(fd, SHUT_WR);
    std::array<char, 16384> buf{};
    for (;;) {
        const ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
        if (n > 0 || (n < 0 && errno == EINTR)) continue;
        if (n == 0 || errno == ECONNRESET) break;
        std::fprintf(stderr, "the proxy neither answered nor closed within %d s of the client's EOF\n",
                     read_bound_seconds);
        std::abort();
    }
    ::close(fd);
    return 0;
}
