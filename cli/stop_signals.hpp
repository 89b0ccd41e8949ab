// SIGINT and SIGTERM for the commands that run scenarios (`run`, `score`): while a `stop_signals`
// lives, the first of them requests the run_interrupt (the clients are stopped, what ran is judged
// and reported, the command exits 128 + the signal) and prints one line saying so; it also restores
// the default dispositions, so a second Ctrl-C ends faultline at once, by that signal.
#pragma once

#include "faultline/drivers/interrupt.hpp"

namespace faultline::cli {

// One at a time per process. Not copyable; the interrupt outlives it.
class stop_signals {
public:
    explicit stop_signals(drivers::run_interrupt& interrupt);
    ~stop_signals();  // the handlers are removed (the defaults restored)
    stop_signals(const stop_signals&) = delete;
    stop_signals& operator=(const stop_signals&) = delete;
};

}  // namespace faultline::cli
