#include "faultline/server/journal.hpp"

#include "faultline/core/random.hpp"
#include "faultline/record/journal_json.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <new>
#include <numeric>
#include <stdexcept>
#include <system_error>
#include <type_traits>
#include <utility>

namespace faultline::server {

namespace {

// An anonymous mapping of `bytes`, unmapped on destruction (possibly after the lock that guarded its
// owner is released: unmapping 2 MiB is not a thing to do while appends wait).
class mapping {
public:
    mapping() = default;
    mapping(void* at, std::size_t bytes) : at_{at}, bytes_{bytes} {}
    mapping(mapping&& other) noexcept : at_{std::exchange(other.at_, nullptr)}, bytes_{other.bytes_} {}
    mapping& operator=(mapping&& other) noexcept {
        std::swap(at_, other.at_);
        std::swap(bytes_, other.bytes_);
        return *this;
    }
    ~mapping() {
        if (at_ != nullptr) ::munmap(at_, bytes_);
    }
    void* get() const { return at_; }

private:
    void* at_ = nullptr;
    std::size_t bytes_ = 0;
};

// pwrite/pread all of [data, data + bytes) at `offset`, through short transfers and EINTR.
bool write_all(int fd, const void* data, std::size_t bytes, off_t offset) {
    const auto* from = static_cast<const char*>(data);
    while (bytes > 0) {
        const ssize_t n = ::pwrite(fd, from, bytes, offset);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        from += n;
        bytes -= static_cast<std::size_t>(n);
        offset += n;
    }
    return true;
}

// False when the file ends early (it was truncated) or cannot be read.
bool read_all(int fd, void* data, std::size_t bytes, off_t offset) {
    auto* to = static_cast<char*>(data);
    while (bytes > 0) {
        const ssize_t n = ::pread(fd, to, bytes, offset);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        to += n;
        bytes -= static_cast<std::size_t>(n);
        offset += n;
    }
    return true;
}

// A keyed digest of `bytes` (whole 8-byte words: records and wire details are made of them). The
// key is the journal's, drawn at random and kept in its memory only, so a process that can write
// the spill file but not read faultline's memory cannot forge a digest for bytes it changed.
std::uint64_t digest(const void* data, std::size_t bytes, std::uint64_t key) {
    const auto* from = static_cast<const char*>(data);
    std::uint64_t h = mix64(key ^ bytes);
    for (std::size_t i = 0; i + sizeof(std::uint64_t) <= bytes; i += sizeof(std::uint64_t)) {
        std::uint64_t word = 0;
        std::memcpy(&word, from + i, sizeof word);
        h = mix64(h ^ word) + i;
    }
    return h;
}

std::uint64_t random_key() {
    std::uint64_t key = 0;
    if (::getrandom(&key, sizeof key, 0) != static_cast<ssize_t>(sizeof key)) {
        key = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    }
    return key;
}

// An unlinked file in `directory` (O_CLOEXEC: no client the run starts inherits it); -1 if none can
// be made.
int open_spill_file(const std::string& directory) {
    int fd = ::open(directory.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0) return fd;
    // A filesystem without O_TMPFILE: a named file, unlinked at once.
    std::string name = directory + "/faultline-journal-XXXXXX";
    fd = ::mkostemp(name.data(), O_CLOEXEC);
    if (fd >= 0) ::unlink(name.c_str());
    // Read-only for everyone: reopening it through /proc/<pid>/fd for writing then needs a chmod
    // first. Our own descriptor was opened read-write, so the spiller still writes. The digests
    // (chunk::copy) catch what gets past this.
    if (fd >= 0) ::fchmod(fd, 0400);
    return fd;
}

// Entries per digest: a spilled chunk is checked block by block as it is read back, so a read of a
// part of a chunk reads and checks only the blocks it touches.
constexpr std::size_t digest_block = 512;

}  // namespace

// A fixed run of attempts in one anonymous mapping, aligned to and advised for transparent huge
// pages (a no-op where they are off): the records first, then (when the journal keeps them) their
// wire details. Filled in order; entries are built in place and never move, so the writer may read
// one while later ones are appended. A full chunk may be spilled: its bytes are then in the spill
// file at `offset`, and its memory is gone.
class journal::chunk {
public:
    static constexpr std::size_t small_page = 4096;
    static constexpr std::size_t huge_page = std::size_t{2} << 20;
    static constexpr std::size_t bytes = huge_page;

    // How many attempts a chunk holds: records alone, or each with its wire detail.
    static constexpr std::size_t capacity_for(bool wire) {
        return bytes / (sizeof(record::journal_record) + (wire ? sizeof(record::wire_detail) : 0));
    }

    chunk(std::size_t capacity, bool wire) : capacity_{capacity}, keeps_wire_{wire} {
        // Map one huge page more than needed, then trim both ends to a huge-page boundary.
        const std::size_t mapped = bytes + huge_page;
        void* raw = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (raw == MAP_FAILED) throw std::bad_alloc{};
        const auto start = reinterpret_cast<std::uintptr_t>(raw);
        const auto aligned = (start + huge_page - 1) & ~(huge_page - 1);
        if (aligned > start) ::munmap(raw, aligned - start);
        const std::size_t tail = start + mapped - (aligned + bytes);
        if (tail > 0) ::munmap(reinterpret_cast<void*>(aligned + bytes), tail);
        ::madvise(reinterpret_cast<void*>(aligned), bytes, MADV_HUGEPAGE);
        memory_ = mapping{reinterpret_cast<void*>(aligned), bytes};
        records_ = static_cast<record::journal_record*>(memory_.get());
        if (wire) wire_ = reinterpret_cast<record::wire_detail*>(records_ + capacity);
    }

    chunk(const chunk&) = delete;
    chunk& operator=(const chunk&) = delete;

    void push(const record::journal_record& record, const record::wire_detail& wire) {
        std::construct_at(records_ + size_, record);
        if (wire_ != nullptr) std::construct_at(wire_ + size_, wire);
        ++size_;
    }
    // Entries of a chunk in memory.
    const record::journal_record& record(std::size_t i) const { return records_[i]; }
    // Null when the journal keeps no wire details.
    const record::wire_detail* wire(std::size_t i) const { return wire_ != nullptr ? wire_ + i : nullptr; }

    // A full chunk's entries, as laid out in memory and in the spill file.
    const void* full_bytes() const { return records_; }
    std::size_t full_size() const { return capacity_ * (sizeof(record::journal_record) + (keeps_wire_ ? sizeof(record::wire_detail) : 0)); }
    bool in_memory() const { return records_ != nullptr; }

    // What a full chunk's blocks digest to (keyed with `key`), to check them when read back. A full
    // chunk never changes, so this needs no lock.
    struct block_digests {
        std::vector<std::uint64_t> records;
        std::vector<std::uint64_t> wire;
    };
    block_digests digests(std::uint64_t key) const {
        block_digests out;
        for (std::size_t first = 0; first < capacity_; first += digest_block) {
            const std::size_t n = std::min(digest_block, capacity_ - first);
            out.records.push_back(digest(records_ + first, n * sizeof(record::journal_record), key));
            if (wire_ != nullptr) out.wire.push_back(digest(wire_ + first, n * sizeof(record::wire_detail), key));
        }
        return out;
    }

    // The chunk's full_bytes() are now in the spill file at `offset`: reads go there from now on,
    // and are checked against `digests`. Returns the memory, for the caller to unmap once it has
    // released its lock.
    mapping spilled_to(off_t offset, block_digests digests) {
        digests_ = std::move(digests);
        records_ = nullptr;
        wire_ = nullptr;
        spill_offset_ = offset;
        return std::move(memory_);
    }

    // Copies entries [from, to) into `records` and (when both keep them) `wire`; either may be null.
    // A spilled chunk reads them from `spill_fd`, block by block, each checked against its digest
    // (keyed with `key`): false when the file no longer holds what was spilled — truncated or
    // overwritten behind the journal's back — and then what was copied is not to be used.
    bool copy(std::size_t from, std::size_t to, record::journal_record* records, record::wire_detail* wire, int spill_fd,
              std::uint64_t key) const {
        const std::size_t n = to - from;
        if (in_memory()) {
            if (records != nullptr) std::copy_n(records_ + from, n, records);
            if (wire != nullptr && wire_ != nullptr) std::copy_n(wire_ + from, n, wire);
            return true;
        }
        bool intact = true;
        if (records != nullptr) {
            intact = read_checked(records, from, to, spill_offset_, digests_.records, spill_fd, key);
        }
        if (intact && wire != nullptr && keeps_wire_) {
            const auto wire_offset = spill_offset_ + static_cast<off_t>(capacity_ * sizeof(record::journal_record));
            intact = read_checked(wire, from, to, wire_offset, digests_.wire, spill_fd, key);
        }
        return intact;
    }

private:
    // Plain values (symbols are ids), so nothing needs destroying, the mapping is all they own, and
    // their bytes may be written out and read back as they are; whole words, as digest() takes them.
    static_assert(std::is_trivially_copyable_v<record::journal_record> && std::is_trivially_copyable_v<record::wire_detail>);
    static_assert(sizeof(record::journal_record) % sizeof(std::uint64_t) == 0 && sizeof(record::wire_detail) % sizeof(std::uint64_t) == 0);

    // Entries [from, to) of one region (records or wire details, starting at `region` in the file)
    // into `out`: the blocks wholly inside straight into `out`, a block cut by the range through a
    // scratch buffer, so every block read is whole and checked.
    template <class Entry>
    bool read_checked(Entry* out, std::size_t from, std::size_t to, off_t region,
                      const std::vector<std::uint64_t>& digests, int spill_fd, std::uint64_t key) const {
        std::vector<Entry> scratch;
        for (std::size_t block = from / digest_block; block * digest_block < to; ++block) {
            const std::size_t first = block * digest_block;
            const std::size_t n = std::min(digest_block, capacity_ - first);
            const bool whole = first >= from && first + n <= to;
            if (!whole) scratch.resize(n);
            Entry* into = whole ? out + (first - from) : scratch.data();
            const off_t at = region + static_cast<off_t>(first * sizeof(Entry));
            if (!read_all(spill_fd, into, n * sizeof(Entry), at) || digest(into, n * sizeof(Entry), key) != digests[block]) {
                return false;
            }
            if (whole) continue;
            const std::size_t lo = std::max(from, first);
            const std::size_t hi = std::min(to, first + n);
            std::copy_n(scratch.data() + (lo - first), hi - lo, out + (lo - from));
        }
        return true;
    }

    std::size_t capacity_;
    bool keeps_wire_;
    mapping memory_;
    record::journal_record* records_ = nullptr;
    record::wire_detail* wire_ = nullptr;
    std::size_t size_ = 0;
    off_t spill_offset_ = 0;
    block_digests digests_;  // of the spilled bytes, one per digest_block entries
};

namespace {

// The most records the writer serialises in one pass, bounding its buffer when it falls behind.
constexpr std::uint64_t writer_pass_limit = 16384;

}  // namespace

journal::journal(journal_options options)
    : options_{std::move(options)},
      capacity_{chunk::capacity_for(options_.wire_details)},
      memory_limit_{options_.max_records} {
    if (!options_.path.empty()) {
        file_ = std::fopen(options_.path.c_str(), "wb");
        if (file_ == nullptr) {
            throw std::system_error{errno, std::generic_category(), "journal: cannot open " + options_.path};
        }
        writer_ = std::thread{[this] { writer_loop(); }};
    } else if (!options_.spill_directory.empty()) {
        spill_key_ = random_key();
        spill_fd_ = open_spill_file(options_.spill_directory);
        if (spill_fd_ >= 0) spiller_ = std::thread{[this] { spiller_loop(); }};
    }
}

journal::~journal() {
    {
        std::lock_guard lock{mutex_};
        stopping_ = true;
    }
    if (spiller_.joinable()) {
        wake_spiller_.notify_one();
        spiller_.join();
    }
    if (spill_fd_ >= 0) ::close(spill_fd_);
    if (file_ == nullptr) return;
    wake_writer_.notify_one();
    writer_.join();
    std::fclose(file_);
}

void journal::spiller_loop() {
    std::unique_lock lock{mutex_};
    for (;;) {
        wake_spiller_.wait(lock, [&] { return stopping_ || (next_spill_ + 1) * capacity_ <= end_; });
        if (stopping_) return;
        const std::uint64_t number = next_spill_++;
        // Released meanwhile (a take or reset), or outside the memory window and about to be.
        if (number < first_chunk_ || !chunks_[number - first_chunk_] || (number + 1) * capacity_ <= memory_begin_) {
            spilled_cv_.notify_all();  // a flush may be waiting for the spiller to pass this chunk
            continue;
        }
        chunk& full = *chunks_[number - first_chunk_];
        spilling_ = &full;
        lock.unlock();
        // Full chunks never change, so the write needs no lock; spilling_ keeps the chunk alive.
        const auto offset = static_cast<off_t>(number * full.full_size());
        chunk::block_digests digests = full.digests(spill_key_);
        const bool written = write_all(spill_fd_, full.full_bytes(), full.full_size(), offset);
        lock.lock();
        spilling_ = nullptr;
        mapping freed;
        // Should the disk refuse (full, say), the journal keeps its chunks in memory from now on.
        if (written) freed = full.spilled_to(offset, std::move(digests));
        // A take or reset meanwhile left this chunk to be released here.
        std::vector<std::unique_ptr<chunk>> unreadable = take_unreadable_chunks();
        if (!written) spill_stopped_ = true;
        spilled_cv_.notify_all();
        lock.unlock();
        unreadable.clear();
        freed = {};
        lock.lock();
        if (spill_stopped_) return;
    }
}

std::uint64_t journal::next_seq() { return next_seq_.fetch_add(1, std::memory_order_relaxed) + 1; }

journal::chunk& journal::chunk_at(std::uint64_t pos) const { return *chunks_[pos / capacity_ - first_chunk_]; }

void journal::store(const record::journal_record& record, const record::wire_detail& wire) {
    // A chunk is one transparent huge page: mapped here, it faults in (zeroed by the kernel) on its
    // first record, about 0.1 ms once in some 18,000 appends. A thread that prepared chunks at idle
    // priority took that off this path, but whatever it held when preempted (this journal's lock, or
    // the kernel's memory locks during a fault) stalled the workers until an idle core let it run
    // again: up to 19.8 s beside two CPU hogs, every server of `faultline score` at once.
    if (end_ / capacity_ - first_chunk_ == chunks_.size()) {
        chunks_.push_back(std::make_unique<chunk>(capacity_, options_.wire_details));
    }
    chunk_at(end_).push(record, wire);
    ++end_;
    // A chunk just filled: the spiller writes it out.
    if (end_ % capacity_ == 0 && spill_fd_ >= 0) wake_spiller_.notify_one();
}

std::uint64_t journal::append(record::journal_record record, record::wire_detail wire) {
    if (record.seq == 0) record.seq = next_seq();
    const auto seq = record.seq;
    wire.seq = seq;
    appended_.fetch_add(1, std::memory_order_relaxed);
    bool wake = false;
    {
        std::lock_guard lock{mutex_};
        // Past the memory bound a record goes to the file only, or without a file is lost.
        if (end_ >= memory_limit_ && file_ == nullptr) {
            ++lost_;
            return seq;
        }
        record.round = rounds_.round_of(seq);
        store(record, wire);
        // The writer also wakes on its own every writer_interval; waking it per record would cost a
        // futex call on the hot path, so only a full batch does.
        wake = file_ != nullptr && end_ - written_ == writer_batch;
    }
    if (wake) wake_writer_.notify_one();
    return seq;
}

std::vector<std::unique_ptr<journal::chunk>> journal::take_unreadable_chunks() {
    std::vector<std::unique_ptr<chunk>> out;
    for (std::size_t i = 0; i < chunks_.size(); ++i) {
        const std::uint64_t begin = (first_chunk_ + i) * capacity_;
        const std::uint64_t end = begin + capacity_;
        // Only full chunks: a partly filled one still receives appends. Not the one being spilled.
        if (!chunks_[i] || end > end_ || chunks_[i].get() == spilling_) continue;
        const bool outside_memory = end <= memory_begin_ || begin >= memory_limit_;
        const bool written = file_ == nullptr || end <= written_;
        if (outside_memory && written) out.push_back(std::move(chunks_[i]));
    }
    while (!chunks_.empty() && !chunks_.front()) {
        chunks_.pop_front();
        ++first_chunk_;
    }
    return out;
}

void journal::writer_loop() {
    std::string buffer;
    std::string event_lines;
    std::vector<const chunk*> sources;
    // Runs until the destructor sets stopping_, after writing every stored record and event.
    for (;;) {
        std::uint64_t from = 0;
        std::uint64_t to = 0;
        std::uint64_t events_to = 0;
        {
            std::unique_lock lock{mutex_};
            wake_writer_.wait_for(lock, options_.flush_interval,
                                  [&] { return end_ - written_ >= writer_batch || flush_requested_ || stopping_; });
            if (written_ == end_ && pending_event_lines_.empty()) {
                flush_requested_ = false;
                if (stopping_) return;
                continue;
            }
            event_lines.clear();
            event_lines.swap(pending_event_lines_);
            events_to = events_stored_;
            from = written_;
            to = std::min(end_, from + writer_pass_limit);
            if (to == end_) flush_requested_ = false;
            // Chunks at or past written_ are never released, and records never move: the range can be
            // read without the lock.
            sources.clear();
            for (std::uint64_t c = from / capacity_; to > from && c <= (to - 1) / capacity_; ++c) {
                sources.push_back(chunks_[c - first_chunk_].get());
            }
        }
        buffer.assign(event_lines);  // events are rare: they go first, the readers order by seq
        for (std::uint64_t pos = from; pos < to; ++pos) {
            const chunk& source = *sources[pos / capacity_ - from / capacity_];
            record::append_jsonl_line(buffer, source.record(pos % capacity_), source.wire(pos % capacity_));
        }
        const bool ok = std::fwrite(buffer.data(), 1, buffer.size(), file_) == buffer.size() && std::fflush(file_) == 0;
        const int err = errno;
        std::vector<std::unique_ptr<chunk>> unreadable;  // unmapped at the end of the pass, unlocked
        {
            std::lock_guard lock{mutex_};
            if (!ok && write_error_.empty()) {
                write_error_ = "journal: writing " + options_.path + ": " + std::strerror(err);
            }
            written_ = to;
            events_written_ = events_to;
            unreadable = take_unreadable_chunks();
        }
        written_cv_.notify_all();
    }
}

std::uint64_t journal::append_event(record::server_event event) {
    if (event.seq == 0) event.seq = next_seq();
    const auto seq = event.seq;
    std::lock_guard lock{mutex_};
    store_event(std::move(event));
    return seq;
}

void journal::store_event(record::server_event event) {
    event.round = rounds_.round_of(event.seq);
    ++events_stored_;
    if (file_ != nullptr) append_jsonl_line(pending_event_lines_, event);
    if (events_.size() < options_.max_events) events_.push_back(std::move(event));
}

std::vector<record::server_event> journal::events() const {
    std::lock_guard lock{mutex_};
    return events_;
}

std::uint64_t journal::events_appended() const {
    std::lock_guard lock{mutex_};
    return events_stored_;
}

void journal::copy_out(std::uint64_t from, std::uint64_t to, std::vector<record::journal_record>* records,
                       std::vector<record::wire_detail>* wire) const {
    if (!options_.wire_details) wire = nullptr;
    while (from < to) {
        const std::uint64_t until = std::min(to, (from / capacity_ + 1) * capacity_);
        const std::size_t n = until - from;
        record::journal_record* records_out = nullptr;
        record::wire_detail* wire_out = nullptr;
        if (records != nullptr) {
            records->resize(records->size() + n);
            records_out = records->data() + records->size() - n;
        }
        if (wire != nullptr) {
            wire->resize(wire->size() + n);
            wire_out = wire->data() + wire->size() - n;
        }
        const std::uint64_t chunk_begin = from / capacity_ * capacity_;
        if (!chunk_at(from).copy(from - chunk_begin, until - chunk_begin, records_out, wire_out, spill_fd_, spill_key_)) {
            // Not evidence any more: left out, and the loss is journaled.
            if (records != nullptr) records->resize(records->size() - n);
            if (wire != nullptr) wire->resize(wire->size() - n);
            note_altered_spill(chunk_begin / capacity_, n);
        }
        from = until;
    }
}

void journal::note_altered_spill(std::uint64_t chunk_number, std::uint64_t records) const {
    altered_records_ += records;
    record::server_event event;
    event.kind = record::server_event_kind::evidence_altered;
    event.seq = next_seq_.fetch_add(1, std::memory_order_relaxed) + 1;
    event.round = rounds_.round_of(event.seq);
    event.detail = "the journal's spill file was changed while the run held it (truncated or overwritten, through "
                   "/proc/<pid>/fd?): " + std::to_string(records) + " records of chunk " + std::to_string(chunk_number) +
                   " failed their check and were left out";
    ++events_stored_;
    if (events_.size() < options_.max_events) events_.push_back(std::move(event));
}

std::vector<record::journal_record> journal::snapshot() const {
    std::lock_guard lock{mutex_};
    std::vector<record::journal_record> out;
    out.reserve(memory_end() - memory_begin_);
    copy_out(memory_begin_, memory_end(), &out, nullptr);
    return out;
}

std::vector<record::wire_detail> journal::wire_snapshot() const {
    std::lock_guard lock{mutex_};
    std::vector<record::wire_detail> out;
    if (!options_.wire_details) return out;
    out.reserve(memory_end() - memory_begin_);
    copy_out(memory_begin_, memory_end(), nullptr, &out);
    return out;
}

journal_attempts journal::take() {
    // With a file, the writer must be done with what is moved out. Spilled chunks need no wait: the
    // one being written out stays readable, and is read from memory.
    if (file_ != nullptr) flush();
    journal_attempts out;
    std::uint64_t stop = 0;
    {
        std::lock_guard lock{mutex_};
        stop = file_ != nullptr ? std::min(memory_end(), written_) : memory_end();
        out.records.reserve(stop - memory_begin_);
        if (options_.wire_details) out.wire.reserve(stop - memory_begin_);
    }
    for (;;) {
        std::vector<std::unique_ptr<chunk>> unreadable;  // unmapped after each chunk, unlocked
        std::lock_guard lock{mutex_};
        // A reset (or another take) meanwhile moves memory_begin_ on: take only what is still here.
        if (memory_begin_ >= stop) break;
        const std::uint64_t pos_end = std::min(stop, (memory_begin_ / capacity_ + 1) * capacity_);
        copy_out(memory_begin_, pos_end, &out.records, &out.wire);
        memory_begin_ = pos_end;
        unreadable = take_unreadable_chunks();
    }
    return out;
}

std::string journal::to_jsonl(std::optional<record::round_number> round) const {
    std::vector<record::journal_record> records = snapshot();
    std::vector<record::wire_detail> wire = wire_snapshot();
    std::vector<record::server_event> events = this->events();
    if (round) {
        // A record and its wire detail are at the same index: kept or left out together.
        std::size_t kept = 0;
        for (std::size_t i = 0; i < records.size(); ++i) {
            if (records[i].round != *round) continue;
            if (kept != i) {
                records[kept] = std::move(records[i]);
                if (!wire.empty()) wire[kept] = std::move(wire[i]);
            }
            ++kept;
        }
        records.resize(kept);
        if (!wire.empty()) wire.resize(kept);
        std::erase_if(events, [&](const record::server_event& e) { return e.round != *round; });
    }
    // Stored in the order attempts finished; written in seq order, each detail found by its seq.
    std::ranges::sort(records, {}, &record::journal_record::seq);
    std::ranges::sort(wire, {}, &record::wire_detail::seq);
    return record::to_jsonl(records, wire, events);
}

void journal::reset() {
    std::vector<std::unique_ptr<chunk>> unreadable;  // freed after the lock is released
    std::lock_guard lock{mutex_};
    unreadable = forget_memory();
}

std::optional<record::round_number> journal::start_round(record::server_event reset) {
    std::vector<std::unique_ptr<chunk>> unreadable;  // freed after the lock is released
    std::lock_guard lock{mutex_};
    if (rounds_.current() == record::max_round) return std::nullopt;
    // Numbered under the lock, so that resets' seqs ascend in the order the rounds start.
    reset.seq = next_seq();
    const std::optional<record::round_number> round = rounds_.start_round(reset.seq);
    unreadable = forget_memory();
    store_event(std::move(reset));
    return round;
}

record::round_number journal::round() const {
    std::lock_guard lock{mutex_};
    return rounds_.current();
}

std::vector<std::unique_ptr<journal::chunk>> journal::forget_memory() {
    memory_begin_ = end_;
    memory_limit_ = end_ + options_.max_records;
    lost_ = 0;
    return take_unreadable_chunks();
}

void journal::flush() {
    std::unique_lock lock{mutex_};
    if (spiller_.joinable()) {
        const std::uint64_t full_chunks = end_ / capacity_;
        spilled_cv_.wait(lock, [&] { return (next_spill_ >= full_chunks && spilling_ == nullptr) || spill_stopped_; });
    }
    if (file_ == nullptr) return;
    const auto target = end_;
    const auto events_target = events_stored_;
    const auto done = [&] { return written_ >= target && events_written_ >= events_target; };
    if (done()) return;
    flush_requested_ = true;
    wake_writer_.notify_one();
    written_cv_.wait(lock, done);
}

std::uint64_t journal::appended() const { return appended_.load(std::memory_order_relaxed); }

std::size_t journal::size() const {
    std::lock_guard lock{mutex_};
    return memory_end() - memory_begin_;
}

bool journal::memory_complete() const {
    std::lock_guard lock{mutex_};
    return end_ <= memory_limit_ && lost_ == 0;
}

std::uint64_t journal::altered() const {
    std::lock_guard lock{mutex_};
    return altered_records_;
}

std::uint64_t journal::lost() const {
    std::lock_guard lock{mutex_};
    return lost_;
}

std::uint64_t journal::spilled() const {
    std::lock_guard lock{mutex_};
    std::uint64_t out = 0;
    for (std::size_t i = 0; i < chunks_.size(); ++i) {
        if (!chunks_[i] || chunks_[i]->in_memory()) continue;
        const std::uint64_t begin = (first_chunk_ + i) * capacity_;
        const std::uint64_t end = begin + capacity_;
        if (end <= memory_begin_ || begin >= memory_end()) continue;
        out += std::min(end, memory_end()) - std::max(begin, memory_begin_);
    }
    return out;
}

bool journal::failed() const {
    std::lock_guard lock{mutex_};
    return lost_ > 0 || !write_error_.empty();
}

std::string journal::error() const {
    std::lock_guard lock{mutex_};
    std::string message;
    if (lost_ > 0) {
        message = "journal: in-memory bound of " + std::to_string(options_.max_records) +
                  " records reached with no journal file; " + std::to_string(lost_) +
                  " records were not kept (raise journal_max_records or record to a file)";
    }
    if (!write_error_.empty()) {
        if (!message.empty()) message += "; ";
        message += write_error_;
    }
    return message;
}

}  // namespace faultline::server
