#include "h2_session.hpp"

#include "action_executor.hpp"
#include "grpc_call.hpp"
#include "http_connection.hpp"
#include "http_fields.hpp"

#include "faultline/config/duration.hpp"
#include "faultline/retry/retry_after.hpp"

#include <nghttp2/nghttp2.h>

#include <boost/asio/buffer.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <functional>
#include <utility>

namespace faultline::server::detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using boost::system::error_code;
using steady = std::chrono::steady_clock;

namespace {

// Bytes asked for per read, and gathered from nghttp2 per write.
constexpr std::size_t read_chunk = 16 * 1024;
constexpr std::size_t write_batch = 64 * 1024;
constexpr std::size_t frame_header_bytes = 9;

// RFC 9113 8.2.2: connection-specific fields have no place in HTTP/2; framing is nghttp2's.
bool sendable_field(std::string_view lower_name) {
    return lower_name != "connection" && lower_name != "keep-alive" && lower_name != "proxy-connection" &&
           lower_name != "transfer-encoding" && lower_name != "upgrade" && lower_name != "te" &&
           lower_name != "content-length";
}

std::string lowercase(std::string_view name) {
    std::string out{name};
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    return out;
}

std::pair<const std::string&, const std::string&> header_pair(const http_header& h) { return {h.name, h.value}; }
std::pair<const std::string&, const std::string&> header_pair(const std::pair<std::string, std::string>& h) {
    return {h.first, h.second};
}

}  // namespace

// One request stream: the attempt it carries (attempt_lifecycle's Carrier) and the primitives the
// action executor needs, in frames. raw() holds body bytes only: the head goes as HEADERS.
class h2_stream final : public fetch_waiter, public std::enable_shared_from_this<h2_stream> {
public:
    h2_stream(h2_session& session, std::int32_t id)
        : session_{session}, id_{id}, timer_{session.connection().stream().socket().get_executor()} {
        http_connection& c = session.connection();
        attempt_.connection_id = c.id();
        attempt_.socket = &c.stream().socket();
        attempt_.core = &c.core();
        attempt_.request.version(20);
        if (!c.control_only()) channel_ = c.core().behind->open_channel(c.worker(), timer_.get_executor());
    }

    std::int32_t id() const { return id_; }
    std::size_t& bytes_in() { return bytes_in_; }
    bool request_refused() const { return refused_; }

    // ---- reading the request (from nghttp2's callbacks) ----

    void add_field(std::string_view name, std::string_view value) {
        request_t& request = attempt_.request;
        if (name == ":method") return request.method_string(beast::string_view{value.data(), value.size()});
        if (name == ":path") return request.target(beast::string_view{value.data(), value.size()});
        if (name == ":authority") return void(authority_ = value);
        if (!name.empty() && name.front() == ':') return;  // :scheme, :protocol
        request.insert(beast::string_view{name.data(), name.size()}, beast::string_view{value.data(), value.size()});
    }

    // False once the body passed the limit: the stream is answered 413 and its request dropped.
    void add_body(const std::uint8_t* data, std::size_t size) {
        if (refused_) return;
        std::string& body = attempt_.request.body();
        if (body.size() + size > attempt_.core->settings.body_limit) {
            refused_ = true;
            ++attempt_.core->bad_requests;
            return reply_outside_attempt(413, boost::json::serialize(boost::json::object{
                                                  {"error", "bad request: body limit exceeded"}}));
        }
        body.append(reinterpret_cast<const char*>(data), size);
    }

    // The request is complete (END_STREAM): an attempt, or a control request on the control port.
    void begin(std::uint32_t request_number) {
        if (refused_) return;
        request_t& request = attempt_.request;
        if (request.find(http::field::host) == request.end() && !authority_.empty()) request.set(http::field::host, authority_);
        http_connection& c = session_.connection();
        if (c.control_only()) return serve_control();
        if (const auto type = request.find(http::field::content_type); type != request.end()) {
            grpc_call_ = is_grpc_content_type(to_std(type->value()));
        }
        lifecycle::begin(*this, {request_number, c.accepted_ns(), bytes_in_, session_.protocol(),
                                 static_cast<std::uint32_t>(id_), c.bad_certificate_rule()});
    }

    // ---- attempt_lifecycle's Carrier ----

    exchange& attempt() { return attempt_; }
    backend_channel& channel() { return *channel_; }
    http_core& core() { return *attempt_.core; }
    void enter(attempt_phase phase) { phase_ = phase; }
    attempt_phase phase() const { return phase_; }
    bool stopping() const { return session_.stopping(); }
    listener_timer& timer() { return timer_; }
    std::shared_ptr<h2_stream> shared() { return shared_from_this(); }
    std::shared_ptr<fetch_waiter> waiter() { return shared_from_this(); }
    void on_fetched() override { lifecycle::on_fetched(*this); }

    // ---- action_executor's Connection ----

    // A gRPC call to the service model is answered as a gRPC service answers; a proxy's upstream
    // answers for itself.
    service_response run_service() {
        service_response reply = channel_->commit(attempt_);
        if (grpc_call_ && attempt_.core->behind->stamps_replies()) return grpc_reply_of(std::move(reply));
        return reply;
    }

    template <class Headers>
    void set_reply(int status, const Headers& headers, std::string body,
                   std::optional<std::size_t> content_length = std::nullopt) {
        status = std::clamp(status, 100, 999);
        attempt_.record.status = static_cast<std::uint16_t>(status);
        status_ = status;
        fields_.clear();
        trailers_.clear();
        http_core& core = *attempt_.core;
        if (core.behind && core.behind->stamps_replies()) {
            fields_.emplace_back("server", "faultline");
            fields_.emplace_back("date", retry::format_http_date(attempt_.wall_now));
        }
        // A gRPC call's status follows its message as trailers; with no message it is trailers-only.
        const bool trailers = grpc_call_ && !body.empty();
        for (const auto& h : headers) {
            const auto& [name, value] = header_pair(h);
            note_reply_field(attempt_, name, value);
            std::string lower = lowercase(name);
            if (!sendable_field(lower)) continue;
            (trailers && is_grpc_trailer(lower) ? trailers_ : fields_).emplace_back(std::move(lower), value);
        }
        // A gRPC client reads a reply without grpc-status (a 503 from what stands in front of the
        // service) as its HTTP status maps: journaled as what the client sees.
        if (grpc_call_ && !attempt_.record.grpc_status && status != 200) {
            attempt_.record.grpc_status = static_cast<std::uint8_t>(grpc_status_seen_by_client(status));
        }
        // An interim reply (an upstream's 103) is not relayed over HTTP/2: only the final one goes.
        const bool bodiless = status < 200 || status == 204 || status == 304;
        if (bodiless) body.clear();
        promised_ = bodiless ? 0 : content_length.value_or(body.size());
        if (!bodiless && !grpc_call_) fields_.emplace_back("content-length", std::to_string(promised_));
        body_ = std::move(body);
        reply_set_ = true;
    }
    void set_reply(service_response reply) { set_reply(reply.status, reply.headers, std::move(reply.body)); }

    const std::string& reply_head() const {
        static const std::string none;  // the head goes as HEADERS, never as body bytes
        return none;
    }
    const std::string& reply_body() const { return body_; }
    bool reply_keep_alive() const { return true; }
    std::string& raw() { return raw_; }
    faults::duration max_fault_wait() const { return attempt_.core->context.limits.max_fault_wait; }

    // The whole reply; the attempt is journaled `responded` once its END_STREAM is sent.
    void send_response() {
        source_ = &body_;
        released_ = body_.size();
        submit_headers();
    }

    // raw()[offset, offset + n) as DATA, then next(stream) once it is sent. HEADERS go with the first
    // write. Bytes written with no reply set are malformed bytes: HTTP/2 has no frame for them.
    template <class Next>
    void write_raw(std::size_t offset, std::size_t n, Next next) {
        if (!reply_set_) {
            // What the executor's continuation would journal, with the only ending HTTP/2 has for it.
            not_mapped("malformed has no HTTP/2 form: the stream was reset with PROTOCOL_ERROR");
            pending_outcome_ = record::wire_outcome::malformed;
            return end_with(NGHTTP2_PROTOCOL_ERROR);
        }
        released_ = offset + n;
        after_sent_ = [next](h2_stream& s) { next(s); };
        if (!headers_sent_) {
            source_ = &raw_;
            return submit_headers();
        }
        nghttp2_session_resume_data(session_.native(), id_);
        session_.schedule_flush();
    }

    template <class Next>
    void wait_then(faults::duration wait, Next next) {
        timer_.expires_after(std::min(wait, max_fault_wait()));
        timer_.async_wait([self = shared_from_this(), owner = session_.connection().shared_from_this(),
                           next](error_code ec) {
            if (ec || self->closed_) return;  // the stream or the connection ended meanwhile
            next(*self);
        });
    }

    // A fault with no HTTP/2 form, journaled with what was done instead (fault_not_mapped).
    void not_mapped(std::string detail) {
        http_connection& c = session_.connection();
        c.core().journal_limit_event(record::server_event_kind::fault_not_mapped, c.peer(),
                                     std::move(detail) + " (stream " + std::to_string(id_) + ")",
                                     std::string{attempt_.record.rule});
    }

    // The executor names the outcome, then how the stream ends (reset_now, do_graceful_close,
    // do_read): the record is journaled with the RST_STREAM code that ending sends.
    void finish_attempt(record::wire_outcome outcome) { pending_outcome_ = outcome; }
    void reset_now() { end_with(NGHTTP2_INTERNAL_ERROR); }
    void do_graceful_close() { end_with(NGHTTP2_CANCEL); }
    void do_read() { journal_pending(); }
    // Not processed, so safe to retry (RFC 9113 8.7): journaled as a reset with REFUSED_STREAM.
    void refuse_stream() {
        pending_outcome_ = record::wire_outcome::reset;
        end_with(NGHTTP2_REFUSED_STREAM);
    }
    // No reply: the stream ends as nghttp2 closes it for the GOAWAY, or with the connection.
    void go_away(bool processed) {
        pending_outcome_ = record::wire_outcome::closed;
        session_.go_away(id_, processed);
    }

    // Silent until the client cancels the stream, the limit passes (then CANCEL) or the listener stops.
    void start_hang(faults::duration limit) {
        hanging_ = true;
        phase_ = attempt_phase::other;
        if (stopping()) return end_hang();
        timer_.expires_after(std::min(limit, max_fault_wait()));
        timer_.async_wait([self = shared_from_this(), owner = session_.connection().shared_from_this()](error_code ec) {
            if (!ec) self->end_hang();
        });
    }

    void end_hang() {
        if (!hanging_ || closed_) return;
        hanging_ = false;
        pending_outcome_ = record::wire_outcome::hung;
        end_with(NGHTTP2_CANCEL);
    }

    // ---- from the session ----

    bool hanging() const { return hanging_; }

    // nghttp2 sent one of this stream's frames.
    void on_frame_sent(const nghttp2_frame& frame) {
        if (attempt_.open) attempt_.wire.bytes_out += frame.hd.length + frame_header_bytes;
        if (frame.hd.type == NGHTTP2_DATA) sent_ += frame.hd.length;
        // The whole reply is out (a slow body's last chunk included, whose continuation would say the same).
        if ((frame.hd.type == NGHTTP2_DATA || frame.hd.type == NGHTTP2_HEADERS) &&
            (frame.hd.flags & NGHTTP2_FLAG_END_STREAM) != 0) {
            after_sent_ = nullptr;
            pending_outcome_ = record::wire_outcome::responded;
            return journal_pending();
        }
        if (after_sent_ && sent_ >= released_) post(std::exchange(after_sent_, {}));
    }

    // nghttp2's data source: released bytes of source_, END_STREAM once the promised length is out.
    ssize_t read_body(std::uint8_t* buf, std::size_t length, std::uint32_t* flags) {
        const std::size_t available = std::min(released_, source_->size()) - provided_;
        const std::size_t n = std::min(length, available);
        if (n > 0) std::memcpy(buf, source_->data() + provided_, n);
        provided_ += n;
        if (provided_ >= promised_) {
            *flags |= NGHTTP2_DATA_FLAG_EOF;
            if (!trailers_.empty()) {
                // END_STREAM goes with the trailers (nghttp2 allows submitting them from here).
                *flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
                const std::vector<nghttp2_nv> nva = name_values(trailers_);
                nghttp2_submit_trailer(session_.native(), id_, nva.data(), nva.size());
            }
        } else if (n == 0) {
            return NGHTTP2_ERR_DEFERRED;
        }
        return static_cast<ssize_t>(n);
    }

    // The stream is over: ours or the client's RST_STREAM, END_STREAM both ways (by_client: the
    // client ended it before its reply was over), or the connection (an attempt cut off with it).
    void on_closed(bool by_client) {
        if (closed_) return;
        closed_ = true;
        if (phase_ == attempt_phase::held) lifecycle::release_barrier_group(*this);
        phase_ = attempt_phase::other;
        cancel();
        if (!attempt_.open) return;
        if (hanging_) pending_outcome_ = record::wire_outcome::hung;
        const bool started = attempt_.record.response_ns >= 0;
        if (!pending_outcome_) {
            pending_outcome_ = by_client ? record::wire_outcome::client_gone : started ? record::wire_outcome::truncated : record::wire_outcome::closed;
        }
        journal_pending();
    }

    // The connection ends: timers and a fetch in progress end now.
    void cancel() {
        timer_.cancel();
        if (channel_) channel_->cancel();
    }

    void release_if_held() {
        if (phase_ == attempt_phase::held) lifecycle::release_barrier_group(*this);
    }

private:
    friend class attempt_lifecycle<h2_stream>;
    using lifecycle = attempt_lifecycle<h2_stream>;

    void submit_headers() {
        headers_sent_ = true;
        if (attempt_.open && attempt_.record.response_ns < 0) {
            attempt_.record.response_ns = attempt_.core->since_start_ns();
        }
        fields_.emplace(fields_.begin(), ":status", std::to_string(status_));
        const std::vector<nghttp2_nv> nva = name_values(fields_);
        nghttp2_data_provider provider{};
        provider.source.ptr = this;
        provider.read_callback = [](nghttp2_session*, std::int32_t, std::uint8_t* buf, std::size_t length,
                                    std::uint32_t* flags, nghttp2_data_source* source, void*) -> ssize_t {
            return static_cast<h2_stream*>(source->ptr)->read_body(buf, length, flags);
        };
        const bool with_body = promised_ > 0;
        nghttp2_submit_response(session_.native(), id_, nva.data(), nva.size(), with_body ? &provider : nullptr);
        session_.schedule_flush();
    }

    // nghttp2 copies the names and values when the frame is submitted.
    static std::vector<nghttp2_nv> name_values(const std::vector<std::pair<std::string, std::string>>& fields) {
        std::vector<nghttp2_nv> nva;
        nva.reserve(fields.size());
        for (const auto& [name, value] : fields) {
            nva.push_back(nghttp2_nv{reinterpret_cast<std::uint8_t*>(const_cast<char*>(name.data())),
                                     reinterpret_cast<std::uint8_t*>(const_cast<char*>(value.data())), name.size(),
                                     value.size(), NGHTTP2_NV_FLAG_NONE});
        }
        return nva;
    }

    void submit_reset(std::uint32_t code) {
        if (reset_sent_ || closed_) return;
        reset_sent_ = true;
        attempt_.wire.stream_reset = nghttp2_http2_strerror(code);
        nghttp2_submit_rst_stream(session_.native(), NGHTTP2_FLAG_NONE, id_, code);
        session_.schedule_flush();
    }

    void end_with(std::uint32_t code) {
        submit_reset(code);
        journal_pending();
    }

    void journal_pending() {
        if (!pending_outcome_) return;
        lifecycle::finish(*this, *std::exchange(pending_outcome_, std::nullopt));
    }

    // A reply that is no attempt (a request refused at its limit, a control request).
    void reply_outside_attempt(int status, std::string body) {
        set_reply(status, faults::header_list{{"content-type", "application/json"}}, std::move(body));
        send_response();
    }

    void serve_control() {
        http_connection& c = session_.connection();
        ++attempt_.core->control_requests;
        const auto res = attempt_.core->control(attempt_.request, c.peer());
        if (!is_control_target(to_std(attempt_.request.target()))) {
            return reply_outside_attempt(404, boost::json::serialize(boost::json::object{
                                                  {"error", "this port serves only the control API under /__faultline/"}}));
        }
        faults::header_list headers;
        for (const auto& field : res.base()) {
            headers.emplace_back(std::string{to_std(field.name_string())}, std::string{to_std(field.value())});
        }
        set_reply(static_cast<int>(res.result_int()), headers, res.body());
        send_response();
    }

    // Runs `step` from the scheduler, holding the stream and its connection: never inside nghttp2.
    void post(std::function<void(h2_stream&)> step) {
        asio::post(timer_.get_executor(), [self = shared_from_this(), owner = session_.connection().shared_from_this(),
                                           step = std::move(step)] {
            if (!self->closed_) step(*self);
        });
    }

    h2_session& session_;
    const std::int32_t id_;
    listener_timer timer_;
    std::unique_ptr<backend_channel> channel_;
    exchange attempt_;
    attempt_phase phase_ = attempt_phase::other;
    std::string authority_;
    std::size_t bytes_in_ = 0;

    int status_ = 0;
    std::vector<std::pair<std::string, std::string>> fields_;
    std::vector<std::pair<std::string, std::string>> trailers_;  // a gRPC call's status, after its message
    std::string body_;
    std::string raw_;
    const std::string* source_ = &body_;  // what DATA frames carry: body_, or raw_ for a damaged reply
    std::size_t promised_ = 0;  // the content-length sent; END_STREAM once that much is out
    std::size_t released_ = 0;  // bytes of source_ nghttp2 may take so far
    std::size_t provided_ = 0;  // bytes of source_ nghttp2 took
    std::size_t sent_ = 0;      // DATA bytes sent
    std::function<void(h2_stream&)> after_sent_;  // a raw write's continuation, once released_ is sent
    std::optional<record::wire_outcome> pending_outcome_;
    bool reply_set_ = false;
    bool headers_sent_ = false;
    bool reset_sent_ = false;
    bool hanging_ = false;
    bool refused_ = false;
    bool closed_ = false;
    bool grpc_call_ = false;  // content-type application/grpc…: answered in gRPC's form (grpc_call.hpp)
};

// nghttp2's callbacks, forwarding to the session (user_data) and its streams.
struct h2_callbacks {
    static h2_session& of(void* user_data) { return *static_cast<h2_session*>(user_data); }

    static int on_begin_headers(nghttp2_session*, const nghttp2_frame* frame, void* user_data) {
        if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
        h2_session& session = of(user_data);
        session.streams_.emplace(frame->hd.stream_id, std::make_shared<h2_stream>(session, frame->hd.stream_id));
        return 0;
    }

    static int on_header(nghttp2_session*, const nghttp2_frame* frame, const std::uint8_t* name, std::size_t namelen,
                         const std::uint8_t* value, std::size_t valuelen, std::uint8_t, void* user_data) {
        if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
        if (const auto stream = of(user_data).find(frame->hd.stream_id)) {
            stream->add_field({reinterpret_cast<const char*>(name), namelen},
                              {reinterpret_cast<const char*>(value), valuelen});
        }
        return 0;
    }

    static int on_data_chunk(nghttp2_session*, std::uint8_t, std::int32_t stream_id, const std::uint8_t* data,
                             std::size_t len, void* user_data) {
        if (const auto stream = of(user_data).find(stream_id)) stream->add_body(data, len);
        return 0;
    }

    static int on_frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* user_data) {
        h2_session& session = of(user_data);
        const auto stream = session.find(frame->hd.stream_id);
        if (!stream) return 0;
        stream->bytes_in() += frame->hd.length + frame_header_bytes;
        const bool request_part = frame->hd.type == NGHTTP2_DATA || frame->hd.type == NGHTTP2_HEADERS;
        if (request_part && (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0) session.ready_.push_back(frame->hd.stream_id);
        return 0;
    }

    static int on_frame_send(nghttp2_session*, const nghttp2_frame* frame, void* user_data) {
        if (const auto stream = of(user_data).find(frame->hd.stream_id)) stream->on_frame_sent(*frame);
        return 0;
    }

    static int on_stream_close(nghttp2_session*, std::int32_t stream_id, std::uint32_t, void* user_data) {
        h2_session& session = of(user_data);
        const auto it = session.streams_.find(stream_id);
        if (it == session.streams_.end()) return 0;
        const std::shared_ptr<h2_stream> stream = std::move(it->second);
        session.streams_.erase(it);
        stream->on_closed(true);
        if (session.streams_.empty()) session.idle_since_ = steady::now();
        return 0;
    }
};

h2_session::h2_session(http_connection& connection, std::string_view protocol)
    : connection_{connection}, protocol_{protocol}, idle_since_{steady::now()} {
    nghttp2_session_callbacks* callbacks = nullptr;
    nghttp2_session_callbacks_new(&callbacks);
    nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, &h2_callbacks::on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(callbacks, &h2_callbacks::on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, &h2_callbacks::on_data_chunk);
    nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, &h2_callbacks::on_frame_recv);
    nghttp2_session_callbacks_set_on_frame_send_callback(callbacks, &h2_callbacks::on_frame_send);
    nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, &h2_callbacks::on_stream_close);
    nghttp2_session_server_new(&session_, callbacks, this);
    nghttp2_session_callbacks_del(callbacks);
}

h2_session::~h2_session() {
    // The streams' attempts end with the connection: journaled as it left them.
    auto streams = std::move(streams_);
    for (auto& [id, stream] : streams) stream->on_closed(false);
    nghttp2_session_del(session_);
}

void h2_session::start(boost::beast::flat_buffer& already_read) {
    const nghttp2_settings_entry settings[] = {
        {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, connection_.core().context.limits.max_concurrent_streams}};
    nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, settings, std::size(settings));
    const auto bytes = already_read.data();
    const std::string copy{static_cast<const char*>(bytes.data()), bytes.size()};
    already_read.consume(already_read.size());
    receive(copy.data(), copy.size());
    if (ended_) return;
    read();
}

void h2_session::read() {
    connection_.stream().async_read_some(
        in_.prepare(read_chunk), [owner = connection_.shared_from_this(), this](error_code ec, std::size_t n) {
            on_read(ec, n);
        });
}

void h2_session::on_read(error_code ec, std::size_t n) {
    if (ending_) return connection_.end_gracefully();
    if (ended_) return;
    in_.commit(n);
    if (ec) {
        // The client went away (or the connection was closed under us): its open streams end with it.
        ended_ = true;
        return connection_.close_now();
    }
    const auto bytes = in_.data();
    receive(static_cast<const char*>(bytes.data()), bytes.size());
    in_.consume(in_.size());
    if (!ended_) read();
}

void h2_session::receive(const char* data, std::size_t size) {
    const auto used = nghttp2_session_mem_recv(session_, reinterpret_cast<const std::uint8_t*>(data), size);
    begin_ready_streams();
    flush();
    // A protocol error: nghttp2 queued its GOAWAY, which flush() sent; nothing more is read.
    if (used < 0) {
        ended_ = true;
        connection_.close_now();
    }
}

void h2_session::begin_ready_streams() {
    // Each request begins after nghttp2 returned, so no attempt submits frames inside its callbacks.
    for (const std::int32_t id : std::exchange(ready_, {})) {
        if (const auto stream = find(id)) {
            highest_begun_ = std::max(highest_begun_, id);
            stream->begin(++requests_);
        }
    }
}

void h2_session::schedule_flush() {
    if (flush_scheduled_ || ended_) return;
    flush_scheduled_ = true;
    asio::post(connection_.stream().socket().get_executor(), [owner = connection_.shared_from_this(), this] {
        flush_scheduled_ = false;
        flush();
    });
}

void h2_session::flush() {
    if (writing_ || ended_) return;
    out_.clear();
    while (out_.size() < write_batch) {
        const std::uint8_t* data = nullptr;
        const auto n = nghttp2_session_mem_send(session_, &data);
        if (n <= 0) break;
        out_.append(reinterpret_cast<const char*>(data), static_cast<std::size_t>(n));
    }
    if (out_.empty()) return end_if_done();
    writing_ = true;
    connection_.begin_waiting_write(out_.size());
    connection_.stream().async_write(asio::buffer(out_), [owner = connection_.shared_from_this(), this](error_code ec,
                                                                                                     std::size_t) {
        writing_ = false;
        connection_.end_waiting_write();
        if (ended_) return;
        if (ec) {
            ended_ = true;
            return connection_.close_now();
        }
        flush();
    });
}

// After a GOAWAY (ours, or the client's) with every stream over, nghttp2 wants neither to read
// nor to write: the connection ends in order, once the read in progress is cancelled (its handler
// ends it, so no two reads overlap on the stream).
void h2_session::end_if_done() {
    if (ended_ || nghttp2_session_want_read(session_) != 0 || nghttp2_session_want_write(session_) != 0) return;
    ended_ = ending_ = true;
    error_code ignored;
    connection_.stream().socket().cancel(ignored);
}

void h2_session::on_listener_stop() {
    if (stopping_ || ended_) return;
    stopping_ = true;
    // Streams begun go on; none after the last one processed is.
    nghttp2_submit_goaway(session_, NGHTTP2_FLAG_NONE, nghttp2_session_get_last_proc_stream_id(session_),
                          NGHTTP2_NO_ERROR, nullptr, 0);
    for (const auto& [id, stream] : std::map{streams_}) {
        stream->release_if_held();
        if (stream->hanging()) stream->end_hang();
    }
    flush();
}

void h2_session::go_away(std::int32_t stream, bool processed) {
    // A last-stream-id below a stream that began, and so may have been processed, would tell its
    // client to retry it: the GOAWAY never stops below one. Streams below `stream` that have not begun
    // are covered too, which only makes their client more careful; they are served as usual.
    const std::int32_t last = highest_begun_ > stream ? highest_begun_ : processed ? stream : stream - 2;
    stopping_ = true;  // one GOAWAY: the listener's stop or the idle timeout sends no second
    if (last < stream) {
        nghttp2_submit_goaway(session_, NGHTTP2_FLAG_NONE, last, NGHTTP2_NO_ERROR, nullptr, 0);
    } else {
        nghttp2_session_terminate_session2(session_, last, NGHTTP2_INTERNAL_ERROR);
    }
    schedule_flush();
}

void h2_session::cancel_streams() {
    ended_ = true;
    for (const auto& [id, stream] : streams_) stream->cancel();
}

std::optional<steady::time_point> h2_session::on_watchdog(steady::time_point now) {
    std::optional<steady::time_point> due;
    for (const auto& [id, stream] : std::map{streams_}) {
        if (stream->phase() != attempt_phase::fetching) continue;
        if (const auto at = stream->channel().expire_if_due(now)) due = due ? std::min(*due, *at) : *at;
    }
    const auto idle_timeout = std::chrono::duration_cast<steady::duration>(connection_.core().context.limits.idle_timeout);
    if (!stopping_ && streams_.empty() && now - idle_since_ >= idle_timeout) {
        stopping_ = true;
        ++connection_.core().idle_timeouts;
        connection_.core().journal_limit_event(record::server_event_kind::idle_timeout, connection_.peer(),
                                               "HTTP/2 connection with no open stream for " +
                                                   config::format_duration(connection_.core().context.limits.idle_timeout));
        nghttp2_session_terminate_session(session_, NGHTTP2_NO_ERROR);
        flush();
        return due;
    }
    return due;
}

std::shared_ptr<h2_stream> h2_session::find(std::int32_t id) const {
    const auto it = streams_.find(id);
    return it == streams_.end() ? nullptr : it->second;
}

}  // namespace faultline::server::detail
