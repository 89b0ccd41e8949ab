#include "faultline/record/journal_json.hpp"

#include "faultline/record/journal_rounds.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <span>
#include <thread>
#include <type_traits>
#include <utility>

namespace faultline::record {


namespace {

// The journal's JSON field names, written once: every reader and writer of a record visits its
// fields through this list. `Record` is journal_record (readers) or const journal_record (writers),
// `Wire` likewise wire_detail: a writer without one (null) leaves its fields out, and readers take
// them as optional, since a journal that kept no wire details writes none.
template <class Record, class Wire, class Visitor>
void visit_fields(Record& r, Wire* w, Visitor& v) {
    v.number("seq", r.seq);
    v.round("round", r.round);
    v.number("conn", r.connection);
    v.optional_number("conn_req", r.connection_request);
    if (w != nullptr) v.number_maybe_absent("t_accept", w->accepted_ns);
    v.number("t_request", r.request_ns);
    v.number_maybe_absent("t_response", r.response_ns);  // absent in journals written before a check read it
    v.number("t_end", r.finished_ns);
    v.string("method", r.method);
    v.string("target", r.target);
    v.string("op", r.operation);
    v.enumeration("op_source", r.identity);
    v.number("attempt", r.attempt);
    v.string("idempotency_key", r.idempotency_key);
    v.optional_string("attempt_header", r.attempt_header);
    v.optional_string("grpc_previous_attempts", r.previous_attempts);
    v.optional_number("deadline_ms", r.deadline_ms);
    if (w != nullptr) v.number_maybe_absent("body_hash", w->body_hash);
    v.string("rule", r.rule);
    v.string("fault", r.fault);
    v.enumeration("effect", r.effect);
    v.enumeration("outcome", r.outcome);
    v.number("status", r.status);
    v.optional_number("retry_after_ms", r.retry_after_ms);
    v.optional_number("grpc_status", r.grpc_status);
    v.optional_number("grpc_pushback_ms", r.grpc_pushback_ms);
    if (w != nullptr) {
        v.number_maybe_absent("bytes_in", w->bytes_in);
        v.number_maybe_absent("bytes_out", w->bytes_out);
        v.optional_number("upstream_status", w->upstream_status);
        v.optional_number("upstream_ns", w->upstream_ns);
        v.optional_string("upstream_error", w->upstream_error);
        v.optional_string("protocol", w->protocol);
        v.optional_number("stream", w->stream);
        v.optional_string("stream_reset", w->stream_reset);
    }
    v.optional_string("instance", r.instance);
}

constexpr std::size_t field_count = 35;

template <class Event, class Visitor>
void visit_event_fields(Event& e, Visitor& v) {
    v.enumeration("event", e.kind);
    v.number("seq", e.seq);
    v.round("round", e.round);
    v.number("t", e.at_ns);
    v.string("rule", e.rule);
    v.string("detail", e.detail);
    v.string("peer", e.peer);
    v.optional_number("seed", e.seed);
    v.optional_number("late_ns", e.late_ns);
}

// A round is written from round 2 on, so a journal of one round reads as it did before rounds.
constexpr bool round_written(round_number round) { return round > 1; }

std::optional<identity_source> from_string(std::string_view s, identity_source) { return identity_source_names.from(s); }
std::optional<effect_kind> from_string(std::string_view s, effect_kind) { return effect_kind_names.from(s); }
std::optional<wire_outcome> from_string(std::string_view s, wire_outcome) { return wire_outcome_names.from(s); }
std::optional<server_event_kind> from_string(std::string_view s, server_event_kind) { return server_event_kind_from_string(s); }

// Whether an optional can hold `n`: a packed one keeps one value for "absent" (the type's lowest or
// highest), which a reader of outside data rejects as out of range.
template <class Int>
bool holds(const packed_optional<Int>&, Int n) { return !packed_absence<Int>::reserved(n); }
template <class Int>
bool holds(const std::optional<Int>&, Int) { return true; }

class object_builder {
public:
    explicit object_builder(boost::json::object& o) : object_{o} {}

    template <class Int>
    void number(std::string_view name, Int v) { object_[name] = v; }
    template <class Int>
    void number_maybe_absent(std::string_view name, Int v) { number(name, v); }
    void string(std::string_view name, std::string_view v) { object_[name] = v; }
    template <class Enum>
    void enumeration(std::string_view name, Enum v) { object_[name] = to_string(v); }
    // `Optional`: packed_optional or std::optional of an integer.
    template <class Optional>
    void optional_number(std::string_view name, const Optional& v) {
        if (v) number(name, *v);
    }
    void optional_string(std::string_view name, packed_optional<symbol> v) {
        if (v) string(name, *v);
    }
    void round(std::string_view name, round_number v) {
        if (round_written(v)) number(name, v);
    }

private:
    boost::json::object& object_;
};

}  // namespace

boost::json::object to_json(const journal_record& r, const wire_detail* wire) {
    boost::json::object o;
    o.reserve(field_count);
    object_builder b{o};
    visit_fields(r, wire, b);
    return o;
}

boost::json::object to_json(const server_event& e) {
    boost::json::object o;
    object_builder b{o};
    visit_event_fields(e, b);
    return o;
}

namespace {

// Appends JSON text directly: the journal writer runs this for every record, and building a
// boost::json::object first costs several times more. Its output equals serialize(to_json(r)). It
// writes through a pointer into room made in `out` ahead of each field (a field's longest form is
// known), where appending piece by piece paid the string's size check on every piece: ~6,500
// instructions a record, now ~1,500 (bench/server_instructions.sh).
class line_writer {
public:
    explicit line_writer(std::string& out) : out_{out}, at_{out.data() + out.size()}, limit_{at_} {}

    template <class Int>
    [[gnu::always_inline]] void number(std::string_view name, Int v) {
        char* p = key(name, 24);
        at_ = std::to_chars(p, p + 24, v).ptr;
    }

    [[gnu::always_inline]] void string(std::string_view name, std::string_view v) {
        char* p = key(name, 2 + 6 * v.size());  // at worst every byte as \u00XX
        *p++ = '"';
        // Runs that need no escaping (nearly every value) are copied whole.
        std::size_t clean_from = 0;
        for (std::size_t i = 0; i < v.size(); ++i) {
            if (!escaped[static_cast<unsigned char>(v[i])]) continue;
            p = copy(p, v.substr(clean_from, i - clean_from));
            p = escape(p, v[i]);
            clean_from = i + 1;
        }
        p = copy(p, v.substr(clean_from));
        *p++ = '"';
        at_ = p;
    }

    template <class Int>
    void number_maybe_absent(std::string_view name, Int v) { number(name, v); }

    template <class Enum>
    void enumeration(std::string_view name, Enum v) { string(name, to_string(v)); }

    template <class Optional>
    void optional_number(std::string_view name, const Optional& v) {
        if (v) number(name, *v);
    }

    void optional_string(std::string_view name, packed_optional<symbol> v) {
        if (v) string(name, *v);
    }

    void round(std::string_view name, round_number v) {
        if (round_written(v)) number(name, v);
    }

    // Closes the line and gives `out` back its true size.
    void end() {
        char* p = room(2);
        *p++ = '}';
        *p++ = '\n';
        out_.resize(static_cast<std::size_t>(p - out_.data()));
    }

private:
    // `,"name":` (or `{` first), with room for `value_bound` bytes after it. Inlined, as the rest, so
    // that each name's length is a constant and its copy a few moves.
    [[gnu::always_inline]] char* key(std::string_view name, std::size_t value_bound) {
        char* p = room(name.size() + 4 + value_bound);
        *p++ = first_ ? '{' : ',';
        first_ = false;
        *p++ = '"';
        p = copy(p, name);
        *p++ = '"';
        *p++ = ':';
        return p;
    }

    // At least n bytes writable at at_; `out` is sized past them, with slack for the next fields.
    [[gnu::always_inline]] char* room(std::size_t n) {
        if (static_cast<std::size_t>(limit_ - at_) < n) [[unlikely]] grow(n);
        return at_;
    }

    void grow(std::size_t n) {
        const auto used = static_cast<std::size_t>(at_ - out_.data());
        out_.resize(used + n + 512);
        at_ = out_.data() + used;
        limit_ = out_.data() + out_.size();
    }

    [[gnu::always_inline]] static char* copy(char* p, std::string_view s) {
        if (!s.empty()) std::memcpy(p, s.data(), s.size());  // an empty view's data() may be null
        return p + s.size();
    }

    static constexpr std::array<bool, 256> escaped = [] {
        std::array<bool, 256> table{};
        for (std::size_t c = 0; c < 0x20; ++c) table[c] = true;
        table['"'] = true;
        table['\\'] = true;
        return table;
    }();

    static char* escape(char* p, char c) {
        using namespace std::string_view_literals;
        switch (c) {
            case '"': return copy(p, "\\\""sv);
            case '\\': return copy(p, "\\\\"sv);
            case '\b': return copy(p, "\\b"sv);
            case '\f': return copy(p, "\\f"sv);
            case '\n': return copy(p, "\\n"sv);
            case '\r': return copy(p, "\\r"sv);
            case '\t': return copy(p, "\\t"sv);
            default: break;
        }
        const auto u = static_cast<unsigned char>(c);
        static constexpr char hex[] = "0123456789abcdef";
        p = copy(p, "\\u00"sv);
        *p++ = hex[u >> 4];
        *p++ = hex[u & 0xfU];
        return p;
    }

    std::string& out_;
    char* at_;     // where the next byte goes
    char* limit_;  // the end of out_'s bytes
    bool first_ = true;
};

}  // namespace

void append_jsonl_line(std::string& out, const journal_record& r, const wire_detail* wire) {
    line_writer w{out};
    visit_fields(r, wire, w);
    w.end();
}

void append_jsonl_line(std::string& out, const server_event& e) {
    line_writer w{out};
    visit_event_fields(e, w);
    w.end();
}

std::string to_jsonl(std::span<const journal_record> records, std::span<const wire_detail> wire,
                     std::span<const server_event> events) {
    std::string out;
    // All in seq order (checked as it goes: a detail of another seq is no detail of this record).
    auto detail = wire.begin();
    auto event = events.begin();
    for (const auto& r : records) {
        for (; event != events.end() && event->seq < r.seq; ++event) append_jsonl_line(out, *event);
        while (detail != wire.end() && detail->seq < r.seq) ++detail;
        append_jsonl_line(out, r, detail != wire.end() && detail->seq == r.seq ? &*detail : nullptr);
    }
    for (; event != events.end(); ++event) append_jsonl_line(out, *event);
    return out;
}

std::string to_jsonl_line(const journal_record& record, const wire_detail* wire) {
    std::string line;
    append_jsonl_line(line, record, wire);
    return line;
}

namespace {

// Reads the fields of one object, remembering the first problem.
class field_reader {
public:
    field_reader(const boost::json::object& o, std::string& error) : object_{o}, error_{error} {}

    bool ok() const { return error_.empty(); }

    template <class Int>
    void number(std::string_view name, Int& out) {
        const auto* v = find(name);
        if (v == nullptr) return;
        boost::system::error_code ec;
        const auto n = v->is_number() ? v->to_number<Int>(ec) : Int{};
        if (!v->is_number() || ec) return bad(name, std::numeric_limits<Int>::is_signed ? "an integer" : "an unsigned integer");
        out = n;
    }

    template <class Int>
    void number_maybe_absent(std::string_view name, Int& out) {
        if (present(name)) number(name, out);
    }

    template <class Optional>
    void optional_number(std::string_view name, Optional& out) {
        if (!present(name)) return;
        typename Optional::value_type n{};
        number(name, n);
        if (!ok()) return;
        if (!holds(out, n)) return bad(name, "an integer in range");
        out = n;
    }

    void round(std::string_view name, round_number& out) {
        if (!present(name)) return;  // absent: round 1
        number(name, out);
        if (ok() && out == 0) bad(name, "a round number (1 or more)");
    }

    // `Text`: std::string (server events) or symbol (records).
    template <class Text>
    void string(std::string_view name, Text& out) {
        std::string_view s;
        if (text(name, s)) out = Text{s};
    }

    void optional_string(std::string_view name, packed_optional<symbol>& out) {
        if (!present(name)) return;
        std::string_view s;
        if (text(name, s)) out = symbol{s};
    }

    template <class Enum>
    void enumeration(std::string_view name, Enum& out) {
        std::string_view s;
        if (!text(name, s)) return;
        if (const auto v = from_string(s, Enum{})) {
            out = *v;
        } else {
            error_ = "field \"" + std::string{name} + "\": unknown value \"" + std::string{s} + "\"";
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

    // The string value of a field, viewing the parsed object.
    bool text(std::string_view name, std::string_view& out) {
        const auto* v = find(name);
        if (v == nullptr) return false;
        if (!v->is_string()) {
            bad(name, "a string");
            return false;
        }
        out = v->get_string();
        return true;
    }

    void bad(std::string_view name, std::string_view expected) {
        error_ = "field \"" + std::string{name} + "\": expected " + std::string{expected};
    }

    const boost::json::object& object_;
    std::string& error_;
};

}  // namespace

namespace {

// Reads one object into a T through its field list (`visit`: visit_fields or visit_event_fields).
template <class T, class Visit>
std::optional<T> read_object(const boost::json::value& v, std::string& error, Visit visit) {
    error.clear();
    if (!v.is_object()) {
        error = "expected a JSON object";
        return std::nullopt;
    }
    T out;
    field_reader f{v.as_object(), error};
    visit(out, f);
    if (!f.ok()) return std::nullopt;
    return out;
}

}  // namespace

std::optional<journal_record> record_from_json(const boost::json::value& v, std::string& error, wire_detail* wire) {
    wire_detail unused;
    wire_detail* const into = wire != nullptr ? wire : &unused;
    auto record = read_object<journal_record>(v, error, [&](auto& r, auto& f) { visit_fields(r, into, f); });
    if (record) into->seq = record->seq;
    return record;
}

std::optional<server_event> server_event_from_json(const boost::json::value& v, std::string& error) {
    return read_object<server_event>(v, error, [](auto& e, auto& f) { visit_event_fields(e, f); });
}

namespace {

bool is_server_event(const boost::json::value& v) {
    const auto* o = v.if_object();
    return o != nullptr && o->contains("event");
}

// The symbols a reader met lately, by a hash of their text. Most strings of a record repeat line
// after line (method, target, rule, fault, the attempt header, a key equal to the operation), and
// finding one here takes no lock, where the intern table takes its shard's lock even to find a string
// it holds: two threads reading one journal would take those locks in turns. A slot holds the last
// symbol hashed to it and that hash in full, so most misses (a new operation id where an older one
// was) are told apart without reading the older text, which the other thread may be writing beside.
class symbol_cache {
public:
    symbol get(std::string_view text) {
        if (text.empty()) return {};
        const std::uint64_t h = hash(text);
        slot& s = slots_[static_cast<std::size_t>(h >> (64 - index_bits))];
        if (s.hash != h || s.value.view() != text) s = {h, symbol{text}};
        return s.value;
    }

private:
    struct slot {
        std::uint64_t hash = 0;
        symbol value;
    };

    // Eight bytes at a time, multiplied so that every byte reaches the top bits the index is taken from.
    static std::uint64_t hash(std::string_view text) {
        constexpr std::uint64_t mix = 0x9e3779b97f4a7c15ULL;
        std::uint64_t h = text.size() * mix;
        for (std::size_t i = 0; i < text.size(); i += 8) {
            std::uint64_t word = 0;
            std::memcpy(&word, text.data() + i, std::min<std::size_t>(8, text.size() - i));
            h = (h ^ word) * mix;
        }
        return h;
    }

    static constexpr unsigned index_bits = 12;  // more slots than a journal has methods and targets
    std::vector<slot> slots_ = std::vector<slot>(std::size_t{1} << index_bits);
};

// Reads a line in exactly the form the line writer gives it: the fields in visit_fields order, no
// whitespace, no escapes, no nulls, integers only. Anything else (an older or newer writer, a line
// edited by hand, a bad line) stops it, and the caller parses the line with Boost.JSON instead, so
// values and error messages are the same whichever path read a line. Several times faster than
// building a boost::json::value first, which was most of `faultline check`'s time.
class writer_form_reader {
public:
    writer_form_reader(std::string_view line, symbol_cache& symbols)
        : at_{line.data()}, end_{line.data() + line.size()}, symbols_{symbols} {}

    // True when every field matched and the object ends the line.
    bool complete() const { return ok_ && end_ - at_ == 1 && *at_ == '}'; }

    template <class Int>
    void number(std::string_view name, Int& out) {
        if (key(name)) integer(out);
    }

    template <class Int>
    void number_maybe_absent(std::string_view name, Int& out) {
        if (next_key_is(name)) number(name, out);  // absent: no wire details kept, or an older writer
    }

    template <class Optional>
    void optional_number(std::string_view name, Optional& out) {
        if (!next_key_is(name)) return;  // absent: the writer omits unset optionals
        typename Optional::value_type n{};
        number(name, n);
        if (!holds(out, n)) ok_ = false;  // Boost.JSON's path says it is out of range
        out = n;
    }

    void round(std::string_view name, round_number& out) {
        if (!next_key_is(name)) return;  // absent: round 1
        number(name, out);
        if (out == 0) ok_ = false;  // Boost.JSON's path says why
    }

    template <class Text>
    void string(std::string_view name, Text& out) {
        std::string_view s;
        if (key(name) && raw_string(s)) out = text_of<Text>(s);
    }

    void optional_string(std::string_view name, packed_optional<symbol>& out) {
        if (!next_key_is(name)) return;
        std::string_view s;
        if (key(name) && raw_string(s)) out = symbols_.get(s);
    }

    template <class Enum>
    void enumeration(std::string_view name, Enum& out) {
        std::string_view s;
        if (!key(name) || !raw_string(s)) return;
        if (const auto v = from_string(s, Enum{})) {
            out = *v;
        } else {
            ok_ = false;  // Boost.JSON's path names the unknown value
        }
    }

private:
    // `{"name":` for the first field, `,"name":` after it.
    bool next_key_is(std::string_view name) const {
        const auto left = static_cast<std::size_t>(end_ - at_);
        return ok_ && left > name.size() + 3 && at_[0] == (first_ ? '{' : ',') && at_[1] == '"' &&
               std::string_view{at_ + 2, name.size()} == name && at_[name.size() + 2] == '"' &&
               at_[name.size() + 3] == ':';
    }

    bool key(std::string_view name) {
        if (!next_key_is(name)) return ok_ = false;
        at_ += name.size() + 4;
        first_ = false;
        return true;
    }

    // JSON's integer grammar, which from_chars alone does not enforce: no leading zeros, no '+'.
    template <class Int>
    void integer(Int& out) {
        const char* digits = at_ != end_ && *at_ == '-' ? at_ + 1 : at_;
        if (end_ - digits >= 2 && digits[0] == '0' && digits[1] >= '0' && digits[1] <= '9') {
            ok_ = false;
            return;
        }
        const auto [ptr, ec] = std::from_chars(at_, end_, out);
        if (ec != std::errc{}) ok_ = false;  // not an integer of this type: Boost.JSON's path says why
        at_ = ptr;
    }

    // A string without escapes or control characters (which Boost.JSON's path decodes or rejects);
    // other bytes, UTF-8 or not, are taken as they are, as allow_invalid_utf8 does.
    bool raw_string(std::string_view& out) {
        if (at_ == end_ || *at_ != '"') return ok_ = false;
        const char* begin = ++at_;
        for (; at_ != end_; ++at_) {
            const auto c = static_cast<unsigned char>(*at_);
            if (c == '"') {
                out = {begin, static_cast<std::size_t>(at_ - begin)};
                ++at_;
                return true;
            }
            if (c == '\\' || c < 0x20) break;
        }
        return ok_ = false;
    }

    // A record's strings are symbols, found in the cache; an event's are std::strings.
    template <class Text>
    Text text_of(std::string_view s) {
        if constexpr (std::is_same_v<Text, symbol>) {
            return symbols_.get(s);
        } else {
            return Text{s};
        }
    }

    const char* at_;
    const char* end_;
    bool first_ = true;
    bool ok_ = true;
    symbol_cache& symbols_;
};

constexpr std::string_view event_line_start = R"({"event":)";

// Where a line reader puts its records: first into `slots` (its share of a vector sized beforehand,
// when a file is read in two halves at once), then, once those are full or when there are none, at
// the end of `more`. `open` gives a default record to read a line into; `keep` or `discard` settles it.
class record_destination {
public:
    record_destination(std::span<journal_record> slots, std::vector<journal_record>& more)
        : slots_{slots}, more_{more} {}

    journal_record& open() { return filled_ < slots_.size() ? slots_[filled_] : more_.emplace_back(); }

    void keep() {
        if (filled_ < slots_.size()) ++filled_;
    }

    void discard() {
        if (filled_ < slots_.size()) {
            slots_[filled_] = journal_record{};  // read into again: a field set by the failed read must go
        } else {
            more_.pop_back();
        }
    }

    // How many of the slots hold records.
    std::size_t filled() const { return filled_; }

private:
    std::span<journal_record> slots_;
    std::size_t filled_ = 0;
    std::vector<journal_record>& more_;
};

// Read in blocks this large (grown for a longer line): few system calls, and the memory stays
// bounded however large the journal is.
constexpr std::size_t read_block = std::size_t{1} << 20;

// How many records `bytes` of journal hold, from the lines of `sample` (its start) and with 5 % to
// spare: enough to reserve once, as growing by doubling would move every record and, while it moves
// them, hold half as many again as the journal has. 0 when the sample holds no whole line.
std::size_t estimated_records(std::uintmax_t bytes, std::string_view sample) {
    const auto lines = static_cast<std::uintmax_t>(std::count(sample.begin(), sample.end(), '\n'));
    if (lines == 0) return 0;
    return static_cast<std::size_t>(bytes / (sample.size() / lines) * 21 / 20 + 16);
}

// Turns journal lines into records, events and errors, numbering them; owns nothing but the result
// and its symbol cache. One reader is used by one thread. Not copyable: its destination refers to its
// own result.
class journal_line_reader {
public:
    // `slots`: see record_destination; without, every record goes to result().records.
    explicit journal_line_reader(std::string_view name, std::span<journal_record> slots = {})
        : name_{name}, records_{slots, result_.records} {}
    journal_line_reader(const journal_line_reader&) = delete;
    journal_line_reader& operator=(const journal_line_reader&) = delete;

    // One line without its '\n'. `unterminated`: the input ended without one, as it does when the
    // writer was stopped mid-line.
    void read(std::string_view line, bool unterminated) {
        ++number_;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.find_first_not_of(" \t") == std::string_view::npos) return;
        if (read_writer_form(line)) return;
        boost::system::error_code ec;
        // Targets and header values are bytes off the wire and are written as they came.
        boost::json::parse_options options;
        options.allow_invalid_utf8 = true;
        const auto v = boost::json::parse(line, ec, {}, options);
        if (ec && unterminated) {
            result_.warnings.push_back(
                config_error{{std::string{name_}, number_, 0},
                             "journal ends in a torn line (" + std::to_string(line.size()) +
                                 " bytes) — ignored; the rest is judged"});
            return;
        }
        if (ec) return fail("invalid JSON (" + ec.message() + ")");
        if (is_server_event(v)) {
            if (auto e = server_event_from_json(v, error_)) return result_.server_events.push_back(std::move(*e));
        } else if (auto r = record_from_json(v, error_)) {
            records_.open() = *r;
            return records_.keep();
        }
        fail(error_);
    }

    // Reserves room for the records of `total_bytes` of input, estimated from its first block.
    void expect(std::uintmax_t total_bytes, std::string_view first_block) {
        result_.records.reserve(estimated_records(total_bytes, first_block));
    }

    // Lines read so far (the number of the last one).
    std::uint32_t lines() const { return number_; }
    // How many of the slots hold records (the rest of the records are in result().records).
    std::size_t slots_filled() const { return records_.filled(); }
    jsonl_read_result& result() { return result_; }

private:
    // Parses in place (a record is large; moving it in costs as much as reading its numbers).
    bool read_writer_form(std::string_view line) {
        writer_form_reader reader{line, symbols_};
        if (line.starts_with(event_line_start)) {
            visit_event_fields(result_.server_events.emplace_back(), reader);
            if (!reader.complete()) result_.server_events.pop_back();
        } else {
            // The checks read no wire detail: it is checked as the line is read, and not kept.
            wire_detail unused;
            visit_fields(records_.open(), &unused, reader);
            if (reader.complete()) {
                records_.keep();
            } else {
                records_.discard();
            }
        }
        return reader.complete();
    }

    void fail(const std::string& why) {
        result_.errors.push_back(config_error{{std::string{name_}, number_, 0}, "bad journal record: " + why});
    }

    std::string_view name_;
    std::uint32_t number_ = 0;
    std::string error_;
    symbol_cache symbols_;
    jsonl_read_result result_;
    record_destination records_;
};

// Feeds `reader` the lines of `in` up to its end or `length` bytes, whichever comes first, read in
// blocks of `block` bytes. `total_bytes`: the input's size when known (0 when not), to reserve room
// for its records.
void read_lines(std::istream& in, std::uintmax_t length, journal_line_reader& reader, std::uintmax_t total_bytes,
                std::size_t block = read_block) {
    std::string buffer(block, '\0');
    std::size_t filled = 0;  // buffer[0, filled) holds input not yet split into lines
    // Ends at end of input: each iteration reads a block and consumes the whole lines in it.
    while (in && length > 0) {
        const auto room = std::min<std::uintmax_t>(buffer.size() - filled, length);
        in.read(buffer.data() + filled, static_cast<std::streamsize>(room));
        const auto got = static_cast<std::size_t>(in.gcount());
        filled += got;
        length -= got;
        const std::string_view text{buffer.data(), filled};
        if (total_bytes > 0) reader.expect(std::exchange(total_bytes, 0), text);
        std::size_t begin = 0;
        for (std::size_t end; (end = text.find('\n', begin)) != std::string_view::npos; begin = end + 1) {
            reader.read(text.substr(begin, end - begin), false);
        }
        std::memmove(buffer.data(), buffer.data() + begin, filled - begin);
        filled -= begin;
        if (filled == buffer.size()) buffer.resize(buffer.size() * 2);
    }
    if (filled > 0) reader.read({buffer.data(), filled}, true);
}

// Up to `length` bytes of `in` from `offset`.
std::string bytes_at(std::istream& in, std::uintmax_t offset, std::size_t length) {
    std::string out(length, '\0');
    in.seekg(static_cast<std::streamoff>(offset));
    in.read(out.data(), static_cast<std::streamsize>(length));
    out.resize(static_cast<std::size_t>(in.gcount()));
    in.clear();
    return out;
}

// Where the second half starts: the first line that starts at or after the middle of a `size`-byte
// file (nullopt when the last line does: one line straddles the whole second half).
std::optional<std::uintmax_t> second_half_start(std::istream& in, std::uintmax_t size) {
    // From the byte before the middle, so that a line starting exactly at the middle is found.
    for (std::uintmax_t at = size / 2 - 1; at < size;) {
        const std::string block = bytes_at(in, at, read_block);
        if (block.empty()) return std::nullopt;
        if (const auto newline = block.find('\n'); newline != std::string::npos) {
            const std::uintmax_t start = at + newline + 1;
            return start < size ? std::optional{start} : std::nullopt;
        }
        at += block.size();
    }
    return std::nullopt;
}

struct record_shares {
    std::size_t first;
    std::size_t second;
};

// How many records `bytes` of journal from `begin` hold, estimated (as estimated_records does) from
// the whole lines of a block in the middle of them: a journal's lines grow longer as its numbers do,
// and its first block alone overestimated a large one by 3 %.
std::size_t estimated_records_from_middle(std::istream& in, std::uintmax_t begin, std::uintmax_t bytes) {
    const std::string block = bytes_at(in, begin + bytes / 2 - std::min<std::uintmax_t>(bytes / 2, read_block / 2), read_block);
    const std::size_t first = block.find('\n');
    const std::size_t last = block.rfind('\n');
    if (first == std::string::npos || first == last) return estimated_records(bytes, bytes_at(in, begin, read_block));
    return estimated_records(bytes, std::string_view{block}.substr(first + 1, last - first));
}

// How many records each half of a `size`-byte file split at `middle` is given room for (the blocks
// sampled are read, counted and freed here).
record_shares estimated_shares(std::istream& in, std::uintmax_t size, std::uintmax_t middle) {
    return {estimated_records_from_middle(in, 0, middle), estimated_records_from_middle(in, middle, size - middle)};
}

// Reads the lines of `path` before `middle` on this thread and the rest on another, each into its
// own share of one record vector sized beforehand, so the records are held once (blocks moved into a
// vector sized after the count would hold every record twice at the join). The second half's line
// numbers continue the first's; records, events, errors and warnings keep file order. A share that
// comes out short (lines shorter than the first block's) spills into its reader's own vector, merged
// in order at the end (the one case where the vector grows, and for a moment holds records twice).
jsonl_read_result read_two_halves(const std::string& path, std::uintmax_t size, std::uintmax_t middle,
                                  record_shares room) {
    const std::size_t first_share = room.first;
    std::vector<journal_record> records(room.first + room.second);
    const std::span<journal_record> slots{records};
    journal_line_reader first{path, slots.first(first_share)};
    journal_line_reader second{path, slots.subspan(first_share)};
    std::ifstream first_in{path, std::ios::binary};
    std::ifstream second_in{path, std::ios::binary};
    if (!first_in || !second_in) {
        jsonl_read_result result;
        result.errors.push_back(config_error{{path, 0, 0}, "cannot open journal file"});
        return result;
    }
    second_in.seekg(static_cast<std::streamoff>(middle));
    // Two readers at once, each with half the usual block: the buffers take what one reader's did.
    constexpr std::size_t half_block = read_block / 2;
    std::exception_ptr second_failed;
    {
        // Joined before anything it uses goes, even when this thread's half throws.
        std::jthread helper{[&] {
            try {
                read_lines(second_in, size - middle, second, 0, half_block);
            } catch (...) {
                second_failed = std::current_exception();
            }
        }};
        read_lines(first_in, middle, first, 0, half_block);
    }
    if (second_failed) std::rethrow_exception(second_failed);

    jsonl_read_result out = std::move(first.result());
    jsonl_read_result& later = second.result();
    std::vector<journal_record> first_spilled = std::exchange(out.records, {});
    // Close the gap between the shares: [0, first filled) [unused] [second's records] [unused].
    records.resize(first_share + second.slots_filled());
    records.erase(records.begin() + static_cast<std::ptrdiff_t>(first.slots_filled()),
                  records.begin() + static_cast<std::ptrdiff_t>(first_share));
    records.insert(records.begin() + static_cast<std::ptrdiff_t>(first.slots_filled()), first_spilled.begin(),
                   first_spilled.end());
    records.insert(records.end(), later.records.begin(), later.records.end());
    out.records = std::move(records);

    out.server_events.insert(out.server_events.end(), std::make_move_iterator(later.server_events.begin()),
                             std::make_move_iterator(later.server_events.end()));
    const auto renumbered = [&](config_errors& from, config_errors& to) {
        for (config_error& e : from) {
            e.where.line += first.lines();
            to.push_back(std::move(e));
        }
    };
    renumbered(later.errors, out.errors);
    renumbered(later.warnings, out.warnings);
    return out;
}

// A journal numbers its records and events from one counter, so a seq seen twice is a line copied
// (by a tool, by hand, by a client under test): judged as two attempts it could invent a double
// effect or hide a retry. It is an error, never read as evidence. Writers' files are in seq order
// almost always, so the common case is one pass without a copy.
jsonl_read_result with_repeated_seqs_refused(jsonl_read_result result, std::string_view name) {
    std::vector<std::uint64_t> seqs;
    seqs.reserve(result.records.size() + result.server_events.size());
    for (const journal_record& r : result.records) seqs.push_back(r.seq);
    for (const server_event& e : result.server_events) seqs.push_back(e.seq);
    if (std::adjacent_find(seqs.begin(), seqs.end(), std::greater_equal<>{}) != seqs.end()) {
        std::sort(seqs.begin(), seqs.end());
        const auto repeated = std::adjacent_find(seqs.begin(), seqs.end());
        if (repeated != seqs.end()) {
            const auto times = std::upper_bound(repeated, seqs.end(), *repeated) - repeated;
            result.errors.push_back(config_error{
                {std::string{name}, 0, 0},
                "bad journal: seq " + std::to_string(*repeated) + " appears " + std::to_string(times) +
                    " times (a journal holds each attempt and event once: lines were copied)"});
        }
    }
    return result;
}

// What a journal's lines say together, checked once they are all read: each seq once, the rounds
// numbered by the resets (journal_rounds.hpp).
jsonl_read_result checked_as_a_whole(jsonl_read_result result, std::string_view name) {
    result = with_repeated_seqs_refused(std::move(result), name);
    if (auto error = number_rounds(result.records, result.server_events, name)) result.errors.push_back(std::move(*error));
    return result;
}

}  // namespace

jsonl_read_result read_jsonl(std::istream& in, std::string_view name) {
    journal_line_reader reader{name};
    read_lines(in, std::numeric_limits<std::uintmax_t>::max(), reader, 0);
    return checked_as_a_whole(std::move(reader.result()), name);
}

jsonl_read_result read_jsonl(const std::string& path) {
    std::ifstream in{path, std::ios::binary};
    if (!in) {
        jsonl_read_result result;
        result.errors.push_back(config_error{{path, 0, 0}, "cannot open journal file"});
        return result;
    }
    std::error_code ec;
    const std::uintmax_t size = std::filesystem::file_size(path, ec);
    if (!ec && size >= jsonl_two_halves_from) {
        if (const auto middle = second_half_start(in, size)) {
            return checked_as_a_whole(read_two_halves(path, size, *middle, estimated_shares(in, size, *middle)), path);
        }
        in.seekg(0);
    }
    journal_line_reader reader{path};
    read_lines(in, std::numeric_limits<std::uintmax_t>::max(), reader, ec ? 0 : size);
    return checked_as_a_whole(std::move(reader.result()), path);
}

}  // namespace faultline::record
