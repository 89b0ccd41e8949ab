// The journal of `faultline proxy --mode tcp`: one JSON line per connection, written when it ends.
// Its own record type, beside (not inside) the HTTP journal's attempts:
//
//   {"type":"tcp_connection","conn":1,"t_accept":1200,"t_end":5400,"bytes_up":18,"bytes_down":230,
//    "toxics":["latency-1"],"outcome":"closed","ended_by":"limit-1","error":"…","instance":"edge"}
//
// Times are ns since the proxy started; bytes are those written to the upstream (up) and to the client
// (down); `toxics` the toxics that acted on the connection; `ended_by` (optional) the toxic that ended
// it; `error` (optional) the socket error that did; `instance` (optional) `--instance`. The file's
// first line is the HTTP journal's wall-clock anchor, a `started` server event, so journals of several
// instances share one timeline. Lines are written with Boost.JSON and handed to the kernel per line.
#pragma once

#include <boost/json/object.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <istream>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace faultline::tcp {

// How a connection ended, from the proxy's side.
enum class connection_outcome {
    closed,                // EOF both ways (or a toxic closed it: see ended_by)
    reset,                 // an RST: a peer reset, or a toxic reset it (ended_by)
    refused,               // the refused toxic ended it on accept
    upstream_refused,      // the upstream refused the connection; the client was reset
    upstream_unreachable,  // the upstream connect failed otherwise or timed out; the client was reset
    timeout,               // the timeout toxic closed it (or its hold reached max_hold)
    stopped,               // still open when the proxy stopped
    over_capacity,         // reset on accept: max_connections were open
};
std::string_view to_string(connection_outcome o);

struct connection_record {
    std::uint64_t conn = 0;  // 1-based, in accept order
    std::int64_t t_accept = 0;
    std::int64_t t_end = 0;
    std::uint64_t bytes_up = 0;
    std::uint64_t bytes_down = 0;
    std::vector<std::string> toxics;
    connection_outcome outcome = connection_outcome::closed;
    std::string ended_by;  // "" = no toxic ended it
    std::string error;     // "" = no socket error
    std::string instance;  // "" = none
};

boost::json::object to_json(const connection_record& record);

// Whether a journal holds TCP-mode connection records: its first line that is not a server event is
// a `tcp_connection` (the journal of `faultline check` reads HTTP attempts, which such a file has not).
// Reads at most the first `max_lines` lines.
bool holds_tcp_connections(std::istream& journal, std::size_t max_lines = 1000);

// The journal file. Thread-safe; a write error is sticky and reported by failed()/error().
class connection_journal {
public:
    // Truncates `path` and writes the anchor line (`wall` at `at_ns`). Throws std::system_error when
    // the file cannot be opened.
    connection_journal(const std::string& path, std::int64_t at_ns, std::chrono::system_clock::time_point wall,
                       const std::string& instance);
    ~connection_journal();
    connection_journal(const connection_journal&) = delete;
    connection_journal& operator=(const connection_journal&) = delete;

    void append(const connection_record& record);
    void flush();
    bool failed() const;
    std::string error() const;

private:
    void write_line(const std::string& line);  // the caller holds mutex_

    mutable std::mutex mutex_;
    std::FILE* file_ = nullptr;
    std::string error_;
};

}  // namespace faultline::tcp
