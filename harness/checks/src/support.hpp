// Helpers shared by the check implementations (internal to harness/checks/src): how attempts and
// times are written in evidence, which outcomes count as success or retryable failure, the
// operation deadline, sliding windows, the quantiles and binomial tail the statistical checks use, and `check_info`, the entry each check file registers with
// `core::registry` (registry.cpp looks checks up there).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "faultline/checks/check.hpp"
#include "faultline/config/reader.hpp"
#include "faultline/core/grpc_status.hpp"
#include "faultline/core/registry.hpp"
#include "faultline/record/run_record.hpp"
#include "faultline/retry/status_rules.hpp"

namespace faultline::checks {

// "12.3ms": times in evidence are ms since run start with 0.1 ms resolution.
std::string format_ms(std::int64_t ns);
std::string format_ms(std::chrono::nanoseconds d);
// "0.0ms–257.8ms": a window of the run. A window that ends at an early attempt starts before the
// run did; it is shown from the run's start, never at a negative time.
std::string format_window(std::int64_t start_ns, std::int64_t end_ns);
// A measured or configured value to three significant digits ("0.2", "3", "7.56"); from 1000 on,
// whole ("1000000").
std::string format_number(double value);

// "200", "503", or the wire outcome when no complete response was sent ("reset", "hung", …).
std::string attempt_result(const record::journal_record& r);
// "#12 POST /charge at 105.2ms→106.0ms: 503 [fault status, rule r1]"; a gRPC call's status and
// pushback follow the HTTP result ("200 grpc UNAVAILABLE, pushback 100ms").
std::string describe_attempt(const record::journal_record& r);

bool is_success(const record::journal_record& r);  // a complete 2xx response
// A 409 from the server's idempotency layer because the key's first request is still in flight
// (journal effect `conflict`; a `conflict` on a 422 is a payload mismatch instead).
bool idempotency_key_in_use(const record::journal_record& r);
// Whether a response with treatment `t` (retry/status_rules.hpp) may be retried, by what it carried.
bool allows_retry(retry::status_treatment t, const record::journal_record& r);
// gRPC retryThrottling's notion of a failure: no complete response, or a status the retry library's
// table retries (408, 429, 500, 502, 503, 504; 413 with Retry-After; a key-in-use 409), as the builtin
// client's budget counts them.
bool is_retryable_failure(const record::journal_record& r);
// The server committed the effect but the client never got the complete reply.
bool reply_lost_after_commit(const record::journal_record& r);

std::vector<std::uint64_t> seqs_of(record::attempt_list attempts);
std::vector<std::uint64_t> seqs_of(std::span<const record::journal_record* const> attempts);

// Client records by operation identity (none for `command` clients): (symbol id, position) pairs
// sorted by id, 8 bytes an operation, where the node map each of three checks built at once took ~50.
class client_index {
public:
    explicit client_index(const record::run_record& run);
    // The operation's client record (the first, should two share an identity); null when none.
    const record::client_record* find(record::symbol operation) const;

private:
    const std::deque<record::client_record>& clients_;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> by_operation_;
};

// The journal's groups of the operations named (those it has any attempt of), by name, found in one
// pass. Evidence names a few operations: an index of every operation cost a large run ~50 bytes an
// operation at its peak.
std::unordered_map<record::symbol, record::operation_attempts> find_operations(const record::operation_groups& operations,
                                                              std::span<const record::symbol> names);

// The operation's overall deadline (ns since run start): from its client record when present,
// else from the first attempt's propagated deadline header (first t_request + deadline_ms).
std::optional<std::int64_t> operation_deadline(const record::operation_attempts& op, const record::client_record* client);

// The spells in which the server itself ran late (server_late events): a stamp taken in one may be
// late by as much as the spell lasted, so a gap measured from it may be that much too short.
class server_lateness {
public:
    explicit server_lateness(const record::run_record& run);
    // How late a stamp taken in [from_ns, to_ns] may be: the longest spell overlapping it, each
    // spell reaching one timer period past its last late firing (0 when none).
    std::int64_t overlapping(std::int64_t from_ns, std::int64_t to_ns) const;

private:
    std::vector<std::pair<std::int64_t, std::int64_t>> spells_;  // (from, length) in ns
};

// The findings a check leaves out because the server's own lateness explains them (a finding no
// larger than the spell around the stamp that made it): how many, and the longest such spell.
class lateness_excuses {
public:
    explicit lateness_excuses(const server_lateness& spells) : spells_{spells} {}
    // A finding `off` ns past its bound, made by a stamp taken in [from_ns, to_ns]: true, and counted,
    // when a spell there lasted at least that long.
    bool excuse(std::int64_t from_ns, std::int64_t to_ns, double off);
    bool excuse(std::int64_t from_ns, std::int64_t to_ns, std::int64_t off) {
        return excuse(from_ns, to_ns, static_cast<double>(off));
    }
    std::size_t count() const { return count_; }
    // "; N not judged: <how> by no more than the server itself ran late <when> (up to X,
    // server_late)<tail>", or "" when nothing was left out.
    std::string clause(std::string_view how, std::string_view when, std::string_view tail = "") const;

private:
    const server_lateness& spells_;
    std::size_t count_ = 0;
    std::int64_t longest_ = 0;
};

// Calls visit(s), in ascending order and once each, for the candidate starts of windows
// [s, s + width) that cover every distinct way a window of that width can intersect the events of
// two sorted time lists: windows starting at an event and windows ending at one (s = t - width + 1).
// Those four sequences are sorted already, so they are merged as they go: no copy and no sort, where
// materialising and sorting them was a large check's biggest allocation.
template <class Visit>
void for_each_window_start(std::span<const std::int64_t> a, std::span<const std::int64_t> b, std::int64_t width,
                           Visit&& visit) {
    const std::int64_t before_end = width - 1;
    // Cursors into a and b as window starts, then as window ends.
    std::size_t cursor[4] = {0, 0, 0, 0};
    const std::span<const std::int64_t> list[4] = {a, b, a, b};
    bool started = false;
    std::int64_t last = 0;
    for (;;) {
        int next = -1;
        std::int64_t best = 0;
        for (int i = 0; i < 4; ++i) {
            if (cursor[i] == list[i].size()) continue;
            const std::int64_t s = list[i][cursor[i]] - (i < 2 ? 0 : before_end);
            if (next < 0 || s < best) {
                next = i;
                best = s;
            }
        }
        if (next < 0) return;
        ++cursor[next];
        if (started && best == last) continue;
        started = true;
        last = best;
        visit(best);
    }
}
// Counts sorted times in windows [start, start + width) for starts that never decrease (as
// for_each_window_start gives them), moving two cursors instead of searching: amortised O(1) per window,
// where two binary searches per window were most of a big journal's window checks. Refers to the
// times, which must outlive it.
class window_counter {
public:
    window_counter(const std::vector<std::int64_t>& sorted_times, std::int64_t width)
        : times_{sorted_times}, width_{width} {}
    std::size_t count_from(std::int64_t start);

private:
    const std::vector<std::int64_t>& times_;
    std::int64_t width_;
    std::size_t begin_ = 0;  // first time >= the last start
    std::size_t end_ = 0;    // first time >= the last start + width
};

// The q-quantile (q in [0, 1]) of sorted, non-empty values, interpolating linearly between the two
// nearest order statistics (R's and NumPy's default, "type 7"), so small samples give stable spreads.
double quantile(const std::vector<double>& sorted_values, double q);

// The smallest count m with P(X > m) <= alpha for X ~ Binomial(n, p): a bucket that holds more than m
// of n independent events, each landing in it with probability at most p, has probability at most
// alpha under that model. Summed from the upper tail in log space, so it neither underflows nor
// loses alpha to cancellation; p >= 1 gives n (nothing can exceed it).
std::size_t binomial_upper_bound(std::size_t n, double p, double alpha);

// Appends evidence up to `evidence_limit`, counting all of it.
void add_evidence(record::verdict& v, record::evidence_item item);

// What a check file registers, one per file, as its last line:
//   const core::registration<check_info> registered{"<name>", "<one-line summary>", &make_<name>};
// The factory reads every parameter through the reader (context `check "<name>"`, `check` and
// `expect_failure` already declared) and returns the configured check; it reports problems through
// the reader, and what it returns is discarded when any was reported.
using check_factory = std::unique_ptr<check> (*)(config::table_reader&);
struct check_info {
    std::string name;     // the `check = "…"` value and the file's name
    std::string summary;  // one line for `faultline list checks`
    check_factory make;
};

}  // namespace faultline::checks
