#include "faultline/tcp/connection_journal.hpp"

#include "faultline/record/journal_json.hpp"
#include "faultline/record/server_event.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <cerrno>
#include <system_error>

namespace faultline::tcp {

using boost::system::error_code;

std::string_view to_string(connection_outcome o) {
    switch (o) {
    case connection_outcome::closed: return "closed";
    case connection_outcome::reset: return "reset";
    case connection_outcome::refused: return "refused";
    case connection_outcome::upstream_refused: return "upstream_refused";
    case connection_outcome::upstream_unreachable: return "upstream_unreachable";
    case connection_outcome::timeout: return "timeout";
    case connection_outcome::stopped: return "stopped";
    case connection_outcome::over_capacity: return "over_capacity";
    }
    return "closed";
}

boost::json::object to_json(const connection_record& record) {
    boost::json::object out;
    out["type"] = "tcp_connection";
    out["conn"] = record.conn;
    out["t_accept"] = record.t_accept;
    out["t_end"] = record.t_end;
    out["bytes_up"] = record.bytes_up;
    out["bytes_down"] = record.bytes_down;
    boost::json::array toxics;
    for (const auto& name : record.toxics) toxics.emplace_back(name);
    out["toxics"] = std::move(toxics);
    out["outcome"] = to_string(record.outcome);
    if (!record.ended_by.empty()) out["ended_by"] = record.ended_by;
    if (!record.error.empty()) out["error"] = record.error;
    if (!record.instance.empty()) out["instance"] = record.instance;
    return out;
}

bool holds_tcp_connections(std::istream& journal, std::size_t max_lines) {
    std::string line;
    for (std::size_t n = 0; n < max_lines && std::getline(journal, line); ++n) {
        if (line.empty()) continue;
        error_code ec;
        const boost::json::value v = boost::json::parse(line, ec);
        if (ec || !v.is_object()) return false;
        const auto& object = v.get_object();
        if (object.contains("event")) continue;  // the anchor, or another server event
        const auto* type = object.if_contains("type");
        return type != nullptr && type->is_string() && type->get_string() == "tcp_connection";
    }
    return false;
}

connection_journal::connection_journal(const std::string& path, std::int64_t at_ns,
                                       std::chrono::system_clock::time_point wall, const std::string& instance)
    : file_{std::fopen(path.c_str(), "w")} {
    if (file_ == nullptr) throw std::system_error{errno, std::generic_category(), path};
    // The HTTP journal's anchor line, so `faultline check` and merges read the same first line.
    std::string line;
    record::append_jsonl_line(line, record::wall_clock_anchor(at_ns, wall, instance, std::nullopt));
    const std::lock_guard lock{mutex_};
    write_line(line);
}

connection_journal::~connection_journal() {
    if (file_ != nullptr) std::fclose(file_);
}

void connection_journal::append(const connection_record& record) {
    std::string line = boost::json::serialize(to_json(record));
    line += '\n';
    const std::lock_guard lock{mutex_};
    write_line(line);
}

void connection_journal::write_line(const std::string& line) {
    if (!error_.empty()) return;
    // One line per connection, not per request: handing each to the kernel at once costs little and
    // keeps every ended connection on disk if the proxy is killed.
    if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0) {
        error_ = std::string{"write failed: "} + std::generic_category().message(errno);
    }
}

void connection_journal::flush() {
    const std::lock_guard lock{mutex_};
    if (error_.empty() && std::fflush(file_) != 0) error_ = "flush failed";
}

bool connection_journal::failed() const {
    const std::lock_guard lock{mutex_};
    return !error_.empty();
}

std::string connection_journal::error() const {
    const std::lock_guard lock{mutex_};
    return error_;
}

}  // namespace faultline::tcp
