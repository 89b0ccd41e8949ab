#include "faultline/reports/json.hpp"
#include "faultline/reports/writer.hpp"

#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "faultline/reports/console.hpp"
#include "text.hpp"

namespace faultline::reports {

namespace {

boost::json::value text_or_null(const std::string& text) {
    if (text.empty()) return nullptr;
    return boost::json::string(detail::valid_utf8(text));
}

bool is_scalar(const boost::json::value& v) { return !v.is_object() && !v.is_array(); }

template <class T>
boost::json::value value_or_null(const std::optional<T>& v) {
    if (!v) return nullptr;
    return boost::json::value(*v);
}

// Durations as whole nanoseconds, like the journal's times.
boost::json::value ns_or_null(const std::optional<std::chrono::nanoseconds>& d) {
    if (!d) return nullptr;
    return boost::json::value(d->count());
}

boost::json::value declared_json(const record::declared_client& d) {
    if (d.empty()) return nullptr;
    boost::json::object o;
    o["deadline_ns"] = ns_or_null(d.deadline);
    o["max_attempts"] = value_or_null(d.max_attempts);
    o["attempt_timeout_ns"] = ns_or_null(d.attempt_timeout);
    if (d.backoff) {
        boost::json::object b;
        b["base_ns"] = d.backoff->base.count();
        b["cap_ns"] = d.backoff->cap.count();
        b["multiplier"] = d.backoff->multiplier;
        b["jitter"] = to_string(d.backoff->jitter);
        b["jitter_fraction"] = d.backoff->jitter_fraction;
        o["backoff"] = std::move(b);
    } else {
        o["backoff"] = nullptr;
    }
    return o;
}

boost::json::array processes_json(const std::vector<record::process_record>& processes) {
    boost::json::array out;
    for (const record::process_record& p : processes) {
        boost::json::object po;
        po["op"] = p.op;
        po["pid"] = p.pid;
        po["started_ns"] = p.started_ns;
        po["finished_ns"] = p.finished_ns;
        po["exit_status"] = p.exit_status;
        po["signal"] = value_or_null(p.signal);
        po["killed"] = p.killed;
        out.push_back(std::move(po));
    }
    return out;
}

boost::json::value interruption_json(const record::run_record& run) {
    if (!run.interrupted) return nullptr;
    boost::json::object o;
    o["signal"] = record::signal_name(run.interrupted->signal);
    o["at_ns"] = run.interrupted->at_ns;
    o["processes_stopped"] = run.interrupted->processes_stopped;
    o["message"] = detail::interruption_text(run);
    return o;
}

boost::json::array firings_json(const std::vector<record::rule_firing>& firings) {
    boost::json::array out;
    for (const record::rule_firing& f : firings) {
        boost::json::object fo;
        fo["rule"] = detail::valid_utf8(f.rule);
        fo["kind"] = f.kind;
        fo["fired"] = f.fired;
        fo["min_fired"] = value_or_null(f.min_fired);
        out.push_back(std::move(fo));
    }
    return out;
}

// Counted per kind (every kind seen), then each event as the journal holds it.
boost::json::object server_events_json(const std::vector<record::server_event>& events) {
    boost::json::object counts;
    boost::json::array list;
    for (const record::server_event& e : events) {
        const std::string_view kind = to_string(e.kind);
        if (auto* n = counts.if_contains(kind)) {
            *n = n->to_number<std::uint64_t>() + 1;
        } else {
            counts[kind] = 1U;
        }
        boost::json::object eo;
        eo["event"] = kind;
        eo["seq"] = e.seq;
        eo["t"] = e.at_ns;
        eo["rule"] = detail::valid_utf8(e.rule);
        eo["detail"] = detail::valid_utf8(e.detail);
        eo["peer"] = detail::valid_utf8(e.peer);
        list.push_back(std::move(eo));
    }
    boost::json::object out;
    out["counts"] = std::move(counts);
    out["events"] = std::move(list);
    return out;
}

// Two-space indentation; arrays of scalars (sequence numbers) stay on one line.
void write_pretty(std::string& out, const boost::json::value& v, std::size_t depth) {
    const std::string pad(2 * (depth + 1), ' ');
    const std::string close_pad(2 * depth, ' ');
    if (v.is_object()) {
        const auto& o = v.get_object();
        if (o.empty()) {
            out += "{}";
            return;
        }
        out += "{\n";
        bool first = true;
        for (const auto& kv : o) {
            if (!first) out += ",\n";
            first = false;
            out += pad + boost::json::serialize(boost::json::string(kv.key())) + ": ";
            write_pretty(out, kv.value(), depth + 1);
        }
        out += "\n" + close_pad + "}";
    } else if (v.is_array()) {
        const auto& a = v.get_array();
        bool scalars = true;
        for (const auto& e : a) scalars = scalars && is_scalar(e);
        if (a.empty() || scalars) {
            out += "[";
            for (std::size_t i = 0; i < a.size(); ++i) out += (i ? ", " : "") + boost::json::serialize(a[i]);
            out += "]";
            return;
        }
        out += "[\n";
        for (std::size_t i = 0; i < a.size(); ++i) {
            if (i) out += ",\n";
            out += pad;
            write_pretty(out, a[i], depth + 1);
        }
        out += "\n" + close_pad + "]";
    } else {
        out += boost::json::serialize(v);
    }
}

}  // namespace

boost::json::object to_json(const record::run_record& run) {
    const detail::run_counts counts = detail::count(run);
    boost::json::object o;
    o["scenario"] = detail::valid_utf8(run.scenario);
    o["file"] = text_or_null(run.scenario_file);
    o["description"] = text_or_null(run.description);
    o["seed"] = run.seed;
    o["passed"] = record::all_checks_passed(run);
    o["outcome"] = to_string(record::outcome_of(run));
    // A journal read back (`faultline check`) has no wall-clock start: null, not 1970.
    if (run.started_at == std::chrono::system_clock::time_point{}) {
        o["started_at"] = nullptr;
    } else {
        o["started_at"] = detail::iso8601(run.started_at, true);
    }
    o["duration_ms"] = std::chrono::duration_cast<std::chrono::milliseconds>(run.duration).count();
    o["replay"] = replay_command(run);

    std::size_t client_successes = 0;
    for (const auto& c : run.clients) client_successes += c.success ? 1 : 0;
    boost::json::object c;
    c["operations"] = counts.operations;
    c["attempts"] = counts.attempts;
    c["effects"] = counts.effects;
    c["client_operations"] = run.clients.size();
    c["client_successes"] = client_successes;
    c["checks"] = counts.checks;
    c["checks_failed"] = counts.checks_failed;
    c["checks_insufficient_evidence"] = counts.checks_insufficient;
    o["counts"] = std::move(c);

    if (run.command) {
        boost::json::object cmd;
        cmd["exit_status"] = run.command->exit_status;
        cmd["killed"] = run.command->killed;
        // null when every process started
        if (run.command->start_error.empty()) {
            cmd["start_error"] = nullptr;
        } else {
            cmd["start_error"] = run.command->start_error;
        }
        cmd["stdout"] = detail::valid_utf8(run.command->stdout_text);
        cmd["stderr"] = detail::valid_utf8(run.command->stderr_text);
        cmd["processes"] = processes_json(run.command->processes);
        o["command"] = std::move(cmd);
    } else {
        o["command"] = nullptr;
    }
    o["declared"] = declared_json(run.declared);
    o["harness_error"] = text_or_null(run.harness_error);
    o["interrupted"] = run.interrupted.has_value();
    o["interruption"] = interruption_json(run);
    o["strict"] = run.strict;
    o["rule_firings"] = firings_json(run.rule_firings);
    boost::json::array warnings;
    for (const record::rule_firing* f : record::never_fired(run)) {
        warnings.push_back(boost::json::string(detail::valid_utf8(detail::never_fired_text(*f, run.strict))));
    }
    o["warnings"] = std::move(warnings);
    o["server_events"] = server_events_json(run.server_events);

    boost::json::array verdicts;
    for (const record::verdict& v : run.verdicts) {
        boost::json::object vo;
        vo["check"] = v.check;
        vo["passed"] = v.passed;
        vo["outcome"] = to_string(v.outcome());
        vo["expected_to_fail"] = v.expected_to_fail;
        vo["failures_only"] = v.failures_only;
        vo["summary"] = detail::valid_utf8(v.summary);
        vo["evidence_total"] = v.evidence_total;
        boost::json::object parameters;
        for (const auto& [name, value] : v.parameters) parameters[name] = value;
        vo["parameters"] = std::move(parameters);
        boost::json::array evidence;
        for (const record::evidence_item& e : v.evidence) {
            boost::json::object eo;
            eo["operation"] = detail::valid_utf8(e.operation);
            boost::json::array seqs;
            for (std::uint64_t s : e.seqs) seqs.push_back(s);
            eo["seqs"] = std::move(seqs);
            eo["detail"] = detail::valid_utf8(e.detail);
            evidence.push_back(std::move(eo));
        }
        vo["evidence"] = std::move(evidence);
        verdicts.push_back(std::move(vo));
    }
    o["verdicts"] = std::move(verdicts);
    return o;
}

std::string json_report(std::span<const record::run_record> runs) {
    bool passed = true;
    boost::json::array scenarios;
    for (const auto& run : runs) {
        passed = passed && record::all_checks_passed(run);
        scenarios.push_back(to_json(run));
    }
    boost::json::object doc;
    doc["passed"] = passed;
    doc["scenarios"] = std::move(scenarios);
    std::string out;
    write_pretty(out, doc, 0);
    return out + "\n";
}

namespace {

const report_registration registered{"json", "per scenario its counts and every verdict with its evidence",
                                     &json_report, "{scenario}.json"};

}  // namespace

}  // namespace faultline::reports
