#include "h2_test_client.hpp"

#include <nghttp2/nghttp2.h>

#include <boost/asio/buffer.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>

#include <array>
#include <cstring>
#include <memory>

namespace faultline::server::testing {

namespace {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
using boost::system::error_code;
using steady = std::chrono::steady_clock;

// One client connection: nghttp2's session between an Asio byte stream and the replies.
class h2_connection {
public:
    h2_connection(asio::io_context& io, const h2_client_options& options, h2_result& result)
        : io_{io}, socket_{io}, result_{result} {
        if (options.trusted_ca_pem) {
            tls_context_.emplace(ssl::context::tls_client);
            tls_context_->add_certificate_authority(asio::buffer(*options.trusted_ca_pem));
            tls_context_->set_verify_mode(ssl::verify_peer);
            static constexpr unsigned char offered[] = {2, 'h', '2'};
            SSL_CTX_set_alpn_protos(tls_context_->native_handle(), offered, sizeof offered);
            tls_.emplace(socket_, *tls_context_);
            tls_->set_verify_callback(ssl::host_name_verification{"127.0.0.1"});
        }
        nghttp2_session_callbacks* callbacks = nullptr;
        nghttp2_session_callbacks_new(&callbacks);
        nghttp2_session_callbacks_set_on_header_callback(callbacks, &on_header);
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, &on_data_chunk);
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, &on_stream_close);
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, &on_frame_recv);
        nghttp2_session_client_new(&session_, callbacks, this);
        nghttp2_session_callbacks_del(callbacks);
    }
    ~h2_connection() { nghttp2_session_del(session_); }

    void run(std::uint16_t port, const std::vector<h2_request>& requests) {
        requests_ = &requests;
        socket_.async_connect({asio::ip::make_address("127.0.0.1"), port}, [this](error_code ec) {
            if (ec) return fail("connect: " + ec.message());
            if (!tls_) return begin();
            tls_->async_handshake(ssl::stream_base::client, [this](error_code hs) {
                if (hs) return fail("handshake: " + hs.message());
                const unsigned char* alpn = nullptr;
                unsigned int size = 0;
                SSL_get0_alpn_selected(tls_->native_handle(), &alpn, &size);
                result_.alpn.assign(reinterpret_cast<const char*>(alpn), size);
                if (result_.alpn != "h2") return fail("the server chose no h2 by ALPN");
                begin();
            });
        });
    }

private:
    void begin() {
        nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, nullptr, 0);
        result_.replies.resize(requests_->size());
        bodies_.resize(requests_->size());
        for (std::size_t i = 0; i < requests_->size(); ++i) {
            const h2_request& r = (*requests_)[i];
            std::vector<std::pair<std::string, std::string>> fields{
                {":method", r.method}, {":path", r.path}, {":scheme", tls_ ? "https" : "http"}, {":authority", "127.0.0.1"}};
            fields.insert(fields.end(), r.headers.begin(), r.headers.end());
            std::vector<nghttp2_nv> nva;
            for (const auto& [name, value] : fields) {
                nva.push_back({reinterpret_cast<std::uint8_t*>(const_cast<char*>(name.data())),
                               reinterpret_cast<std::uint8_t*>(const_cast<char*>(value.data())), name.size(), value.size(),
                               NGHTTP2_NV_FLAG_NONE});
            }
            bodies_[i] = {&r.body, 0};
            nghttp2_data_provider provider{};
            provider.source.ptr = &bodies_[i];
            provider.read_callback = [](nghttp2_session*, std::int32_t, std::uint8_t* buf, std::size_t length,
                                        std::uint32_t* flags, nghttp2_data_source* source, void*) -> ssize_t {
                auto& body = *static_cast<body_source*>(source->ptr);
                const std::size_t n = std::min(length, body.text->size() - body.sent);
                std::memcpy(buf, body.text->data() + body.sent, n);
                body.sent += n;
                if (body.sent == body.text->size()) *flags |= NGHTTP2_DATA_FLAG_EOF;
                return static_cast<ssize_t>(n);
            };
            const std::int32_t id = nghttp2_submit_request(session_, nullptr, nva.data(), nva.size(),
                                                           r.body.empty() ? nullptr : &provider, nullptr);
            result_.replies[i].stream = id;
            index_[id] = i;
        }
        open_ = requests_->size();
        read();
        flush();
    }

    void read() {
        auto handler = [this](error_code ec, std::size_t n) {
            if (ec) return fail_open_streams();
            const auto used = nghttp2_session_mem_recv(session_, buffer_.data(), n);
            if (used < 0) return fail("nghttp2: " + std::string{nghttp2_strerror(static_cast<int>(used))});
            flush();
            if (open_ == 0) return io_.stop();
            read();
        };
        if (tls_) return tls_->async_read_some(asio::buffer(buffer_), handler);
        socket_.async_read_some(asio::buffer(buffer_), handler);
    }

    void flush() {
        if (writing_) return;
        out_.clear();
        for (;;) {
            const std::uint8_t* data = nullptr;
            const auto n = nghttp2_session_mem_send(session_, &data);
            if (n <= 0) break;
            out_.append(reinterpret_cast<const char*>(data), static_cast<std::size_t>(n));
        }
        if (out_.empty()) return;
        writing_ = true;
        auto handler = [this](error_code ec, std::size_t) {
            writing_ = false;
            if (ec) return;
            flush();
        };
        if (tls_) return asio::async_write(*tls_, asio::buffer(out_), handler);
        asio::async_write(socket_, asio::buffer(out_), handler);
    }

    void fail(std::string why) {
        result_.connect_error = std::move(why);
        io_.stop();
    }

    // The connection ended under the streams: they end unanswered.
    void fail_open_streams() { io_.stop(); }

    h2_reply* reply(std::int32_t stream) {
        const auto it = index_.find(stream);
        return it == index_.end() ? nullptr : &result_.replies[it->second];
    }

    static h2_connection& of(void* user_data) { return *static_cast<h2_connection*>(user_data); }

    static int on_header(nghttp2_session*, const nghttp2_frame* frame, const std::uint8_t* name, std::size_t namelen,
                         const std::uint8_t* value, std::size_t valuelen, std::uint8_t, void* user_data) {
        h2_reply* r = of(user_data).reply(frame->hd.stream_id);
        if (r == nullptr) return 0;
        const std::string n{reinterpret_cast<const char*>(name), namelen};
        const std::string v{reinterpret_cast<const char*>(value), valuelen};
        if (n == ":status") {
            r->status = std::stoi(v);
        } else {
            r->headers[n] = v;
        }
        return 0;
    }

    static int on_data_chunk(nghttp2_session*, std::uint8_t, std::int32_t stream, const std::uint8_t* data,
                             std::size_t len, void* user_data) {
        h2_reply* r = of(user_data).reply(stream);
        if (r == nullptr) return 0;
        if (r->body.empty() && len > 0) r->first_data = steady::now();
        r->body.append(reinterpret_cast<const char*>(data), len);
        return 0;
    }

    static int on_frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* user_data) {
        h2_connection& c = of(user_data);
        if (frame->hd.type == NGHTTP2_RST_STREAM) {
            if (h2_reply* r = c.reply(frame->hd.stream_id)) r->reset_code = frame->rst_stream.error_code;
        }
        if (frame->hd.type == NGHTTP2_GOAWAY) {
            c.result_.goaway_code = frame->goaway.error_code;
            c.result_.goaway_last_stream = frame->goaway.last_stream_id;
        }
        return 0;
    }

    static int on_stream_close(nghttp2_session*, std::int32_t stream, std::uint32_t, void* user_data) {
        h2_connection& c = of(user_data);
        h2_reply* r = c.reply(stream);
        if (r == nullptr || r->closed) return 0;
        r->closed = true;
        r->closed_at = steady::now();
        --c.open_;
        return 0;
    }

    struct body_source {
        const std::string* text = nullptr;
        std::size_t sent = 0;
    };

    asio::io_context& io_;
    asio::ip::tcp::socket socket_;
    std::optional<ssl::context> tls_context_;
    std::optional<ssl::stream<asio::ip::tcp::socket&>> tls_;
    nghttp2_session* session_ = nullptr;
    h2_result& result_;
    const std::vector<h2_request>* requests_ = nullptr;
    std::vector<body_source> bodies_;
    std::map<std::int32_t, std::size_t> index_;
    std::array<std::uint8_t, 16 * 1024> buffer_{};
    std::string out_;
    std::size_t open_ = 0;
    bool writing_ = false;
};

}  // namespace

h2_result h2_exchange(std::uint16_t port, const std::vector<h2_request>& requests, const h2_client_options& options) {
    asio::io_context io;
    h2_result result;
    {
        h2_connection connection{io, options, result};
        connection.run(port, requests);
        io.run_for(options.timeout);
        result.timed_out = !io.stopped();
    }
    return result;
}

}  // namespace faultline::server::testing
