// HTTP/2 attempts on nghttp2's client session: each attempt is one stream; a connection carries as
// many at once as the server's SETTINGS_MAX_CONCURRENT_STREAMS allows, and an attempt finding every
// connection full opens another. nghttp2 does the framing, HPACK and flow control; this file moves
// its bytes over the connection and turns a stream's end into an attempt outcome (the table in
// http_client.hpp).
#include <nghttp2/nghttp2.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "transport.hpp"

namespace faultline::retry::transport_detail {

namespace {

constexpr std::size_t read_chunk = 16 * 1024;
constexpr std::size_t write_batch = 64 * 1024;
// What a connection is assumed to allow until the server's SETTINGS say otherwise: RFC 9113 5.1.2
// asks servers for no fewer than 100, and nghttp2 holds a client to 100 until then.
constexpr std::uint32_t assumed_concurrent_streams = 100;

attempt_outcome transport_outcome(outcome_kind kind) { return attempt_outcome::transport(kind); }

bool is_cancelled(const asio::cancellation_state& state) {
    return state.cancelled() != asio::cancellation_type::none;
}

// RFC 9113 8.2.2: connection-specific fields have no place in HTTP/2; Host becomes :authority.
bool sendable_field(std::string_view lower_name) {
    return lower_name != "connection" && lower_name != "keep-alive" && lower_name != "proxy-connection" &&
           lower_name != "transfer-encoding" && lower_name != "upgrade" && lower_name != "te" && lower_name != "host";
}

std::string lowercase(std::string_view name) {
    std::string out{name};
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    return out;
}

nghttp2_nv field(const std::string& name, const std::string& value) {
    // nghttp2 copies names and values when the request is submitted.
    return {reinterpret_cast<std::uint8_t*>(const_cast<char*>(name.data())),
            reinterpret_cast<std::uint8_t*>(const_cast<char*>(value.data())), name.size(), value.size(),
            NGHTTP2_NV_FLAG_NONE};
}

// One attempt's stream, shared by the attempt (which waits on `wake`) and its connection (which
// ends it). Touched only on the client's strand.
struct h2_exchange {
    explicit h2_exchange(const asio::any_io_executor& executor) : wake{executor} {}

    // Sets the outcome once and wakes the attempt.
    void finish(attempt_outcome result) {
        if (outcome) return;
        outcome = result;
        wake.cancel();
    }

    // Expires at the attempt's timeout; cancelled to wake the attempt when something happened.
    asio::steady_timer wake;
    std::string body;  // the request body, read by nghttp2's data provider
    std::size_t body_sent = 0;
    std::int32_t stream = 0;     // 0 until submitted
    bool request_sent = false;   // its HEADERS went out
    bool status_seen = false;    // a final :status arrived
    response_message response;
    std::optional<attempt_outcome> outcome;
    std::string failure_reason;
};

class h2_connection : public std::enable_shared_from_this<h2_connection> {
public:
    // Holds what it needs by value or shared: it may outlive the client while it connects or winds down.
    h2_connection(std::shared_ptr<connector> connections, std::uint64_t body_limit)
        : connections_{std::move(connections)}, body_limit_{body_limit}, conn_{connections_->make()} {
        nghttp2_session_callbacks* callbacks = nullptr;
        nghttp2_session_callbacks_new(&callbacks);
        nghttp2_session_callbacks_set_on_header_callback(callbacks, &on_header);
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, &on_data_chunk);
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, &on_frame_recv);
        nghttp2_session_callbacks_set_on_frame_send_callback(callbacks, &on_frame_send);
        nghttp2_session_callbacks_set_on_frame_not_send_callback(callbacks, &on_frame_not_send);
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, &on_stream_close);
        nghttp2_option* option = nullptr;
        nghttp2_option_new(&option);
        nghttp2_option_set_peer_max_concurrent_streams(option, assumed_concurrent_streams);
        nghttp2_session_client_new2(&session_, callbacks, this, option);
        nghttp2_option_del(option);
        nghttp2_session_callbacks_del(callbacks);
    }
    ~h2_connection() {
        // Streams are gone with the connection: no callback may reach them while the session is freed.
        streams_.clear();
        nghttp2_session_del(session_);
    }
    h2_connection(const h2_connection&) = delete;
    h2_connection& operator=(const h2_connection&) = delete;

    bool connecting() const { return state_ == state::connecting; }
    bool closed() const { return state_ == state::closed; }
    // Takes one more stream: not closed, no GOAWAY, below the server's concurrency limit.
    bool has_room() const {
        return state_ != state::closed && nghttp2_session_check_request_allowed(session_) != 0 &&
               streams_in_use_ < nghttp2_session_get_remote_settings(session_, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);
    }

    // Counts `exchange` as one of its streams from now on, and wakes it once connected (or ends it
    // if connecting fails).
    void reserve(const std::shared_ptr<h2_exchange>& exchange) {
        ++streams_in_use_;
        if (connecting()) waiting_.push_back(exchange);
    }
    // The attempt gave up before it submitted its request.
    void release(const std::shared_ptr<h2_exchange>& exchange) {
        std::erase(waiting_, exchange);
        stream_done();
    }

    // Connects (bounded by `timeout`, as an HTTP/1.1 connect is), then reads until the connection ends.
    static asio::awaitable<void> run(std::shared_ptr<h2_connection> self, std::optional<duration> timeout) {
        co_await self->establish(timeout);
        if (self->closed()) co_return;
        co_await self->read_loop();
    }

    // Sends `message` as a new stream for `exchange` (reserved); ends it at once if nghttp2 refuses.
    void submit(const std::shared_ptr<h2_exchange>& exchange, const request_message& message) {
        // Lost between its connect and this attempt resuming: the request never left.
        if (closed()) return exchange->finish(transport_outcome(outcome_kind::reset_before_write));
        const std::string method{message.method_string()};
        const std::string path{message.target()};
        const std::string scheme = conn_->secure ? "https" : "http";
        std::string authority = connections_->host();
        if (const auto host = message.find(http::field::host); host != message.end()) authority = host->value();
        std::vector<std::pair<std::string, std::string>> fields;
        for (const auto& f : message) {
            std::string name = lowercase(f.name_string());
            if (sendable_field(name)) fields.emplace_back(std::move(name), std::string{f.value()});
        }
        const std::string method_name = ":method", path_name = ":path", scheme_name = ":scheme",
                          authority_name = ":authority";
        std::vector<nghttp2_nv> nva{field(method_name, method), field(path_name, path), field(scheme_name, scheme),
                                    field(authority_name, authority)};
        for (const auto& [name, value] : fields) nva.push_back(field(name, value));

        exchange->body = message.body();
        nghttp2_data_provider provider{};
        provider.source.ptr = exchange.get();
        provider.read_callback = &read_body;
        const std::int32_t id = nghttp2_submit_request(session_, nullptr, nva.data(), nva.size(),
                                                       exchange->body.empty() ? nullptr : &provider, nullptr);
        if (id < 0) {
            // A GOAWAY came first, or stream ids ran out: nothing was sent.
            stream_done();
            return exchange->finish(transport_outcome(outcome_kind::reset_before_write));
        }
        exchange->stream = id;
        streams_[id] = exchange;
        flush();
    }

    // The attempt left (timeout or cancellation): RST_STREAM CANCEL, so the server stops working on it.
    void cancel(h2_exchange& exchange) {
        if (exchange.stream == 0 || closed()) return;
        nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, exchange.stream, NGHTTP2_CANCEL);
        flush();
    }

    void close() {
        if (state_ == state::closed) return;
        state_ = state::closed;
        error_code ignored;
        conn_->stream.socket().close(ignored);
    }

private:
    enum class state { connecting, open, closed };

    asio::awaitable<void> establish(std::optional<duration> timeout) {
        if (timeout) {
            conn_->stream.expires_after(*timeout);
        } else {
            conn_->stream.expires_never();
        }
        const asio::cancellation_state none;
        std::optional<attempt_failure> failure = co_await connections_->open(*conn_, none, conn_->secure ? "h2" : "");
        conn_->stream.expires_never();
        std::vector<std::shared_ptr<h2_exchange>> waiting = std::move(waiting_);
        waiting_.clear();
        if (failure) {
            state_ = state::closed;
            for (const auto& exchange : waiting) {
                exchange->failure_reason = failure->reason;
                exchange->finish(failure->outcome);
            }
            co_return;
        }
        state_ = state::open;
        // Frames are small and a stream waits on each: Nagle's delay would hold them for an ACK.
        error_code ignored;
        conn_->stream.socket().set_option(tcp::no_delay(true), ignored);
        const nghttp2_settings_entry no_push{NGHTTP2_SETTINGS_ENABLE_PUSH, 0};
        nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, &no_push, 1);
        flush();
        for (const auto& exchange : waiting) exchange->wake.cancel();
    }

    asio::awaitable<void> read_loop() {
        std::array<std::uint8_t, read_chunk> buffer{};
        for (;;) {
            auto [ec, n] = co_await conn_->on_stream([&](auto& stream) {
                return stream.async_read_some(asio::buffer(buffer), asio::as_tuple(asio::use_awaitable));
            });
            if (ec) {
                const bool eof = ec == asio::error::eof || ec == asio::ssl::error::stream_truncated;
                co_return lost(eof ? outcome_kind::eof_after_write : outcome_kind::reset_after_write);
            }
            if (nghttp2_session_mem_recv(session_, buffer.data(), n) < 0) {
                // The server broke the protocol: nothing more on this connection can be trusted.
                co_return lost(outcome_kind::reset_after_write);
            }
            flush();
            if (nghttp2_session_want_read(session_) == 0 && nghttp2_session_want_write(session_) == 0 && !writing_) {
                // GOAWAY exchanged and every stream over: the connection has nothing left to carry.
                co_return lost(outcome_kind::eof_after_write);
            }
        }
    }

    // The connection ended: every stream still open ends with it.
    void lost(outcome_kind after_write) {
        close();
        auto streams = std::move(streams_);
        streams_.clear();
        for (auto& [id, exchange] : streams) {
            exchange->finish(transport_outcome(never_processed(*exchange) ? outcome_kind::reset_before_write : after_write));
        }
        streams_in_use_ = 0;
    }

    // RFC 9113 8.7: a stream the server never saw, or one a GOAWAY placed beyond what it processed.
    bool never_processed(const h2_exchange& exchange) const {
        return !exchange.request_sent || (goaway_last_stream_ && exchange.stream > *goaway_last_stream_);
    }

    void flush() {
        if (writing_ || closed()) return;
        out_.clear();
        while (out_.size() < write_batch) {
            const std::uint8_t* data = nullptr;
            const ssize_t n = nghttp2_session_mem_send(session_, &data);
            if (n < 0) return lost(outcome_kind::reset_after_write);
            if (n == 0) break;
            out_.append(reinterpret_cast<const char*>(data), static_cast<std::size_t>(n));
        }
        if (out_.empty()) return;
        writing_ = true;
        auto done = [self = shared_from_this()](error_code ec, std::size_t) {
            self->writing_ = false;
            if (ec) return self->lost(outcome_kind::reset_after_write);
            self->flush();
        };
        conn_->on_stream([&](auto& stream) { asio::async_write(stream, asio::buffer(out_), std::move(done)); });
    }

    // A stream ended or was given up; a lost connection counts none any more.
    void stream_done() {
        if (streams_in_use_ > 0) --streams_in_use_;
    }

    h2_exchange* find(std::int32_t id) const {
        const auto it = streams_.find(id);
        return it == streams_.end() ? nullptr : it->second.get();
    }

    static h2_connection& of(void* user_data) { return *static_cast<h2_connection*>(user_data); }

    static ssize_t read_body(nghttp2_session*, std::int32_t, std::uint8_t* buf, std::size_t length,
                             std::uint32_t* flags, nghttp2_data_source* source, void*) {
        auto& exchange = *static_cast<h2_exchange*>(source->ptr);
        const std::size_t n = std::min(length, exchange.body.size() - exchange.body_sent);
        std::memcpy(buf, exchange.body.data() + exchange.body_sent, n);
        exchange.body_sent += n;
        if (exchange.body_sent == exchange.body.size()) *flags |= NGHTTP2_DATA_FLAG_EOF;
        return static_cast<ssize_t>(n);
    }

    static int on_header(nghttp2_session*, const nghttp2_frame* frame, const std::uint8_t* name, std::size_t namelen,
                         const std::uint8_t* value, std::size_t valuelen, std::uint8_t, void* user_data) {
        h2_exchange* exchange = of(user_data).find(frame->hd.stream_id);
        if (exchange == nullptr) return 0;
        const std::string_view n{reinterpret_cast<const char*>(name), namelen};
        const std::string_view v{reinterpret_cast<const char*>(value), valuelen};
        if (n == ":status") {
            int status = 0;
            const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), status);
            if (ec != std::errc{} || end != v.data() + v.size() || status < 100 || status > 999) {
                return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;  // resets the stream: a malformed response
            }
            // Each response HEADERS starts with :status; an interim (1xx) one is replaced by the final.
            exchange->response = response_message{};
            exchange->response.result(static_cast<unsigned>(status));
            exchange->status_seen = status >= 200;
            return 0;
        }
        if (!n.empty() && n.front() == ':') return 0;
        exchange->response.insert(beast::string_view{n.data(), n.size()}, beast::string_view{v.data(), v.size()});
        return 0;
    }

    static int on_data_chunk(nghttp2_session* session, std::uint8_t, std::int32_t stream, const std::uint8_t* data,
                             std::size_t len, void* user_data) {
        h2_connection& c = of(user_data);
        h2_exchange* exchange = c.find(stream);
        if (exchange == nullptr || exchange->outcome) return 0;
        std::string& body = exchange->response.body();
        if (body.size() + len > c.body_limit_) {
            // As HTTP/1.1 reads a body over the limit: a failed read after the request went out.
            exchange->finish(transport_outcome(outcome_kind::reset_after_write));
            nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, stream, NGHTTP2_CANCEL);
            return 0;
        }
        body.append(reinterpret_cast<const char*>(data), len);
        return 0;
    }

    static int on_frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* user_data) {
        h2_connection& c = of(user_data);
        if (frame->hd.type == NGHTTP2_GOAWAY) c.goaway_last_stream_ = frame->goaway.last_stream_id;
        return 0;
    }

    static int on_frame_send(nghttp2_session*, const nghttp2_frame* frame, void* user_data) {
        if (frame->hd.type != NGHTTP2_HEADERS) return 0;
        if (h2_exchange* exchange = of(user_data).find(frame->hd.stream_id)) exchange->request_sent = true;
        return 0;
    }

    // A request whose HEADERS could not go out (a GOAWAY came first): never sent, no stream opened.
    static int on_frame_not_send(nghttp2_session*, const nghttp2_frame* frame, int, void* user_data) {
        if (frame->hd.type != NGHTTP2_HEADERS) return 0;
        h2_connection& c = of(user_data);
        const auto it = c.streams_.find(frame->hd.stream_id);
        if (it == c.streams_.end()) return 0;
        it->second->finish(transport_outcome(outcome_kind::reset_before_write));
        c.streams_.erase(it);
        c.stream_done();
        return 0;
    }

    static int on_stream_close(nghttp2_session*, std::int32_t stream, std::uint32_t error_code, void* user_data) {
        h2_connection& c = of(user_data);
        const auto it = c.streams_.find(stream);
        if (it == c.streams_.end()) return 0;
        const std::shared_ptr<h2_exchange> exchange = std::move(it->second);
        c.streams_.erase(it);
        c.stream_done();
        if (error_code == NGHTTP2_NO_ERROR && exchange->status_seen) {
            exchange->finish(attempt_outcome::http(static_cast<int>(exchange->response.result_int())));
        } else if (error_code == NGHTTP2_REFUSED_STREAM || c.never_processed(*exchange)) {
            // REFUSED_STREAM (received, or nghttp2's own for a stream beyond a GOAWAY's last-stream-id).
            exchange->finish(transport_outcome(outcome_kind::reset_before_write));
        } else if (error_code == NGHTTP2_NO_ERROR) {
            exchange->finish(transport_outcome(outcome_kind::eof_after_write));
        } else {
            exchange->finish(transport_outcome(outcome_kind::reset_after_write));
        }
        return 0;
    }

    std::shared_ptr<connector> connections_;
    std::uint64_t body_limit_;
    std::unique_ptr<connection> conn_;
    nghttp2_session* session_ = nullptr;
    state state_ = state::connecting;
    std::map<std::int32_t, std::shared_ptr<h2_exchange>> streams_;  // submitted and not yet closed
    std::vector<std::shared_ptr<h2_exchange>> waiting_;             // reserved while connecting
    std::uint32_t streams_in_use_ = 0;                               // reserved or open
    std::optional<std::int32_t> goaway_last_stream_;
    std::string out_;
    bool writing_ = false;
};

class h2_transport final : public transport {
public:
    h2_transport(asio::any_io_executor strand, std::shared_ptr<connector> connections, const http_client_options& options)
        : strand_{std::move(strand)}, connector_{std::move(connections)}, options_{options} {}

    // Idle connections keep a read pending; closing them lets the executor run out of work. Called
    // on the strand, as the client's state is released there (http_client's destructor).
    ~h2_transport() override {
        for (const auto& c : connections_) c->close();
    }
    h2_transport(const h2_transport&) = delete;
    h2_transport& operator=(const h2_transport&) = delete;

    asio::awaitable<attempt_outcome> exchange(const attempt_context& ctx, const request_factory& request,
                                              response_message& response, std::string& failure_reason) override;

private:
    std::shared_ptr<h2_connection> connection_with_room(const attempt_context& ctx);

    asio::any_io_executor strand_;
    std::shared_ptr<connector> connector_;
    const http_client_options& options_;
    std::vector<std::shared_ptr<h2_connection>> connections_;
};

std::shared_ptr<h2_connection> h2_transport::connection_with_room(const attempt_context& ctx) {
    std::erase_if(connections_, [](const auto& c) { return c->closed(); });
    for (const auto& c : connections_) {
        if (c->has_room()) return c;
    }
    auto c = std::make_shared<h2_connection>(connector_, options_.body_limit);
    connections_.push_back(c);
    asio::co_spawn(strand_, h2_connection::run(c, ctx.timeout), asio::detached);
    return c;
}

asio::awaitable<attempt_outcome> h2_transport::exchange(const attempt_context& ctx, const request_factory& request,
                                                        response_message& response, std::string& failure_reason) {
    const asio::cancellation_state cancel = co_await asio::this_coro::cancellation_state;
    auto exchange = std::make_shared<h2_exchange>(strand_);
    if (ctx.timeout) {
        exchange->wake.expires_after(*ctx.timeout);
    } else {
        exchange->wake.expires_at(asio::steady_timer::time_point::max());
    }
    const std::shared_ptr<h2_connection> conn = connection_with_room(ctx);
    conn->reserve(exchange);
    // Woken when the connection is ready or failed, the caller cancelled, or the timeout passed.
    while (conn->connecting() && !exchange->outcome) {
        auto [ec] = co_await exchange->wake.async_wait(asio::as_tuple(asio::use_awaitable));
        if (exchange->outcome) break;
        if (is_cancelled(cancel) || !ec) {
            conn->release(exchange);
            // A timeout while connecting is a connect that timed out: the request never left.
            co_return transport_outcome(is_cancelled(cancel) ? outcome_kind::cancelled : outcome_kind::connection_refused);
        }
    }
    if (exchange->outcome) {
        failure_reason = std::move(exchange->failure_reason);
        co_return *exchange->outcome;
    }
    conn->submit(exchange, request.make());
    while (!exchange->outcome) {
        auto [ec] = co_await exchange->wake.async_wait(asio::as_tuple(asio::use_awaitable));
        if (exchange->outcome) break;
        if (is_cancelled(cancel) || !ec) {
            conn->cancel(*exchange);
            if (is_cancelled(cancel)) co_return transport_outcome(outcome_kind::cancelled);
            // Queued behind the server's stream limit, the request never went out.
            co_return transport_outcome(exchange->request_sent ? outcome_kind::timeout_after_write
                                                               : outcome_kind::reset_before_write);
        }
    }
    if (exchange->outcome->kind == outcome_kind::response) response = std::move(exchange->response);
    co_return *exchange->outcome;
}

}  // namespace

std::unique_ptr<transport> make_h2_transport(asio::any_io_executor strand, std::shared_ptr<connector> connections,
                                             const http_client_options& options) {
    return std::make_unique<h2_transport>(std::move(strand), std::move(connections), options);
}

}  // namespace faultline::retry::transport_detail
