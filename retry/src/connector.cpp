#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <string>
#include <utility>

#include "faultline/core/tls_client.hpp"
#include "transport.hpp"

namespace faultline::retry::transport_detail {

namespace {

attempt_failure failed(outcome_kind kind, std::string reason = {}) {
    return attempt_failure{attempt_outcome::transport(kind), std::move(reason)};
}

// A handshake TLS itself refused (a certificate that does not verify, no common protocol) fails
// the same way next time; a reset, EOF or timeout during it is a transport failure like a refused
// connect, and no request byte was sent either way.
bool refused_certificate(const error_code& ec) {
    return ec.category() == asio::error::get_ssl_category() && ec != asio::ssl::error::stream_truncated;
}

bool is_cancelled(const asio::cancellation_state& state) {
    return state.cancelled() != asio::cancellation_type::none;
}

}  // namespace

connector::connector(asio::any_io_executor strand, std::string host, std::uint16_t port,
                     const http_client_options& options)
    : strand_{std::move(strand)},
      host_{std::move(host)},
      port_{port},
      tls_{options.tls},
      tls_server_name_{options.tls_server_name} {}

std::unique_ptr<connection> connector::make() const {
    return std::make_unique<connection>(strand_, tls_.get());
}

asio::awaitable<error_code> connector::resolve() {
    if (endpoints_) co_return error_code{};
    tcp::resolver resolver{strand_};
    auto [ec, results] =
        co_await resolver.async_resolve(host_, std::to_string(port_), asio::as_tuple(asio::use_awaitable));
    if (!ec) endpoints_ = std::move(results);
    co_return ec;
}

asio::awaitable<std::optional<attempt_failure>> connector::open(connection& c, const asio::cancellation_state& cancel,
                                                                std::string_view alpn) {
    if (const error_code ec = co_await resolve(); ec) {
        co_return failed(is_cancelled(cancel) ? outcome_kind::cancelled : outcome_kind::local_error,
                         "resolving " + host_ + ": " + ec.message());
    }
    auto [ec, endpoint] = co_await c.stream.async_connect(*endpoints_, asio::as_tuple(asio::use_awaitable));
    if (ec) co_return failed(is_cancelled(cancel) ? outcome_kind::cancelled : outcome_kind::connection_refused);
    if (c.secure) {
        auto& tls = *c.secure;
        const std::string& name = tls_server_name_.empty() ? host_ : tls_server_name_;
        prepare_tls_client(tls, name, (SSL_CTX_get_verify_mode(tls_->native_handle()) & SSL_VERIFY_PEER) != 0);
        // On this connection only: the context is the caller's and may serve HTTP/1.1 clients too.
        if (!alpn.empty()) {
            std::string offered(1, static_cast<char>(alpn.size()));  // ALPN's wire form: length, name
            offered += alpn;
            SSL_set_alpn_protos(tls.native_handle(), reinterpret_cast<const unsigned char*>(offered.data()),
                                static_cast<unsigned int>(offered.size()));
        }
        auto [tls_ec] = co_await tls.async_handshake(asio::ssl::stream_base::client, asio::as_tuple(asio::use_awaitable));
        if (tls_ec) {
            if (is_cancelled(cancel)) co_return failed(outcome_kind::cancelled);
            if (refused_certificate(tls_ec)) {
                co_return failed(outcome_kind::local_error, "TLS handshake refused: " + tls_ec.message());
            }
            co_return failed(outcome_kind::connection_refused);
        }
        if (!alpn.empty()) {
            const unsigned char* selected = nullptr;
            unsigned int size = 0;
            SSL_get0_alpn_selected(tls.native_handle(), &selected, &size);
            const std::string_view chosen{reinterpret_cast<const char*>(selected), size};
            if (chosen != alpn) {
                // The same server will choose the same again: not a transient failure.
                co_return failed(outcome_kind::local_error, "the server did not select " + std::string{alpn} +
                                                                " by ALPN (it selected \"" + std::string{chosen} + "\")");
            }
        }
    }
    opened_.fetch_add(1, std::memory_order_relaxed);
    co_return std::nullopt;
}

}  // namespace faultline::retry::transport_detail
