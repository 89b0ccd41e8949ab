// The journal: every attempt the server saw, in order, as `journal_record`s, each with its
// `wire_detail` unless the journal is told to keep none (a run that writes no journal out). Appends are cheap and
// thread-safe (a short lock: move the record into place). Records live in large chunks that never
// move once written; an idle-class background thread maps and faults in the next chunk (on huge pages
// where the system offers them) before it is needed, so appends normally take no page fault:
// faulting fresh pages in on the server's threads cost a fifth of its throughput and put
// millisecond stalls into its timing (docs/benchmarks.md). Records are kept in
// memory up to a bound; when a file is configured, a background writer streams every record to it as
// JSON Lines (one `to_json(record, wire)` object per line), reading the chunks directly and doing all
// serialisation and file I/O outside the lock that appends take (it wakes every few milliseconds or
// per full batch, so appends make no system call). Nothing is ever dropped silently:
//   - with a file, records past the memory bound go to the file only (`memory_complete()` turns
//     false; read the file back with read_jsonl for the full journal);
//   - without a file, reaching the bound sets a sticky overflow error (`failed()`/`error()`) that the
//     server and runner must report as a harness failure; records past the bound are counted in
//     `lost()`.
// A file write error is sticky in the same way. Destruction stops the writer after writing
// everything appended so far.
//
// Spilling (`spill_directory`, a journal without a file: a run's): a background thread copies every
// full chunk, raw, into an unlinked temporary file there and unmaps it, so the memory holds the
// chunk being filled and the next one, not the whole run, while the server's own state is at its
// largest; `take()`, `snapshot()` and `wire_snapshot()` read spilled chunks back. Records are plain
// values (symbols are process-wide ids), so the bytes written are the records. What is spilled lives
// in the page cache and on disk (in memory after all where the directory is a tmpfs). Should the
// file fail to open or to take a write, the chunks stay in memory. The file is evidence a client
// under test could reach (as the same user, through /proc/<faultline pid>/fd): it is made read-only,
// and every block of 512 entries is checked when read back against a digest kept in memory, keyed
// with a random key that never leaves the process. Records that fail it are left out (`altered()`)
// and an `evidence_altered` server event says what was lost, so the run's evidence_intact verdict
// fails while the checks judge what is left (docs/reliability.md states the bound).
//
// Server events (server_event.hpp: control actions, enforced limits) are numbered from the same
// sequence and written to the file beside the attempts. In memory they are kept apart and survive
// `reset` (a reset is itself one of them: the evidence must outlive what it erased).
//
// Rounds (journal_rounds.hpp): `start_round` journals a reset event and starts the next round; every
// record and event is stamped with the round of its seq, so an attempt whose request was read before
// the reset stays in the round before it, however late its record comes. Memory holds the current
// round's records only (starting a round forgets the others, as `reset` does, so the bound is a
// round's); the file keeps every round.
//
// Durability: the writer hands what is pending to the kernel (write(2), via fflush) at least every
// `flush_interval`, and at once when `writer_batch` records are pending. A kill -9 therefore loses
// only what was appended in the last interval plus one pass (docs/control-api.md states the figure);
// the kernel keeps what was written, so no fsync is needed for that promise.
#pragma once

#include "faultline/record/journal_record.hpp"
#include "faultline/record/journal_rounds.hpp"
#include "faultline/record/server_event.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace faultline::server {

struct journal_options {
    std::size_t max_records = 1'000'000;  // in-memory bound
    std::string path;                     // JSON Lines file ("" = memory only); truncated on open
    // With a file: the longest a record waits before the writer hands it to the kernel.
    std::chrono::milliseconds flush_interval{2};
    std::size_t max_events = 100'000;  // server events kept in memory; later ones go to the file only
    // Keep each attempt's wire detail (the file and the control API's download then write it). A
    // journal that nothing writes out need not: the checks read records only, and a record alone
    // takes two thirds of the memory.
    bool wire_details = true;
    // Without a file: spill full chunks to an unlinked temporary file in this directory ("" = keep
    // every record in memory).
    std::string spill_directory{};
};

// A journal's attempts, handed over: the records, and their wire details in the same order (empty
// when the journal keeps none).
struct journal_attempts {
    std::vector<record::journal_record> records;
    std::vector<record::wire_detail> wire;
};

// Owns its records, its file and its threads (the file's writer, the spill file's spiller).
// Thread-safe: every member may be called from any thread.
class journal {
public:
    // Throws std::system_error if the file cannot be opened.
    explicit journal(journal_options options = {});
    ~journal();

    journal(const journal&) = delete;
    journal& operator=(const journal&) = delete;

    // Reserves the next sequence number (1-based, unique for the journal's lifetime). The server may
    // number an attempt when its request is read, use it in the ledger (service_request::seq) and pass
    // it back in the record; `append` keeps a non-zero `record.seq`.
    std::uint64_t next_seq();

    // Records one attempt; a record with seq 0 gets the next one, which its wire detail is given too.
    // Returns the record's seq. Never blocks on I/O.
    std::uint64_t append(record::journal_record record, record::wire_detail wire = {});

    // Records one server event; an event with seq 0 gets the next one. Returns its seq. Never blocks
    // on I/O.
    std::uint64_t append_event(record::server_event event);

    // The records held in memory, in append order (every record unless memory_complete() is false).
    std::vector<record::journal_record> snapshot() const;
    // Their wire details, in the same order; empty when the journal keeps none.
    std::vector<record::wire_detail> wire_snapshot() const;
    // Hands over the records held in memory (and their wire details), in append order, moving them
    // out instead of copying (snapshot() stays for the control API) and unmapping each chunk once it
    // is emptied, so the records are held once, not twice. With a file it first flushes, and hands over only records
    // already written (every record appended before the call). The taken records leave the memory
    // window as with reset(), but the bound does not move and an overflow stays: memory_complete(),
    // lost() and failed() still describe the whole journal. Appends may continue meanwhile; it
    // takes the lock once per chunk.
    journal_attempts take();
    // The server events held in memory (up to max_events), in append order; reset keeps them.
    std::vector<record::server_event> events() const;
    std::uint64_t events_appended() const;
    // Writes the in-memory records and server events as JSON Lines, in seq order (the control API's
    // journal download): those of `round`, or all of them (nullopt).
    std::string to_jsonl(std::optional<record::round_number> round = std::nullopt) const;

    // Forgets the in-memory records and clears a memory overflow; the seq keeps counting (so a file,
    // which keeps everything, never holds two records with one seq). Server events stay. The round
    // stays too: an in-process restart, which journals nothing.
    void reset();
    // Starts the next round with `reset` as its first event (given the next seq and the new round),
    // forgetting the in-memory records as reset() does. Returns the new round, or nullopt, changing
    // nothing, once max_round rounds have begun.
    std::optional<record::round_number> start_round(record::server_event reset);
    record::round_number round() const;  // the current round, 1 until the first start_round
    // Returns once every record appended before the call is written to the file and flushed, and
    // (spilling) every chunk filled before the call is spilled.
    void flush();

    std::uint64_t appended() const;  // records appended since construction
    std::size_t size() const;        // records held in memory
    bool memory_complete() const;    // false once a record went to the file only (or was lost)
    std::uint64_t lost() const;      // records kept nowhere (overflow without a file)
    std::uint64_t spilled() const;   // records held in the spill file rather than in memory
    // Spilled records left out because the file no longer held them as written (an
    // evidence_altered event says so; the journal goes on: what it still holds is judged).
    std::uint64_t altered() const;
    bool failed() const;             // sticky: overflow without a file, or a file write error
    std::string error() const;       // why failed(), "" otherwise

    const journal_options& options() const { return options_; }

private:
    class chunk;  // a fixed run of attempts, allocated once, never moved

    void writer_loop();
    // Moves full chunks to the spill file, oldest first.
    void spiller_loop();
    // Appends positions [from, to) of the memory window, from memory or the spill file, to `records`
    // and (when the journal keeps them) `wire`; either may be null (the caller holds the lock).
    void copy_out(std::uint64_t from, std::uint64_t to, std::vector<record::journal_record>* records,
                  std::vector<record::wire_detail>* wire) const;
    // A spilled chunk read back failed its check (the caller holds the lock): `records` of chunk
    // `chunk_number` are left out, and an evidence_altered event says so.
    void note_altered_spill(std::uint64_t chunk_number, std::uint64_t records) const;
    // Stores `record` at position end_ (the caller holds the lock).
    void store(const record::journal_record& record, const record::wire_detail& wire);
    // Keeps `event`, in memory up to max_events and in the file (the caller holds the lock).
    void store_event(record::server_event event);
    // Empties the memory window and clears an overflow; returns the chunks to free once unlocked (the
    // caller holds the lock).
    std::vector<std::unique_ptr<chunk>> forget_memory();
    // The chunk holding position `pos` (the caller holds the lock; the chunk exists).
    chunk& chunk_at(std::uint64_t pos) const;
    // Detaches the chunks nobody can read any more (full, outside the memory window and, with a file,
    // written) so the caller frees them after unlocking (the caller holds the lock).
    std::vector<std::unique_ptr<chunk>> take_unreadable_chunks();
    std::uint64_t memory_end() const { return std::min(end_, memory_limit_); }

    // The writer takes whatever is pending at least every flush_interval, and at once when a batch is
    // full or someone flushes.
    static constexpr std::uint64_t writer_batch = 4096;

    const journal_options options_;
    const std::size_t capacity_;  // attempts a chunk holds
    std::FILE* file_ = nullptr;  // null without a path

    mutable std::mutex mutex_;  // guards everything below but the atomics; never held during I/O
    std::condition_variable wake_writer_;
    std::condition_variable written_cv_;
    std::condition_variable wake_spiller_;  // a chunk filled, or stopping
    std::condition_variable spilled_cv_;    // the spiller caught up (for flush)
    // Records are numbered by position: the n-th record stored is at position n, for the journal's
    // lifetime. chunks_[i] holds positions from (first_chunk_ + i) * chunk capacity; a released
    // chunk leaves a null behind until it reaches the front.
    std::deque<std::unique_ptr<chunk>> chunks_;
    std::uint64_t first_chunk_ = 0;
    int spill_fd_ = -1;                // the unlinked spill file; -1 when not spilling
    std::uint64_t spill_key_ = 0;      // keys the spilled blocks' digests; never leaves the process
    std::uint64_t next_spill_ = 0;     // the chunk number the spiller looks at next
    const chunk* spilling_ = nullptr;  // the chunk being written out unlocked: nobody frees it meanwhile
    bool spill_stopped_ = false;       // a spill write failed: later chunks stay in memory
    std::uint64_t end_ = 0;            // positions stored so far
    std::uint64_t memory_begin_ = 0;   // the memory window starts here (moved by reset)
    std::uint64_t memory_limit_;       // ... and ends at most here (memory_begin_ + max_records)
    std::uint64_t written_ = 0;        // with a file: positions below this are written and flushed
    std::uint64_t lost_ = 0;           // memory-only: records past the bound (a sticky failure until reset)
    record::round_boundaries rounds_;
    // A read that finds the spill file altered journals it, even a const one (snapshot()).
    mutable std::vector<record::server_event> events_;  // in memory, up to options_.max_events
    std::string pending_event_lines_;   // with a file: event lines not yet written
    mutable std::uint64_t events_stored_ = 0;   // events appended (file or memory)
    mutable std::uint64_t altered_records_ = 0;  // spilled records that failed their check
    std::uint64_t events_written_ = 0;  // with a file: events whose lines are written
    std::string write_error_;
    bool flush_requested_ = false;
    bool stopping_ = false;

    mutable std::atomic<std::uint64_t> next_seq_{0};  // mutable: see events_
    std::atomic<std::uint64_t> appended_{0};
    std::thread writer_;
    std::thread spiller_;
};

}  // namespace faultline::server
