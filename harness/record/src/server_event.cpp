#include "faultline/record/server_event.hpp"

#include <string>
#include <utility>

namespace faultline::record {

std::string_view to_string(server_event_kind kind) { return server_event_kind_names(kind); }

std::optional<server_event_kind> server_event_kind_from_string(std::string_view s) {
    return server_event_kind_names.from(s);
}

bool is_control_action(server_event_kind kind) {
    switch (kind) {
        case server_event_kind::reset:
        case server_event_kind::rule_added:
        case server_event_kind::rule_removed:
        case server_event_kind::rules_cleared:
        case server_event_kind::evidence_altered: return true;
        case server_event_kind::connection_refused:
        case server_event_kind::header_timeout:
        case server_event_kind::idle_timeout:
        case server_event_kind::write_timeout:
        case server_event_kind::idle_evicted:
        case server_event_kind::tls_handshake_failed:
        case server_event_kind::listener_closed:
        case server_event_kind::listener_reopened:
        case server_event_kind::unmatched_route:
        case server_event_kind::started:
        case server_event_kind::fault_not_mapped:
        case server_event_kind::certificate_refused:
        case server_event_kind::server_late: return false;
    }
    return false;
}

server_event wall_clock_anchor(std::int64_t at_ns, std::chrono::system_clock::time_point wall, std::string instance,
                               std::optional<std::uint64_t> seed) {
    server_event anchor;
    anchor.kind = server_event_kind::started;
    anchor.at_ns = at_ns;
    anchor.detail = std::to_string(std::chrono::duration_cast<std::chrono::nanoseconds>(wall.time_since_epoch()).count());
    anchor.peer = std::move(instance);
    anchor.seed = seed;
    return anchor;
}

}  // namespace faultline::record
