#include "faultline/harness/journal.hpp"

#include "faultline/harness/journal_json.hpp"

#include <cerrno>
#include <cstring>
#include <system_error>

namespace faultline::harness {

journal::journal(journal_options options) : options_{std::move(options)} {
    if (options_.path.empty()) return;
    file_ = std::fopen(options_.path.c_str(), "wb");
    if (file_ == nullptr) {
        throw std::system_error{errno, std::generic_category(), "journal: cannot open " + options_.path};
    }
    writer_ = std::thread{[this] { writer_loop(); }};
}

journal::~journal() {
    if (file_ == nullptr) return;
    {
        std::lock_guard lock{mutex_};
        stopping_ = true;
    }
    wake_writer_.notify_one();
    writer_.join();
    std::fclose(file_);
}

std::uint64_t journal::next_seq() { return next_seq_.fetch_add(1, std::memory_order_relaxed) + 1; }

std::uint64_t journal::append(journal_record record) {
    if (record.seq == 0) record.seq = next_seq();
    const auto seq = record.seq;
    appended_.fetch_add(1, std::memory_order_relaxed);
    const bool to_file = file_ != nullptr;
    bool wake = false;
    {
        std::lock_guard lock{mutex_};
        if (memory_.size() < options_.max_records) {
            if (to_file) {
                memory_.push_back(record);
            } else {
                memory_.push_back(std::move(record));
            }
        } else {
            memory_complete_ = false;
            if (!to_file) {
                ++lost_;
                overflowed_ = true;
            }
        }
        if (to_file) {
            pending_.push_back(std::move(record));
            ++enqueued_;
            // The writer also wakes on its own every writer_interval; waking it per record would cost
            // a futex call on the hot path, so only a full batch does.
            wake = pending_.size() == writer_batch;
        }
    }
    if (wake) wake_writer_.notify_one();
    return seq;
}

void journal::writer_loop() {
    std::vector<journal_record> batch;
    std::string buffer;
    // Runs until the destructor sets stopping_, after draining every pending record.
    for (;;) {
        {
            std::unique_lock lock{mutex_};
            wake_writer_.wait_for(lock, writer_interval,
                                  [&] { return pending_.size() >= writer_batch || flush_requested_ || stopping_; });
            flush_requested_ = false;
            if (pending_.empty()) {
                if (stopping_) return;
                continue;
            }
            batch.swap(pending_);
        }
        buffer.clear();
        for (const auto& r : batch) append_jsonl_line(buffer, r);
        const bool ok = std::fwrite(buffer.data(), 1, buffer.size(), file_) == buffer.size() && std::fflush(file_) == 0;
        const int err = errno;
        {
            std::lock_guard lock{mutex_};
            if (!ok && write_error_.empty()) {
                write_error_ = "journal: writing " + options_.path + ": " + std::strerror(err);
            }
            written_count_ += batch.size();
        }
        batch.clear();
        written_.notify_all();
    }
}

std::vector<journal_record> journal::snapshot() const {
    std::lock_guard lock{mutex_};
    return {memory_.begin(), memory_.end()};
}

std::string journal::to_jsonl() const {
    std::string out;
    for (const auto& r : snapshot()) append_jsonl_line(out, r);
    return out;
}

void journal::reset() {
    std::lock_guard lock{mutex_};
    memory_.clear();
    memory_complete_ = true;
    overflowed_ = false;
    lost_ = 0;
}

void journal::flush() {
    if (file_ == nullptr) return;
    std::unique_lock lock{mutex_};
    const auto target = enqueued_;
    if (written_count_ >= target) return;
    flush_requested_ = true;
    wake_writer_.notify_one();
    written_.wait(lock, [&] { return written_count_ >= target; });
}

std::uint64_t journal::appended() const { return appended_.load(std::memory_order_relaxed); }

std::size_t journal::size() const {
    std::lock_guard lock{mutex_};
    return memory_.size();
}

bool journal::memory_complete() const {
    std::lock_guard lock{mutex_};
    return memory_complete_;
}

std::uint64_t journal::lost() const {
    std::lock_guard lock{mutex_};
    return lost_;
}

bool journal::failed() const {
    std::lock_guard lock{mutex_};
    return overflowed_ || !write_error_.empty();
}

std::string journal::error() const {
    std::lock_guard lock{mutex_};
    std::string message;
    if (overflowed_) {
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

}  // namespace faultline::harness
