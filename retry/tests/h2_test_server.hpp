// A tiny scripted HTTP/2 cleartext (h2c, prior knowledge) server for the retry client's HTTP/2 tests,
// on nghttp2's server session. It listens on 127.0.0.1:0, records every request stream it reads
// (with its connection and stream id) and every RST_STREAM the client sends, and answers each
// request with the next step of the test's script: respond, refuse the stream (RST_STREAM
// REFUSED_STREAM), reset it after reading it (RST_STREAM with a code), send response headers and
// then reset it, GOAWAY below the stream (never processed), GOAWAY covering it and close the
// connection (the lost response), or hang. Once the script runs out it answers 200 "ok".
// `hold_replies_until(n)` holds every reply until n requests arrived, so a test can prove they were
// in flight at once. The retry library must not depend on the harness, hence this server rather
// than faultline's own.
//
// Ownership: everything runs on the test's io_context (single-threaded; not thread-safe). Sessions
// hold the shared state, so destroying the server before the io_context is safe.
#pragma once

#include <nghttp2/nghttp2.h>

#include <boost/asio/buffer.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace faultline::retry::testing {

namespace h2 {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

enum class step_kind { respond, refuse, reset, headers_then_reset, goaway_before, goaway_after, hang };

struct step {
    step_kind kind = step_kind::respond;
    int status = 200;
    std::string body;
    std::uint32_t code = NGHTTP2_NO_ERROR;  // reset, headers_then_reset: the RST_STREAM code

    static step respond(int status_code, std::string text = {}) { return {step_kind::respond, status_code, std::move(text), 0}; }
    static step refuse() { return {step_kind::refuse, 0, {}, NGHTTP2_REFUSED_STREAM}; }
    static step reset(std::uint32_t rst_code) { return {step_kind::reset, 0, {}, rst_code}; }
    static step headers_then_reset(std::uint32_t rst_code) {
        return {step_kind::headers_then_reset, 200, {}, rst_code};
    }
    static step goaway_before() { return {step_kind::goaway_before, 0, {}, NGHTTP2_NO_ERROR}; }
    static step goaway_after() { return {step_kind::goaway_after, 0, {}, NGHTTP2_INTERNAL_ERROR}; }
    static step hang() { return {step_kind::hang, 0, {}, 0}; }
};

struct request {
    std::string method;
    std::string path;
    std::map<std::string, std::string> headers;  // lower-case names, pseudo-headers included
    std::string body;
    int connection = 0;  // 1-based, in accept order
    std::int32_t stream = 0;
};

class server {
public:
    explicit server(asio::io_context& io, std::uint32_t max_concurrent_streams = 100)
        : state_{std::make_shared<shared>(io, max_concurrent_streams)} {
        state_->acceptor.open(tcp::v4());
        state_->acceptor.set_option(asio::socket_base::reuse_address(true));
        state_->acceptor.bind({asio::ip::make_address_v4("127.0.0.1"), 0});
        state_->acceptor.listen();
        accept(state_);
    }
    server(const server&) = delete;
    server& operator=(const server&) = delete;
    ~server() { stop(); }

    std::uint16_t port() const { return state_->acceptor.local_endpoint().port(); }
    void script(std::vector<step> steps) { state_->steps.assign(steps.begin(), steps.end()); }
    void hold_replies_until(std::size_t requests) { state_->hold_until = requests; }
    const std::vector<request>& requests() const { return state_->requests; }
    // (connection, stream) -> the RST_STREAM code the client sent on it.
    const std::map<std::pair<int, std::int32_t>, std::uint32_t>& client_resets() const { return state_->client_resets; }
    int accepted_connections() const { return state_->accepted; }
    int closed_connections() const { return state_->closed; }  // ended by the client (EOF or reset)
    // Called when a client acknowledged the server's SETTINGS (it applies them from then on).
    void on_settings_acked(std::function<void()> callback) { state_->on_settings_acked = std::move(callback); }

    void stop() {
        error_code ignored;
        state_->acceptor.close(ignored);
        for (auto& weak : state_->sessions) {
            if (auto s = weak.lock()) s->socket.close(ignored);
        }
    }

private:
    struct session;

    struct shared {
        shared(asio::io_context& io, std::uint32_t streams) : acceptor{io}, max_concurrent_streams{streams} {}
        tcp::acceptor acceptor;
        std::uint32_t max_concurrent_streams;
        std::deque<step> steps;
        std::vector<request> requests;
        std::map<std::pair<int, std::int32_t>, std::uint32_t> client_resets;
        std::vector<std::weak_ptr<session>> sessions;
        std::function<void()> on_settings_acked;
        std::size_t hold_until = 0;
        // Replies held until hold_until requests arrived: (session, stream, step).
        std::vector<std::tuple<std::weak_ptr<session>, std::int32_t, step>> held;
        int accepted = 0;
        int closed = 0;
    };

    struct session : std::enable_shared_from_this<session> {
        session(std::shared_ptr<shared> s, tcp::socket sock, int id)
            : state{std::move(s)}, socket{std::move(sock)}, connection{id} {
            nghttp2_session_callbacks* callbacks = nullptr;
            nghttp2_session_callbacks_new(&callbacks);
            nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, &on_begin_headers);
            nghttp2_session_callbacks_set_on_header_callback(callbacks, &on_header);
            nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, &on_data_chunk);
            nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, &on_frame_recv);
            nghttp2_session_server_new(&h2, callbacks, this);
            nghttp2_session_callbacks_del(callbacks);
        }
        ~session() { nghttp2_session_del(h2); }

        void start() {
            const nghttp2_settings_entry limit{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, state->max_concurrent_streams};
            nghttp2_submit_settings(h2, NGHTTP2_FLAG_NONE, &limit, 1);
            flush();
            read();
        }

        void read() {
            socket.async_read_some(asio::buffer(buffer), [self = shared_from_this()](error_code ec, std::size_t n) {
                if (ec) {
                    if (ec != asio::error::operation_aborted) ++self->state->closed;
                    return self->socket.close(ec);
                }
                if (nghttp2_session_mem_recv(self->h2, self->buffer.data(), n) < 0) return self->socket.close(ec);
                self->act();
                self->flush();
                self->read();
            });
        }

        void flush() {
            if (writing || !socket.is_open()) return;
            out.clear();
            for (;;) {
                const std::uint8_t* data = nullptr;
                const auto n = nghttp2_session_mem_send(h2, &data);
                if (n <= 0) break;
                out.append(reinterpret_cast<const char*>(data), static_cast<std::size_t>(n));
            }
            if (out.empty()) {
                // A GOAWAY went out and nothing is left to answer (or the step ends the connection).
                if (closing || (nghttp2_session_want_read(h2) == 0 && nghttp2_session_want_write(h2) == 0)) {
                    error_code ignored;
                    socket.close(ignored);
                }
                return;
            }
            writing = true;
            asio::async_write(socket, asio::buffer(out), [self = shared_from_this()](error_code ec, std::size_t) {
                self->writing = false;
                if (!ec) self->flush();
            });
        }

        // Requests completed during the last receive, answered outside nghttp2's callbacks.
        void act() {
            for (const std::int32_t stream : complete) {
                request& r = incoming[stream];
                r.connection = connection;
                r.stream = stream;
                state->requests.push_back(r);
                step next = step::respond(200, "ok");
                if (!state->steps.empty()) {
                    next = std::move(state->steps.front());
                    state->steps.pop_front();
                }
                state->held.emplace_back(weak_from_this(), stream, std::move(next));
            }
            complete.clear();
            if (state->requests.size() < state->hold_until) return;
            auto held = std::move(state->held);
            state->held.clear();
            for (auto& [weak, stream, next] : held) {
                if (auto s = weak.lock()) {
                    s->answer(stream, next);
                    s->flush();
                }
            }
        }

        void answer(std::int32_t stream, const step& next) {
            switch (next.kind) {
                case step_kind::respond: {
                    bodies[stream] = {next.body, 0};
                    const std::string status = std::to_string(next.status);
                    const std::string length = std::to_string(next.body.size());
                    std::array<nghttp2_nv, 2> nva{nv(":status", status), nv("content-length", length)};
                    nghttp2_data_provider provider{};
                    provider.source.ptr = &bodies[stream];
                    provider.read_callback = &read_body;
                    nghttp2_submit_response(h2, stream, nva.data(), nva.size(), &provider);
                    return;
                }
                case step_kind::refuse:
                case step_kind::reset:
                    nghttp2_submit_rst_stream(h2, NGHTTP2_FLAG_NONE, stream, next.code);
                    return;
                case step_kind::headers_then_reset: {
                    const std::string status = std::to_string(next.status);
                    std::array<nghttp2_nv, 1> nva{nv(":status", status)};
                    nghttp2_submit_headers(h2, NGHTTP2_FLAG_NONE, stream, nullptr, nva.data(), nva.size(), nullptr);
                    nghttp2_submit_rst_stream(h2, NGHTTP2_FLAG_NONE, stream, next.code);
                    return;
                }
                case step_kind::goaway_before:
                    nghttp2_submit_goaway(h2, NGHTTP2_FLAG_NONE, std::max(0, stream - 2), next.code, nullptr, 0);
                    return;
                case step_kind::goaway_after:
                    nghttp2_submit_goaway(h2, NGHTTP2_FLAG_NONE, stream, next.code, nullptr, 0);
                    // Sent, then the connection ends with no reply: the client cannot know.
                    closing = true;
                    return;
                case step_kind::hang: return;
            }
        }

        static nghttp2_nv nv(const char* name, const std::string& value) {
            return {reinterpret_cast<std::uint8_t*>(const_cast<char*>(name)),
                    reinterpret_cast<std::uint8_t*>(const_cast<char*>(value.data())), std::strlen(name), value.size(),
                    NGHTTP2_NV_FLAG_NONE};
        }

        struct body_source {
            std::string text;
            std::size_t sent = 0;
        };

        static ssize_t read_body(nghttp2_session*, std::int32_t, std::uint8_t* buf, std::size_t length,
                                 std::uint32_t* flags, nghttp2_data_source* source, void*) {
            auto& body = *static_cast<body_source*>(source->ptr);
            const std::size_t n = std::min(length, body.text.size() - body.sent);
            std::memcpy(buf, body.text.data() + body.sent, n);
            body.sent += n;
            if (body.sent == body.text.size()) *flags |= NGHTTP2_DATA_FLAG_EOF;
            return static_cast<ssize_t>(n);
        }

        static session& of(void* user_data) { return *static_cast<session*>(user_data); }

        static int on_begin_headers(nghttp2_session*, const nghttp2_frame* frame, void* user_data) {
            if (frame->hd.type == NGHTTP2_HEADERS) of(user_data).incoming[frame->hd.stream_id] = request{};
            return 0;
        }

        static int on_header(nghttp2_session*, const nghttp2_frame* frame, const std::uint8_t* name,
                             std::size_t namelen, const std::uint8_t* value, std::size_t valuelen, std::uint8_t,
                             void* user_data) {
            request& r = of(user_data).incoming[frame->hd.stream_id];
            const std::string n{reinterpret_cast<const char*>(name), namelen};
            const std::string v{reinterpret_cast<const char*>(value), valuelen};
            if (n == ":method") r.method = v;
            if (n == ":path") r.path = v;
            r.headers[n] = v;
            return 0;
        }

        static int on_data_chunk(nghttp2_session*, std::uint8_t, std::int32_t stream, const std::uint8_t* data,
                                 std::size_t len, void* user_data) {
            of(user_data).incoming[stream].body.append(reinterpret_cast<const char*>(data), len);
            return 0;
        }

        static int on_frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* user_data) {
            session& s = of(user_data);
            const bool request_part = frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA;
            if (request_part && (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0) s.complete.push_back(frame->hd.stream_id);
            if (frame->hd.type == NGHTTP2_RST_STREAM) {
                s.state->client_resets[{s.connection, frame->hd.stream_id}] = frame->rst_stream.error_code;
            }
            if (frame->hd.type == NGHTTP2_SETTINGS && (frame->hd.flags & NGHTTP2_FLAG_ACK) != 0 &&
                s.state->on_settings_acked) {
                s.state->on_settings_acked();
            }
            return 0;
        }

        std::shared_ptr<shared> state;
        tcp::socket socket;
        int connection;
        nghttp2_session* h2 = nullptr;
        std::array<std::uint8_t, 16 * 1024> buffer{};
        std::map<std::int32_t, request> incoming;
        std::map<std::int32_t, body_source> bodies;
        std::vector<std::int32_t> complete;
        std::string out;
        bool writing = false;
        bool closing = false;
    };

    static void accept(std::shared_ptr<shared> s) {
        s->acceptor.async_accept([s](error_code ec, tcp::socket socket) {
            if (ec) return;  // closed by stop()
            error_code ignored;
            socket.set_option(tcp::no_delay(true), ignored);
            auto session_ptr = std::make_shared<session>(s, std::move(socket), ++s->accepted);
            s->sessions.push_back(session_ptr);
            session_ptr->start();
            accept(s);
        });
    }

    std::shared_ptr<shared> state_;
};

}  // namespace h2

}  // namespace faultline::retry::testing
