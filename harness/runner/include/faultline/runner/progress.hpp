// The runner's progress seam: what a run of scenarios tells an observer while it happens, so a
// terminal line (cli/progress_line.hpp) can show scenarios done and attempts so far without the
// runner knowing about terminals. The runner calls a `progress_listener` from its worker threads;
// attempts are not pushed one by one but read on demand from the scenario's live journal, whose
// count is thread-safe, so observing costs the server nothing.
#pragma once

#include "faultline/record/run_record.hpp"
#include "faultline/server/journal.hpp"

namespace faultline::runner {

// Implementations must be thread-safe: scenarios running in parallel call it from their own
// threads, and each scenario's events come in the order below.
class progress_listener {
public:
    virtual ~progress_listener() = default;

    // The scenario's fault server is about to take traffic. Until `attempts_closed(live)` returns,
    // `live.appended()` (the attempts so far) may be read from any thread.
    virtual void attempts_opened(const server::journal& live) = 0;
    // Its traffic is over (`live.appended()` is final) and `live` is about to go away.
    virtual void attempts_closed(const server::journal& live) = 0;
    // The scenario is over and judged (or failed in the harness: then attempts_opened may not
    // have come). Not called for a scenario an interrupt kept from starting.
    virtual void scenario_finished(const record::run_record& run) = 0;
};

}  // namespace faultline::runner
