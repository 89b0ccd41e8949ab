#include "faultline/record/journal_json.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <charconv>
#include <fstream>
#include <limits>

namespace faultline::harness {

std::optional<identity_source> identity_source_from_string(std::string_view s) {
    for (auto v : {identity_source::idempotency_key, identity_source::header, identity_source::body_field,
                   identity_source::request_hash}) {
        if (to_string(v) == s) return v;
    }
    return std::nullopt;
}

std::optional<effect_kind> effect_kind_from_string(std::string_view s) {
    for (auto v : {effect_kind::none, effect_kind::committed, effect_kind::replayed, effect_kind::conflict,
                   effect_kind::rejected}) {
        if (to_string(v) == s) return v;
    }
    return std::nullopt;
}

std::optional<wire_outcome> wire_outcome_from_string(std::string_view s) {
    for (auto v : {wire_outcome::responded, wire_outcome::reset, wire_outcome::closed, wire_outcome::hung,
                   wire_outcome::truncated, wire_outcome::malformed, wire_outcome::client_gone}) {
        if (to_string(v) == s) return v;
    }
    return std::nullopt;
}

boost::json::object to_json(const journal_record& r) {
    boost::json::object o;
    o.reserve(24);
    o["seq"] = r.seq;
    o["conn"] = r.connection;
    o["t_accept"] = r.accepted_ns;
    o["t_request"] = r.request_ns;
    o["t_response"] = r.response_started_ns;
    o["t_end"] = r.finished_ns;
    o["method"] = r.method;
    o["target"] = r.target;
    o["op"] = r.operation;
    o["op_source"] = to_string(r.identity);
    o["attempt"] = r.attempt;
    o["idempotency_key"] = r.idempotency_key;
    if (r.attempt_header) o["attempt_header"] = *r.attempt_header;
    if (r.previous_attempts) o["grpc_previous_attempts"] = *r.previous_attempts;
    if (r.deadline_ms) o["deadline_ms"] = *r.deadline_ms;
    o["body_hash"] = r.body_hash;
    o["rule"] = r.rule;
    o["fault"] = r.fault;
    o["effect"] = to_string(r.effect);
    o["outcome"] = to_string(r.outcome);
    o["status"] = r.status;
    if (r.retry_after_ms) o["retry_after_ms"] = *r.retry_after_ms;
    o["bytes_in"] = r.bytes_in;
    o["bytes_out"] = r.bytes_out;
    return o;
}

namespace {

// Appends JSON text directly: the journal writer runs this for every record, and building a
// boost::json::object first costs several times more. Its output equals serialize(to_json(r)).
class line_writer {
public:
    explicit line_writer(std::string& out) : out_{out} {}

    template <class Int>
    void number(std::string_view name, Int v) {
        key(name);
        char buf[24];
        const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
        out_.append(buf, end);
    }

    void string(std::string_view name, std::string_view v) {
        key(name);
        out_.push_back('"');
        for (const char c : v) escape(c);
        out_.push_back('"');
    }

    void end() { out_ += "}\n"; }

private:
    void key(std::string_view name) {
        out_.push_back(first_ ? '{' : ',');
        first_ = false;
        out_.push_back('"');
        out_.append(name);
        out_ += "\":";
    }

    void escape(char c) {
        switch (c) {
            case '"': out_ += "\\\""; return;
            case '\\': out_ += "\\\\"; return;
            case '\b': out_ += "\\b"; return;
            case '\f': out_ += "\\f"; return;
            case '\n': out_ += "\\n"; return;
            case '\r': out_ += "\\r"; return;
            case '\t': out_ += "\\t"; return;
            default: break;
        }
        const auto u = static_cast<unsigned char>(c);
        if (u >= 0x20) {
            out_.push_back(c);
            return;
        }
        static constexpr char hex[] = "0123456789abcdef";
        out_ += "\\u00";
        out_.push_back(hex[u >> 4]);
        out_.push_back(hex[u & 0xfU]);
    }

    std::string& out_;
    bool first_ = true;
};

}  // namespace

void append_jsonl_line(std::string& out, const journal_record& r) {
    line_writer w{out};
    w.number("seq", r.seq);
    w.number("conn", r.connection);
    w.number("t_accept", r.accepted_ns);
    w.number("t_request", r.request_ns);
    w.number("t_response", r.response_started_ns);
    w.number("t_end", r.finished_ns);
    w.string("method", r.method);
    w.string("target", r.target);
    w.string("op", r.operation);
    w.string("op_source", to_string(r.identity));
    w.number("attempt", r.attempt);
    w.string("idempotency_key", r.idempotency_key);
    if (r.attempt_header) w.string("attempt_header", *r.attempt_header);
    if (r.previous_attempts) w.string("grpc_previous_attempts", *r.previous_attempts);
    if (r.deadline_ms) w.number("deadline_ms", *r.deadline_ms);
    w.number("body_hash", r.body_hash);
    w.string("rule", r.rule);
    w.string("fault", r.fault);
    w.string("effect", to_string(r.effect));
    w.string("outcome", to_string(r.outcome));
    w.number("status", r.status);
    if (r.retry_after_ms) w.number("retry_after_ms", *r.retry_after_ms);
    w.number("bytes_in", r.bytes_in);
    w.number("bytes_out", r.bytes_out);
    w.end();
}

std::string to_jsonl(const std::vector<journal_record>& records) {
    std::string out;
    for (const auto& r : records) append_jsonl_line(out, r);
    return out;
}

std::string to_jsonl_line(const journal_record& record) {
    std::string line;
    append_jsonl_line(line, record);
    return line;
}

namespace {

// Reads the fields of one object, remembering the first problem.
class field_reader {
public:
    field_reader(const boost::json::object& o, std::string& error) : object_{o}, error_{error} {}

    bool ok() const { return error_.empty(); }

    template <class Int>
    void integer(std::string_view name, Int& out) {
        const auto* v = find(name);
        if (v == nullptr) return;
        boost::system::error_code ec;
        const auto n = v->is_number() ? v->to_number<Int>(ec) : Int{};
        if (!v->is_number() || ec) return bad(name, std::numeric_limits<Int>::is_signed ? "an integer" : "an unsigned integer");
        out = n;
    }

    template <class Int>
    void optional_integer(std::string_view name, std::optional<Int>& out) {
        if (!present(name)) return;
        Int n{};
        integer(name, n);
        if (ok()) out = n;
    }

    void string(std::string_view name, std::string& out) {
        const auto* v = find(name);
        if (v == nullptr) return;
        if (!v->is_string()) return bad(name, "a string");
        out = std::string{v->get_string()};
    }

    void optional_string(std::string_view name, std::optional<std::string>& out) {
        if (!present(name)) return;
        std::string s;
        string(name, s);
        if (ok()) out = std::move(s);
    }

    template <class Enum, class Parse>
    void enumeration(std::string_view name, Enum& out, Parse parse) {
        std::string s;
        string(name, s);
        if (!ok()) return;
        if (const auto v = parse(s)) {
            out = *v;
        } else {
            error_ = "field \"" + std::string{name} + "\": unknown value \"" + s + "\"";
        }
    }

private:
    // Absent and null both mean "not sent" for optional fields.
    bool present(std::string_view name) const {
        const auto* v = object_.if_contains(name);
        return v != nullptr && !v->is_null();
    }

    const boost::json::value* find(std::string_view name) {
        if (!ok()) return nullptr;
        const auto* v = object_.if_contains(name);
        if (v == nullptr) error_ = "field \"" + std::string{name} + "\" is missing";
        return v;
    }

    void bad(std::string_view name, std::string_view expected) {
        error_ = "field \"" + std::string{name} + "\": expected " + std::string{expected};
    }

    const boost::json::object& object_;
    std::string& error_;
};

}  // namespace

std::optional<journal_record> record_from_json(const boost::json::value& v, std::string& error) {
    error.clear();
    if (!v.is_object()) {
        error = "expected a JSON object";
        return std::nullopt;
    }
    journal_record r;
    field_reader f{v.as_object(), error};
    f.integer("seq", r.seq);
    f.integer("conn", r.connection);
    f.integer("t_accept", r.accepted_ns);
    f.integer("t_request", r.request_ns);
    f.integer("t_response", r.response_started_ns);
    f.integer("t_end", r.finished_ns);
    f.string("method", r.method);
    f.string("target", r.target);
    f.string("op", r.operation);
    f.enumeration("op_source", r.identity, identity_source_from_string);
    f.integer("attempt", r.attempt);
    f.string("idempotency_key", r.idempotency_key);
    f.optional_string("attempt_header", r.attempt_header);
    f.optional_string("grpc_previous_attempts", r.previous_attempts);
    f.optional_integer("deadline_ms", r.deadline_ms);
    f.integer("body_hash", r.body_hash);
    f.string("rule", r.rule);
    f.string("fault", r.fault);
    f.enumeration("effect", r.effect, effect_kind_from_string);
    f.enumeration("outcome", r.outcome, wire_outcome_from_string);
    f.integer("status", r.status);
    f.optional_integer("retry_after_ms", r.retry_after_ms);
    f.integer("bytes_in", r.bytes_in);
    f.integer("bytes_out", r.bytes_out);
    if (!f.ok()) return std::nullopt;
    return r;
}

jsonl_read_result read_jsonl(std::istream& in, std::string_view name) {
    jsonl_read_result result;
    std::string line;
    std::uint32_t number = 0;
    std::string error;
    // Ends at end of input: each iteration consumes one line.
    while (std::getline(in, line)) {
        ++number;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.find_first_not_of(" \t") == std::string::npos) continue;
        const auto fail = [&](const std::string& why) {
            result.errors.push_back(config_error{{std::string{name}, number, 0}, "bad journal record: " + why});
        };
        boost::system::error_code ec;
        // Targets and header values are bytes off the wire and are written as they came.
        boost::json::parse_options options;
        options.allow_invalid_utf8 = true;
        const auto v = boost::json::parse(line, ec, {}, options);
        if (ec) {
            fail("invalid JSON (" + ec.message() + ")");
            continue;
        }
        if (auto r = record_from_json(v, error)) {
            result.records.push_back(std::move(*r));
        } else {
            fail(error);
        }
    }
    return result;
}

jsonl_read_result read_jsonl(const std::string& path) {
    std::ifstream in{path, std::ios::binary};
    if (!in) {
        jsonl_read_result result;
        result.errors.push_back(config_error{{path, 0, 0}, "cannot open journal file"});
        return result;
    }
    return read_jsonl(in, path);
}

}  // namespace faultline::harness
