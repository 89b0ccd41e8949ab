#include "progress_line.hpp"

#include <cstdio>

namespace faultline::cli {

std::string progress_text(const progress_snapshot& progress, duration elapsed) {
    const auto tenths = std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count() / 100;
    char time[32];
    if (tenths < 600) {
        std::snprintf(time, sizeof time, "%lld.%lld s", static_cast<long long>(tenths / 10),
                      static_cast<long long>(tenths % 10));
    } else {
        // Past a minute tenths are noise; minutes and seconds read better.
        const long long seconds = tenths / 10;
        std::snprintf(time, sizeof time, "%lldm%02llds", seconds / 60, seconds % 60);
    }
    return std::to_string(progress.scenarios_done) + "/" + std::to_string(progress.scenarios_total) +
           " scenarios done, " + std::to_string(progress.attempts) + " attempts, " + time;
}

bool progress_wanted(bool forced, bool quiet, bool stderr_is_terminal, bool no_color) {
    if (forced) return true;
    return !quiet && stderr_is_terminal && !no_color;
}

progress_line::progress_line(time_point start, duration min_interval) : start_(start), min_interval_(min_interval) {}

std::string progress_line::draw(const progress_snapshot& progress, time_point now) {
    if (last_draw_ && now - *last_draw_ < min_interval_) return "";
    std::string text = progress_text(progress, now - start_);
    if (text == shown_) return "";
    last_draw_ = now;
    std::string out = "\r" + text;
    if (shown_.size() > text.size()) out.append(shown_.size() - text.size(), ' ');
    shown_ = std::move(text);
    return out;
}

std::string progress_line::clear() {
    last_draw_.reset();
    if (shown_.empty()) return "";
    std::string out = "\r" + std::string(shown_.size(), ' ') + "\r";
    shown_.clear();
    return out;
}

void progress_tally::attempts_opened(const server::journal& live) {
    const std::lock_guard lock(mutex_);
    open_.push_back(&live);
}

void progress_tally::attempts_closed(const server::journal& live) {
    const std::lock_guard lock(mutex_);
    closed_attempts_ += live.appended();
    std::erase(open_, &live);
}

void progress_tally::scenario_finished(const record::run_record&) {
    const std::lock_guard lock(mutex_);
    ++done_;
}

progress_snapshot progress_tally::snapshot() const {
    const std::lock_guard lock(mutex_);
    progress_snapshot out{done_, total_, closed_attempts_};
    // Under the lock, so no journal can close (and go away) while it is read.
    for (const server::journal* live : open_) out.attempts += live->appended();
    return out;
}

progress_display::progress_display(std::ostream& out, const progress_tally& tally, const clock& clk,
                                   duration interval)
    : out_(out), tally_(tally), clock_(clk), interval_(interval), line_(clk.now(), interval) {
    {
        const std::lock_guard lock(mutex_);
        redraw();
    }
    ticker_ = std::thread([this] {
        std::unique_lock lock(mutex_);
        while (!stop_cv_.wait_for(lock, interval_, [this] { return stopping_; })) redraw();
    });
}

progress_display::~progress_display() {
    {
        const std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    stop_cv_.notify_one();
    ticker_.join();
    out_ << line_.clear() << std::flush;
}

void progress_display::without_line(const std::function<void()>& print) {
    const std::lock_guard lock(mutex_);
    out_ << line_.clear() << std::flush;
    print();
}

void progress_display::redraw() {
    if (const std::string bytes = line_.draw(tally_.snapshot(), clock_.now()); !bytes.empty()) out_ << bytes << std::flush;
}

}  // namespace faultline::cli
