// Private to the server: how late its own workers run. Each worker's timer is armed every `period`;
// a firing `threshold` or more after it was due opens a spell (or extends the open one), and the
// spell is reported when a firing comes on time again, or at stop: from the first late firing's due
// time to the last late firing. A worker that could not run stamps its journal late by as much, and
// the timing checks must not read that as the client's doing (server_event_kind::server_late).
#pragma once
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "faultline/record/server_event.hpp"
#include "faultline/server/listener.hpp"

namespace faultline::server::detail {

class lateness_watch {
public:
    using steady = std::chrono::steady_clock;
    // A spell: `from` (steady time the first late firing was due) and how long it lasted. Called on
    // the worker's thread.
    using on_spell = std::function<void(steady::time_point from, std::chrono::nanoseconds length)>;

    static constexpr std::chrono::milliseconds period = record::lateness_watch_period;
    static constexpr std::chrono::milliseconds threshold{10};

    explicit lateness_watch(on_spell report) : report_{std::move(report)} {}

    // Arms one timer per worker; before listener::start.
    void start(listener& workers) {
        for (std::size_t i = 0; i < workers.workers(); ++i) {
            auto w = std::make_shared<worker>(workers.context(i), report_);
            watched_.push_back(w);
            worker::arm(w);
        }
    }
    // Reports an open spell and cancels the timers (each on its own worker), so none keeps its
    // worker from returning when the listener stops.
    void stop() {
        for (const auto& w : watched_) {
            boost::asio::post(w->timer.get_executor(), [w] {
                w->stopped = true;
                w->timer.cancel();
                w->close_spell();
            });
        }
    }

private:
    struct worker {
        worker(boost::asio::io_context& io, on_spell on_late) : timer{io.get_executor()}, report{std::move(on_late)} {}

        static void arm(const std::shared_ptr<worker>& w) {
            w->due = steady::now() + period;
            w->timer.expires_at(w->due);
            w->timer.async_wait([w](boost::system::error_code ec) {
                if (ec || w->stopped) return;
                const steady::time_point now = steady::now();
                if (now - w->due >= threshold) {
                    if (!w->in_spell) w->spell_from = w->due;
                    w->in_spell = true;
                    w->spell_to = now;
                } else {
                    w->close_spell();
                }
                arm(w);
            });
        }
        void close_spell() {
            if (!in_spell) return;
            in_spell = false;
            report(spell_from, spell_to - spell_from);
        }

        listener_timer timer;
        const on_spell report;
        steady::time_point due{};
        steady::time_point spell_from{};
        steady::time_point spell_to{};
        bool in_spell = false;
        bool stopped = false;
    };

    on_spell report_;
    std::vector<std::shared_ptr<worker>> watched_;
};

}  // namespace faultline::server::detail
