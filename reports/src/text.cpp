#include "text.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>

namespace faultline::reports::detail {

namespace {

constexpr std::string_view replacement = "\xEF\xBF\xBD";  // U+FFFD

// Length of the valid UTF-8 sequence starting at `i`, or 0 when it is invalid.
std::size_t utf8_length(std::string_view s, std::size_t i) {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = byte(i);
    if (c < 0x80) return 1;
    std::size_t n = 0;
    unsigned min = 0;
    if ((c & 0xE0) == 0xC0) n = 2, min = 0x80;
    else if ((c & 0xF0) == 0xE0) n = 3, min = 0x800;
    else if ((c & 0xF8) == 0xF0) n = 4, min = 0x10000;
    else return 0;
    if (i + n > s.size()) return 0;
    unsigned code = c & (0x7Fu >> n);
    for (std::size_t k = 1; k < n; ++k) {
        if ((byte(i + k) & 0xC0) != 0x80) return 0;
        code = (code << 6) | (byte(i + k) & 0x3Fu);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not valid UTF-8.
    if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
    return n;
}

}  // namespace

std::string valid_utf8(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const std::size_t n = utf8_length(text, i);
        if (n == 0) {
            out += replacement;
            ++i;
        } else {
            out.append(text.substr(i, n));
            i += n;
        }
    }
    return out;
}

std::string printable(std::string_view text) {
    std::string out;
    for (char c : valid_utf8(text)) {
        const auto u = static_cast<unsigned char>(c);
        if ((u < 0x20 && c != '\n' && c != '\t') || u == 0x7F) out += replacement;
        else out += c;
    }
    return out;
}

std::string xml_escape(std::string_view text, bool attribute) {
    const std::string clean = valid_utf8(text);
    std::string out;
    out.reserve(clean.size());
    for (char c : clean) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += attribute ? "&quot;" : "\""; break;
            case '\'': out += attribute ? "&apos;" : "'"; break;
            case '\n': out += attribute ? "&#10;" : "\n"; break;
            case '\t': out += attribute ? "&#9;" : "\t"; break;
            case '\r': out += "&#13;"; break;
            default:
                // XML 1.0 has no way to carry the other C0 controls, not even as references.
                if (static_cast<unsigned char>(c) < 0x20) out += replacement;
                else out += c;
        }
    }
    return out;
}

std::string iso8601(std::chrono::system_clock::time_point t, bool zone_suffix) {
    const std::time_t seconds_since_epoch = std::chrono::system_clock::to_time_t(t);
    std::tm utc{};
    gmtime_r(&seconds_since_epoch, &utc);
    char buf[32];
    std::strftime(buf, sizeof buf, zone_suffix ? "%Y-%m-%dT%H:%M:%SZ" : "%Y-%m-%dT%H:%M:%S", &utc);
    return buf;
}

std::string seconds(std::chrono::nanoseconds d) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", std::chrono::duration<double>(d).count());
    return buf;
}

std::string evidence_text(const record::verdict& v, std::string_view indent) {
    std::string out;
    for (const record::evidence_item& item : v.evidence) {
        std::string head = "·";
        if (!item.operation.empty()) head += " op " + item.operation;
        if (!item.seqs.empty()) {
            head += " [";
            for (std::size_t i = 0; i < item.seqs.size(); ++i) head += (i ? " #" : "#") + std::to_string(item.seqs[i]);
            head += "]";
        }
        out.append(indent).append(head);
        // The first line of the detail follows the head; the rest are indented under it.
        std::size_t start = 0;
        bool first = true;
        while (start <= item.detail.size()) {
            const std::size_t end = item.detail.find('\n', start);
            const std::string_view line =
                std::string_view(item.detail).substr(start, end == std::string::npos ? std::string::npos : end - start);
            if (first) out.append(" ").append(line);
            else out.append("\n").append(indent).append("    ").append(line);
            first = false;
            if (end == std::string::npos) break;
            start = end + 1;
        }
        out += "\n";
    }
    if (v.evidence_total > v.evidence.size()) {
        out.append(indent).append("… and " + std::to_string(v.evidence_total - v.evidence.size()) + " more\n");
    }
    return out;
}

std::string firing_text(const record::rule_firing& f) {
    std::string out = "rule `" + f.rule + "` (" + f.kind + ") fired " + std::to_string(f.fired) +
                      (f.fired == 1 ? " time" : " times");
    if (f.min_fired) out += ", min_fired " + std::to_string(*f.min_fired);
    return out;
}

std::string never_fired_text(const record::rule_firing& f, bool strict) {
    return "rule `" + f.rule + "` (" + f.kind + ") never fired: its fault was not exercised" +
           (f.min_fired || strict ? "" : " (--strict makes this fatal)");
}

std::string server_event_counts(const record::run_record& run) {
    std::map<record::server_event_kind, std::size_t> counts;
    for (const record::server_event& e : run.server_events) ++counts[e.kind];
    std::string out;
    for (const auto& [kind, n] : counts) {
        out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + std::string(to_string(kind));
    }
    return out;
}

std::string interruption_text(const record::run_record& run) {
    if (!run.interrupted) return "";
    const record::run_interruption& i = *run.interrupted;
    // Tenths of a second: when a person pressed Ctrl-C, not a measurement.
    const std::int64_t tenths = (i.at_ns + 50'000'000) / 100'000'000;
    std::string out = "interrupted by " + record::signal_name(i.signal) + " after " + std::to_string(tenths / 10) +
                      "." + std::to_string(tenths % 10) + " s: ";
    if (run.command) {
        return out + "stopped " + std::to_string(i.processes_stopped) + " client process" +
               (i.processes_stopped == 1 ? "" : "es");
    }
    const auto cancelled = std::count_if(run.clients.begin(), run.clients.end(),
                                         [](const record::client_record& c) { return c.decision == "cancelled"; });
    return out + "stopped the builtin clients, " + std::to_string(cancelled) + " operation" +
           (cancelled == 1 ? "" : "s") + " cancelled";
}

std::string command_status_text(const record::command_result& c, std::string_view killed_when) {
    if (!c.start_error.empty() && c.processes.empty()) return "not started: " + c.start_error;
    std::string out = "exit status " + std::to_string(c.exit_status);
    if (c.killed) out += " (killed " + std::string{killed_when} + ")";
    if (!c.start_error.empty()) out += "; then not started: " + c.start_error;
    return out;
}

run_counts count(const record::run_record& run) {
    run_counts c;
    c.operations = record::count_operations(run.journal);
    c.attempts = run.journal.size();
    c.effects = record::committed_records(run.journal).size();
    c.checks = run.verdicts.size();
    for (const auto& v : run.verdicts) {
        c.checks_failed += v.outcome() == record::verdict_outcome::fail ? 1U : 0U;
        c.checks_insufficient += v.insufficient_evidence ? 1U : 0U;
    }
    return c;
}

}  // namespace faultline::reports::detail
