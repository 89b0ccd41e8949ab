// Private to the server: how often an enforced limit (a connection refused over max_connections, a
// header or idle timeout) is journaled as a server event. A flood — a client opening connections in a
// loop, thousands of slowloris sockets — must not grow the journal without bound, so at most
// `per_second` events of each kind are journaled per second of run time; the rest are counted (the
// server's counters count every one) and the next event journaled says how many it stands for.
#pragma once

#include "faultline/record/server_event.hpp"

#include <array>
#include <cstdint>
#include <limits>
#include <mutex>
#include <optional>

namespace faultline::server::detail {

// Thread-safe; time comes in as an argument (ns since the run started), so tests drive it.
class limit_event_gate {
public:
    explicit limit_event_gate(std::uint32_t per_second) : per_second_{per_second} {}

    // nullopt: not to be journaled (it is counted); else how many events of this kind were not
    // journaled since the last one that was. `kind` is one of the limit kinds.
    std::optional<std::uint64_t> admit(record::server_event_kind kind, std::int64_t now_ns) {
        constexpr std::int64_t second_ns = 1'000'000'000;
        const std::lock_guard lock{mutex_};
        window& w = windows_[index(kind)];
        if (now_ns - w.start_ns >= second_ns) {
            w.start_ns = now_ns;
            w.used = 0;
        }
        if (w.used == per_second_) {
            ++w.skipped;
            return std::nullopt;
        }
        ++w.used;
        const std::uint64_t skipped = w.skipped;
        w.skipped = 0;
        return skipped;
    }

private:
    struct window {
        std::int64_t start_ns = std::numeric_limits<std::int64_t>::min() / 2;  // long before any event
        std::uint32_t used = 0;
        std::uint64_t skipped = 0;
    };

    static std::size_t index(record::server_event_kind kind) {
        switch (kind) {
            case record::server_event_kind::connection_refused: return 0;
            case record::server_event_kind::header_timeout: return 1;
            case record::server_event_kind::write_timeout: return 2;
            case record::server_event_kind::idle_evicted: return 3;
            case record::server_event_kind::tls_handshake_failed: return 4;
            case record::server_event_kind::fault_not_mapped: return 5;
            default: return 6;  // idle_timeout
        }
    }

    std::mutex mutex_;
    std::array<window, 7> windows_{};
    const std::uint32_t per_second_;
};

}  // namespace faultline::server::detail
