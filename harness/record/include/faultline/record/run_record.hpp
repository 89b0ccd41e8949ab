// The run record: everything one scenario run produced — the server's journal (one record per
// attempt), the client-side outcomes the built-in driver kept, an external client command's result
// with each of its processes, what the client declared about itself, timings, the seed, and the
// verdicts once the checks ran. It is a plain value: checks read it and report writers are pure
// functions of it. The helpers below give the views every check needs (operations with their
// attempts in order, the ledger of committed effects) so that all checks group attempts the same way.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <iterator>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "faultline/record/grpc_service_config.hpp"
#include "faultline/record/server_event.hpp"
#include "faultline/record/journal_record.hpp"
#include "faultline/record/verdict.hpp"

namespace faultline::record {

// One operation as the built-in driver's client saw it. Third-party `command` clients leave these
// empty, so every check also works from the journal alone. Its strings are symbols, like the
// journal's: the operation is the very id its attempts carry, outcomes are ids of a handful of texts.
struct client_record {
    std::int64_t started_ns = 0;   // ns since run start: the caller asked for the operation
    std::int64_t finished_ns = 0;  // ns since run start: the caller got the final result
    packed_optional<std::int64_t> deadline_ns;  // absolute overall deadline, ns since run start
    symbol operation;  // identity, the same string the server puts in journal_record::operation
    symbol client;     // virtual client id
    symbol method;
    symbol target;
    std::uint32_t attempts = 0;    // attempts the client made (including ones that never reached the server)
    symbol decision;               // final retry decision (retry::to_string(decision)), e.g. "success"
    // Each attempt's outcome in order, joined by ", ": "503, reset_after_write, 200". One symbol, not
    // a vector: runs repeat a few sequences, so the intern table keeps each once, where a vector per
    // operation took ~56 bytes.
    symbol attempt_outcomes;
    bool success = false;
};
// A run holds one per operation: 88 bytes with a vector and std::optional, 56 now.
static_assert(sizeof(client_record) <= 56, "client_record is meant to stay compact");

// One process the `command` driver started. Times are on the journal's clock (ns since run start),
// so a process's life can be laid over the attempts the server saw.
struct process_record {
    std::uint64_t op = 0;          // operation number: its index in per_operation mode, 0 when run once
    std::int64_t pid = 0;
    std::int64_t started_ns = 0;   // just before it was spawned
    std::int64_t finished_ns = 0;  // when its exit was seen
    int exit_status = 0;           // as a shell reports it: 128 + the signal when a signal ended it
    std::optional<int> signal;     // the signal that ended it, if one did
    bool killed = false;           // signalled at the scenario's time limit (or on an interrupt)
};

// What an external client command did (the `command` driver).
struct command_result {
    int exit_status = 0;  // the first non-zero exit status in operation order; 0 when all succeeded
    std::string stdout_text;
    std::string stderr_text;
    bool killed = false;  // some process was killed at the scenario's time limit
    std::vector<process_record> processes;  // every process started, in operation order
    // Why a process could not be started ("cannot start \"X\": No such file or directory"); "" when
    // every one started. exit_status says nothing of a process that never ran.
    std::string start_error;
};

// The jitter a client declares, named as in faultline's retry library (retry/backoff.hpp).
enum class declared_jitter { none, full, equal, decorrelated, proportional };

std::string_view to_string(declared_jitter jitter);

// The backoff curve a client declares: min(cap, base * multiplier^n) before retry n, with `jitter`.
struct declared_backoff {
    std::chrono::nanoseconds base{0};
    std::chrono::nanoseconds cap{0};
    double multiplier = 2.0;
    declared_jitter jitter = declared_jitter::full;
    double jitter_fraction = 0.2;  // proportional jitter only
};

// What a client under test says about itself (the command driver's [client] keys `deadline`,
// `max_attempts`, `backoff`; a gRPC service config), so checks can hold a third-party client to its own settings. A fact
// not declared is absent; nothing is assumed for it.
struct declared_client {
    std::optional<std::chrono::nanoseconds> deadline;  // overall deadline of each process, from its start
    std::optional<std::uint32_t> max_attempts;          // per operation, the first attempt included
    std::optional<declared_backoff> backoff;
    std::optional<std::chrono::nanoseconds> attempt_timeout;  // each attempt's own, apart from the deadline
    // The gRPC service config the client runs with (retry, hedging, throttling), for the grpc_* checks.
    // Shared: every round of a run judges against the one config.
    std::shared_ptr<const grpc_service_config> grpc = nullptr;
    std::string grpc_service_config_file{};  // the file it was read from (absolute; "" when given in code)

    bool empty() const { return !deadline && !max_attempts && !backoff && !attempt_timeout && !grpc; }
};

// How often one of the scenario's fault rules fired during the run, from the fault engine's count
// (a rule removed during the run: the attempts in the journal that name it).
struct rule_firing {
    std::string rule;  // its name
    std::string kind;  // its fault kind
    std::uint64_t fired = 0;
    std::optional<std::uint64_t> min_fired;  // the rule's `min_fired`, when it has one
};

// A run cut short by a signal (SIGINT, SIGTERM): what ran is recorded and judged, the rest is not.
struct run_interruption {
    int signal = 0;
    std::int64_t at_ns = 0;                // when it arrived, ns since the run started
    std::uint64_t processes_stopped = 0;   // client processes running then (whole trees), all stopped
};

// "SIGINT", "SIGTERM", "signal 7".
std::string signal_name(int signal);

struct run_record {
    std::string scenario;       // scenario name
    std::string scenario_file;  // path it was loaded from ("" when built in code); used in the replay hint
    std::string description;
    std::uint64_t seed = 0;
    // Wall clock, for reports only; the epoch (default) when unknown, as for a journal read back.
    std::chrono::system_clock::time_point started_at;
    std::chrono::nanoseconds duration{0};              // monotonic run length

    std::vector<journal_record> journal;   // every attempt the server saw (checks do not rely on the order)
    // Their wire details, in seq order, for the journal's JSON form (no check reads them); empty when
    // the run kept none (run_options::keep_wire_details).
    std::vector<wire_detail> wire;
    std::vector<server_event> server_events;      // control actions and enforced limits, in journal order
    // Empty for `command` clients. A deque, as the built-in driver fills it while operations run:
    // handed over as it is, never copied into one block, which held every record twice at the run's
    // peak (the freed blocks stay with the allocator).
    std::deque<client_record> clients;
    std::optional<command_result> command;
    declared_client declared;              // what the client declared about itself (command clients)

    std::string harness_error;  // non-empty when the run itself failed (exit code 3); checks may be missing
    std::vector<verdict> verdicts;  // filled after the checks ran

    std::vector<rule_firing> rule_firings;  // one per scenario fault rule, in file order
    bool strict = false;  // `--strict` / `strict = true`: a rule that never fired fails the run
    std::optional<run_interruption> interrupted;  // set when a signal cut the run short
    bool not_run = false;  // the signal came before this scenario started: nothing ran, nothing to report
};

// One operation's attempts as a random-access range of pointers to its records: held as 4-byte
// positions in the journal (half a pointer, on every attempt of a large journal), read as pointers.
class attempt_list {
public:
    class iterator {
    public:
        using iterator_concept = std::random_access_iterator_tag;
        using iterator_category = std::input_iterator_tag;
        using value_type = const journal_record*;
        using difference_type = std::ptrdiff_t;

        iterator() = default;
        iterator(const journal_record* journal, const std::uint32_t* at) : journal_{journal}, at_{at} {}
        const journal_record* operator*() const { return journal_ + *at_; }
        const journal_record* operator[](difference_type n) const { return journal_ + at_[n]; }
        iterator& operator++() { ++at_; return *this; }
        iterator operator++(int) { iterator old = *this; ++at_; return old; }
        iterator& operator--() { --at_; return *this; }
        iterator operator--(int) { iterator old = *this; --at_; return old; }
        iterator& operator+=(difference_type n) { at_ += n; return *this; }
        iterator& operator-=(difference_type n) { at_ -= n; return *this; }
        friend iterator operator+(iterator i, difference_type n) { return i += n; }
        friend iterator operator+(difference_type n, iterator i) { return i += n; }
        friend iterator operator-(iterator i, difference_type n) { return i -= n; }
        friend difference_type operator-(iterator a, iterator b) { return a.at_ - b.at_; }
        friend bool operator==(iterator a, iterator b) { return a.at_ == b.at_; }
        friend auto operator<=>(iterator a, iterator b) { return a.at_ <=> b.at_; }

    private:
        const journal_record* journal_ = nullptr;
        const std::uint32_t* at_ = nullptr;
    };

    attempt_list() = default;
    attempt_list(const journal_record* journal, std::span<const std::uint32_t> positions)
        : journal_{journal}, positions_{positions} {}

    std::size_t size() const { return positions_.size(); }
    bool empty() const { return positions_.empty(); }
    const journal_record* operator[](std::size_t i) const { return journal_ + positions_[i]; }
    const journal_record* front() const { return journal_ + positions_.front(); }
    const journal_record* back() const { return journal_ + positions_.back(); }
    iterator begin() const { return {journal_, positions_.data()}; }
    iterator end() const { return {journal_, positions_.data() + positions_.size()}; }

private:
    const journal_record* journal_ = nullptr;
    std::span<const std::uint32_t> positions_;
};
static_assert(std::random_access_iterator<attempt_list::iterator>);

// All attempts of one operation, ordered by the time the server read each request (`request_ns`,
// then `seq`). They point into the run record's journal and live as long as it does; the list views
// the operation_groups it came from.
struct operation_attempts {
    symbol operation;
    attempt_list attempts;  // never empty
};

// A journal's operations in the order their first attempt arrived: every operation's attempts are
// one run of a single array of journal positions, and an operation is only where its run starts, so
// grouping costs 4 bytes an attempt and 4 an operation (a vector per operation was a third of
// `faultline check`'s memory on a large journal; a stored span and name, 24 bytes an operation, a
// tenth; a pointer an attempt, 8 bytes, a twentieth).
// Operations are made on access, as values; keep an index rather than a pointer to one. Move-only:
// a copy is never needed and would double what grouping holds.
class operation_groups {
public:
    // Random access over the operations, yielding each by value (like std::views::iota).
    class iterator {
    public:
        using iterator_concept = std::random_access_iterator_tag;
        using iterator_category = std::input_iterator_tag;
        using value_type = operation_attempts;
        using difference_type = std::ptrdiff_t;

        iterator() = default;
        iterator(const operation_groups* groups, std::size_t index) : groups_{groups}, index_{index} {}
        operation_attempts operator*() const { return (*groups_)[index_]; }
        operation_attempts operator[](difference_type n) const { return (*groups_)[index_ + static_cast<std::size_t>(n)]; }
        iterator& operator++() { ++index_; return *this; }
        iterator operator++(int) { iterator old = *this; ++index_; return old; }
        iterator& operator--() { --index_; return *this; }
        iterator operator--(int) { iterator old = *this; --index_; return old; }
        iterator& operator+=(difference_type n) { index_ += static_cast<std::size_t>(n); return *this; }
        iterator& operator-=(difference_type n) { index_ -= static_cast<std::size_t>(n); return *this; }
        friend iterator operator+(iterator i, difference_type n) { return i += n; }
        friend iterator operator+(difference_type n, iterator i) { return i += n; }
        friend iterator operator-(iterator i, difference_type n) { return i -= n; }
        friend difference_type operator-(iterator a, iterator b) {
            return static_cast<difference_type>(a.index_) - static_cast<difference_type>(b.index_);
        }
        friend bool operator==(iterator a, iterator b) { return a.index_ == b.index_; }
        friend auto operator<=>(iterator a, iterator b) { return a.index_ <=> b.index_; }

    private:
        const operation_groups* groups_ = nullptr;
        std::size_t index_ = 0;
    };

    operation_groups() = default;
    // `attempts` holds positions in `journal`, grouped; `starts` each operation's first index in
    // `attempts`, in order, then attempts.size().
    operation_groups(const journal_record* journal, std::vector<std::uint32_t> attempts, std::vector<std::uint32_t> starts)
        : journal_{journal}, attempts_{std::move(attempts)}, starts_{std::move(starts)} {}
    operation_groups(operation_groups&&) noexcept = default;
    operation_groups& operator=(operation_groups&&) noexcept = default;
    operation_groups(const operation_groups&) = delete;
    operation_groups& operator=(const operation_groups&) = delete;

    std::size_t size() const { return starts_.empty() ? 0 : starts_.size() - 1; }
    bool empty() const { return size() == 0; }
    operation_attempts operator[](std::size_t i) const {
        const attempt_list attempts{journal_, {attempts_.data() + starts_[i], starts_[i + 1] - starts_[i]}};
        return {attempts.front()->operation, attempts};
    }
    operation_attempts front() const { return (*this)[0]; }
    operation_attempts back() const { return (*this)[size() - 1]; }
    iterator begin() const { return {this, 0}; }
    iterator end() const { return {this, size()}; }

private:
    const journal_record* journal_ = nullptr;
    std::vector<std::uint32_t> attempts_;  // journal positions, grouped by operation, each group in request order
    std::vector<std::uint32_t> starts_;
};
static_assert(std::random_access_iterator<operation_groups::iterator>);

operation_groups group_operations(const std::vector<journal_record>& journal);
// group_operations(journal).size(), without building the groups.
std::size_t count_operations(const std::vector<journal_record>& journal);

// The ledger: records whose effect was committed, in journal order.
std::vector<const journal_record*> committed_records(const std::vector<journal_record>& journal);

// Rules that never fired (but those with `min_fired = 0`): a warning in every report, a failure
// under `strict`.
std::vector<const rule_firing*> never_fired(const run_record& run);

// The run's outcome: fail on a harness error or any failed check, else insufficient_evidence when
// a check could not judge (but one that reports only failures) or a signal cut the run short (its
// checks saw only part of the workload), else pass.
verdict_outcome outcome_of(const run_record& run);
bool all_checks_passed(const run_record& run);  // outcome_of(run) == pass

}  // namespace faultline::record
