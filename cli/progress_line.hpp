// The live progress line of `faultline run` on a terminal: scenarios done of all, attempts so far,
// elapsed time, redrawn in place on stderr (carriage return, at most ten times a second) and erased
// before anything else is printed. Three parts, so each is tested on its own: `progress_tally`
// hears the runner's progress events (runner/progress.hpp) and counts; `progress_line` turns a
// count and a time into the exact bytes to write (pure: times come in); `progress_display` owns the
// thread that redraws the line and the lock that keeps it apart from the console report.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "faultline/core/clock.hpp"
#include "faultline/runner/progress.hpp"

namespace faultline::cli {

struct progress_snapshot {
    std::size_t scenarios_done = 0;
    std::size_t scenarios_total = 0;
    std::uint64_t attempts = 0;  // journal records of finished scenarios and of running ones so far
};

// "3/8 scenarios done, 1204 attempts, 12.4 s" (ASCII, so its length is its width on a terminal).
std::string progress_text(const progress_snapshot& progress, duration elapsed);

// Whether `run` shows the line: `--progress` forces it on; otherwise only on a terminal, without
// NO_COLOR in the environment, and without `--quiet`.
bool progress_wanted(bool forced, bool quiet, bool stderr_is_terminal, bool no_color);

// The bytes that draw and erase one line in place. Not thread-safe (progress_display locks it).
class progress_line {
public:
    static constexpr duration default_interval = std::chrono::milliseconds{100};

    explicit progress_line(time_point start, duration min_interval = default_interval);

    // What redraws the line at `now`: "\r", the text, and spaces over what is left of a longer
    // line before. "" when the line was drawn less than `min_interval` ago or would not change.
    std::string draw(const progress_snapshot& progress, time_point now);
    // What erases the line ("\r", spaces, "\r"), or "" when none is shown; the next draw is not
    // throttled, so the line comes back at once after the erase.
    std::string clear();

private:
    time_point start_;
    duration min_interval_;
    std::optional<time_point> last_draw_;
    std::string shown_;  // the text on the terminal now, "" when erased
};

// Counts what the runner reports. Thread-safe. The journals it holds are the runner's, read only
// between their attempts_opened and attempts_closed, as the interface allows.
class progress_tally final : public runner::progress_listener {
public:
    explicit progress_tally(std::size_t scenarios_total) : total_(scenarios_total) {}

    void attempts_opened(const server::journal& live) override;
    void attempts_closed(const server::journal& live) override;
    void scenario_finished(const record::run_record& run) override;

    progress_snapshot snapshot() const;

private:
    mutable std::mutex mutex_;
    const std::size_t total_;
    std::size_t done_ = 0;
    std::uint64_t closed_attempts_ = 0;
    std::vector<const server::journal*> open_;
};

// Redraws the line on `out` from its own thread about every `interval` until destroyed, which
// erases it. The tally, the clock and the stream outlive it.
class progress_display {
public:
    progress_display(std::ostream& out, const progress_tally& tally, const clock& clk,
                     duration interval = progress_line::default_interval);
    ~progress_display();
    progress_display(const progress_display&) = delete;
    progress_display& operator=(const progress_display&) = delete;

    // Runs `print` with the line erased (it comes back at the next tick), so what `print` writes to
    // the same terminal does not land on top of it.
    void without_line(const std::function<void()>& print);

private:
    void redraw();  // the caller holds mutex_

    std::ostream& out_;
    const progress_tally& tally_;
    const clock& clock_;
    const duration interval_;
    progress_line line_;
    std::mutex mutex_;
    std::condition_variable stop_cv_;
    bool stopping_ = false;
    std::thread ticker_;
};

}  // namespace faultline::cli
