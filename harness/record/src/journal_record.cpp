#include "faultline/record/journal_record.hpp"

namespace faultline::harness {

std::string_view to_string(identity_source v) {
    switch (v) {
        case identity_source::idempotency_key: return "idempotency_key";
        case identity_source::header: return "header";
        case identity_source::body_field: return "body_field";
        case identity_source::request_hash: return "request_hash";
    }
    return "unknown";
}

std::string_view to_string(effect_kind v) {
    switch (v) {
        case effect_kind::none: return "none";
        case effect_kind::committed: return "committed";
        case effect_kind::replayed: return "replayed";
        case effect_kind::conflict: return "conflict";
        case effect_kind::rejected: return "rejected";
    }
    return "unknown";
}

std::string_view to_string(wire_outcome v) {
    switch (v) {
        case wire_outcome::responded: return "responded";
        case wire_outcome::reset: return "reset";
        case wire_outcome::closed: return "closed";
        case wire_outcome::hung: return "hung";
        case wire_outcome::truncated: return "truncated";
        case wire_outcome::malformed: return "malformed";
        case wire_outcome::client_gone: return "client_gone";
    }
    return "unknown";
}

}  // namespace faultline::harness
