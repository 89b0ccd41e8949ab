#include "faultline/drivers/builtin_driver.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/verb.hpp>

#include <algorithm>
#include <deque>
#include <exception>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "faultline/core/random.hpp"
#include "faultline/retry/async_execute.hpp"
#include "faultline/retry/classify.hpp"
#include "faultline/retry/deadline.hpp"
#include "faultline/retry/http_client.hpp"
#include "faultline/retry/idempotency.hpp"

namespace faultline::harness {

namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using namespace std::chrono_literals;

// How long cancelled operations get to wind down after the time limit before the io_context is
// stopped outright.
constexpr auto cancel_grace = 1s;

// Distinct streams derived from the run's seed.
constexpr std::uint64_t key_stream = 0x6b657973ULL;       // "keys"
constexpr std::uint64_t client_stream = 0x636c6e74ULL;    // "clnt"
constexpr std::uint64_t template_stream = 0x74706c73ULL;  // "tpls"

std::int64_t since(time_point start, time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t - start).count();
}

std::string outcome_text(const retry::attempt_outcome& o) {
    if (o.kind == retry::outcome_kind::response) return std::to_string(o.status);
    return std::string(retry::to_string(o.kind));
}

// The Idempotency-Key identity the server derives from a header value: quotes of an sf-string removed.
std::string unquote_key(std::string_view raw) {
    while (!raw.empty() && (raw.front() == ' ' || raw.front() == '\t')) raw.remove_prefix(1);
    while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\t')) raw.remove_suffix(1);
    if (raw.size() >= 2 && raw.front() == '"' && raw.back() == '"') raw = raw.substr(1, raw.size() - 2);
    return std::string(raw);
}

bool iequals(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
               return lower(x) == lower(y);
           });
}

// A counting gate for "at most `concurrency` operations in flight". Used only on the run's strand.
class slot_gate {
public:
    slot_gate(asio::any_io_executor ex, std::uint32_t slots) : ex_{std::move(ex)}, free_{slots} {}

    // True with a slot; false when the wait was cancelled (time limit).
    asio::awaitable<bool> acquire() {
        if (closed_) co_return false;
        if (free_ > 0) {
            --free_;
            co_return true;
        }
        auto w = std::make_shared<waiter>(ex_);
        waiters_.push_back(w);
        co_await w->timer.async_wait(asio::as_tuple(asio::use_awaitable));
        if (!w->granted) std::erase(waiters_, w);
        co_return w->granted;
    }

    void release() {
        if (!waiters_.empty()) {
            // Hand the slot straight to the oldest waiter.
            auto w = waiters_.front();
            waiters_.pop_front();
            w->granted = true;
            w->timer.cancel();
            return;
        }
        ++free_;
    }

    void close() {
        closed_ = true;
        for (auto& w : waiters_) w->timer.cancel();
    }

private:
    struct waiter {
        explicit waiter(const asio::any_io_executor& ex) : timer{ex, asio::steady_timer::time_point::max()} {}
        asio::steady_timer timer;
        bool granted = false;
    };

    asio::any_io_executor ex_;
    std::uint32_t free_;
    bool closed_ = false;
    std::deque<std::shared_ptr<waiter>> waiters_;
};

// One run: owns the io_context and everything the coroutines touch. Everything below `strand` is
// touched only on that strand; the http clients run on their own strands.
class run_state {
public:
    run_state(const builtin_config& config, const driver_context& ctx)
        : config_{config},
          ctx_{ctx},
          strand_{asio::make_strand(io_)},
          gate_{strand_, std::max<std::uint32_t>(config.load.concurrency, 1)},
          limit_timer_{strand_},
          grace_timer_{strand_},
          rate_timer_{strand_},
          total_{total_operations(config.load)},
          budget_{make_budget(config.policy.budget)} {
        if (config.policy.breaker) breaker_ = std::make_shared<retry::circuit_breaker>(*config.policy.breaker);
        for (const auto& t : config.requests) total_weight_ += t.weight;
        make_clients();
    }

    driver_result run(builtin_stats& stats) {
        asio::post(strand_, [this] { start(); });
        const std::uint32_t extra = std::clamp<std::uint32_t>(config_.threads, 1, 2) - 1;
        std::vector<std::thread> threads;
        for (std::uint32_t i = 0; i < extra; ++i) threads.emplace_back([this] { run_io(); });
        run_io();
        for (auto& t : threads) t.join();

        driver_result result;
        result.timed_out = stopped_;
        result.error = error_.empty() ? io_error_ : error_;
        const std::int64_t end_ns = since(ctx_.run_start, ctx_.clk.now());
        for (auto& r : records_) {
            if (r.decision.empty()) {
                // Stopped outright after the grace period: it never got its final decision.
                r.decision = std::string(retry::to_string(retry::decision::cancelled));
                r.finished_ns = end_ns;
            }
            result.clients.push_back(std::move(r));
        }
        stats.operations_started = records_.size();
        stats.operations_finished = finished_;
        if (budget_) {
            stats.retries_allowed = budget_->allowed();
            stats.retries_refused = budget_->refused();
        }
        if (breaker_) stats.breaker_opened = breaker_->times_opened();
        return result;
    }

private:
    void run_io() {
        try {
            io_.run();
        } catch (const std::exception& e) {
            // Nothing is meant to throw here; a throw ends the run as a harness error.
            const std::lock_guard lock{io_error_mutex_};
            if (io_error_.empty()) io_error_ = std::string("builtin driver: ") + e.what();
            io_.stop();
        }
    }

    void make_clients() {
        const retry::retry_policy& declared = config_.policy.policy;
        retry::retry_policy client_policy = declared;
        client_policy.budget = budget_;
        client_policy.breaker = breaker_;
        // The deadline is computed per operation (so it can be recorded) and passed explicitly.
        client_policy.overall_timeout.reset();
        const std::uint32_t n = config_.load.clients;
        randoms_.reserve(n);
        clients_.reserve(n);
        for (std::uint32_t c = 0; c < n; ++c) {
            randoms_.push_back(std::make_unique<seeded_random>(mix64(ctx_.seed ^ client_stream, c)));
            retry::http_client_options options;
            options.clk = &ctx_.clk;
            options.random = randoms_.back().get();
            clients_.push_back(std::make_unique<retry::http_client>(io_.get_executor(), ctx_.host, ctx_.port,
                                                                    client_policy, options));
        }
    }

    void start() {
        if (total_ == 0) return;
        limit_timer_.expires_at(ctx_.run_start + ctx_.time_limit);
        limit_timer_.async_wait([this](boost::system::error_code ec) {
            if (!ec) stop();
        });
        if (config_.load.kind == workload_kind::operations) {
            lanes_left_ = config_.load.clients;
            for (std::uint32_t c = 0; c < config_.load.clients; ++c) spawn(lane(c));
        } else {
            lanes_left_ = 1;
            spawn(scheduler());
        }
    }

    // Runs `work` on the strand, cancellable at the time limit.
    void spawn(asio::awaitable<void> work) {
        signals_.emplace_back();
        auto it = std::prev(signals_.end());
        asio::co_spawn(strand_, std::move(work),
                       asio::bind_cancellation_slot(it->slot(), [this, it](std::exception_ptr e) {
                           if (e && error_.empty()) {
                               try {
                                   std::rethrow_exception(e);
                               } catch (const std::exception& ex) {
                                   error_ = std::string("builtin driver: ") + ex.what();
                               } catch (...) {
                                   error_ = "builtin driver: unknown exception";
                               }
                           }
                           // Runs on the strand (co_spawn completes on it); the slot is done with.
                           asio::post(strand_, [this, it] { signals_.erase(it); });
                       }));
    }

    void stop() {
        if (stopped_) return;
        stopped_ = true;
        gate_.close();
        rate_timer_.cancel();
        for (auto& s : signals_) s.emit(asio::cancellation_type::terminal);
        grace_timer_.expires_after(cancel_grace);
        grace_timer_.async_wait([this](boost::system::error_code ec) {
            if (!ec) io_.stop();
        });
    }

    // One lane finished: when it was the last, nothing keeps the io_context busy any more.
    void lane_done() {
        if (--lanes_left_ > 0) return;
        limit_timer_.cancel();
        grace_timer_.cancel();
    }

    asio::awaitable<void> lane(std::uint32_t client) {
        co_await asio::this_coro::throw_if_cancelled(false);
        const std::uint64_t clients = config_.load.clients;
        for (std::uint64_t n = 0; n < config_.load.operations_per_client && !stopped_; ++n) {
            if (!co_await gate_.acquire()) break;
            co_await operation(n * clients + client);
            gate_.release();
        }
        lane_done();
    }

    asio::awaitable<void> scheduler() {
        co_await asio::this_coro::throw_if_cancelled(false);
        const double rate = config_.load.rate;
        // Bounded by total_, the workload's operation count.
        for (std::uint64_t op = 0; op < total_ && !stopped_; ++op) {
            const auto due = ctx_.run_start + std::chrono::duration_cast<duration>(
                                                  std::chrono::duration<double>(static_cast<double>(op) / rate));
            rate_timer_.expires_at(due);
            co_await rate_timer_.async_wait(asio::as_tuple(asio::use_awaitable));
            if (stopped_ || !co_await gate_.acquire()) break;
            ++lanes_left_;
            spawn([](run_state& self, std::uint64_t o) -> asio::awaitable<void> {
                co_await asio::this_coro::throw_if_cancelled(false);
                co_await self.operation(o);
                self.gate_.release();
                self.lane_done();
            }(*this, op));
        }
        lane_done();
    }

    const request_template& pick(std::uint64_t op) const {
        if (config_.order == template_order::round_robin || config_.requests.size() == 1) {
            return config_.requests[op % config_.requests.size()];
        }
        // A hash, not a draw, so the choice does not depend on the order operations start in. The
        // modulo bias is far below one in a million for any total weight allowed.
        std::uint64_t point = mix64(ctx_.seed ^ template_stream, op) % total_weight_;
        for (const auto& t : config_.requests) {
            if (point < t.weight) return t;
            point -= t.weight;
        }
        return config_.requests.back();
    }

    asio::awaitable<void> operation(std::uint64_t op) {
        const std::uint64_t clients = config_.load.clients;
        const std::uint64_t client = op % clients;
        const std::uint64_t n = op / clients;
        const request_template& t = pick(op);
        const placeholder_values values{op, client, n, std::nullopt};

        retry::http_request request;
        request.method = http::string_to_verb(t.method);
        request.target = substitute(t.path, values);
        request.body = substitute(t.body, values);
        std::optional<std::string> template_key;
        for (const auto& [name, value] : t.headers) {
            std::string v = substitute(value, values);
            if (iequals(name, retry::idempotency_key_header)) template_key = unquote_key(v);
            request.headers.insert(name, v);
        }
        const std::string op_name = operation_name(client, n);
        request.headers.set(std::string(operation_header), op_name);

        const retry::retry_policy& policy = config_.policy.policy;
        std::string identity = op_name;
        if (template_key && !template_key->empty()) {
            identity = *template_key;
        } else if (!template_key && !retry::is_idempotent_method(t.method) && policy.keys.auto_add) {
            // Our own key, so the record knows it; the client adopts a UUID it finds in the headers.
            seeded_random key_random{mix64(ctx_.seed ^ key_stream, op)};
            const auto key = retry::idempotency_key::generate(key_random);
            identity = std::string(key.view());
            request.headers.set(std::string(retry::idempotency_key_header),
                                std::string(retry::key_header_value{key, policy.keys.format}.view()));
        }

        records_.emplace_back();
        const std::size_t index = records_.size() - 1;
        {
            client_record& r = records_[index];
            r.operation = identity;
            r.client = std::to_string(client);
            r.method = t.method;
            r.target = request.target;
        }
        const time_point started = ctx_.clk.now();
        records_[index].started_ns = since(ctx_.run_start, started);
        std::optional<time_point> deadline;
        if (policy.overall_timeout) {
            deadline = started + *policy.overall_timeout;
            records_[index].deadline_ns = since(ctx_.run_start, *deadline);
        }
        retry::request_options options;
        if (config_.policy.enforce_deadline) options.deadline = deadline;

        // The deliberately unsafe presets re-send a POST without a key after a reset or a timeout.
        if (config_.policy.assume_idempotent) options.safety = retry::request_safety::idempotent;
        const retry::http_result result =
            co_await clients_[client]->async_request(std::move(request), std::move(options), asio::use_awaitable);

        client_record& r = records_[index];
        r.finished_ns = since(ctx_.run_start, ctx_.clk.now());
        r.attempts = result.attempts;
        r.decision = std::string(retry::to_string(result.final_decision));
        r.success = result.succeeded();
        for (const auto& a : result.history) r.attempt_outcomes.push_back(outcome_text(a.outcome));
        ++finished_;
    }

    const builtin_config& config_;
    const driver_context& ctx_;
    asio::io_context io_;
    asio::any_io_executor strand_;
    slot_gate gate_;
    asio::steady_timer limit_timer_;
    asio::steady_timer grace_timer_;
    asio::steady_timer rate_timer_;
    std::uint64_t total_;
    std::uint64_t total_weight_ = 0;
    std::shared_ptr<retry::retry_budget> budget_;
    std::shared_ptr<retry::circuit_breaker> breaker_;
    std::vector<std::unique_ptr<seeded_random>> randoms_;
    std::vector<std::unique_ptr<retry::http_client>> clients_;
    std::list<asio::cancellation_signal> signals_;
    std::deque<client_record> records_;
    std::uint64_t lanes_left_ = 0;
    std::uint64_t finished_ = 0;
    bool stopped_ = false;
    std::string error_;
    std::mutex io_error_mutex_;
    std::string io_error_;
};

}  // namespace

std::string operation_name(std::uint64_t client, std::uint64_t n) {
    return "c" + std::to_string(client) + "-n" + std::to_string(n);
}

builtin_driver::builtin_driver(builtin_config config) : config_{std::move(config)} {}

driver_result builtin_driver::run(const driver_context& ctx) {
    stats_ = {};
    try {
        run_state state{config_, ctx};
        return state.run(stats_);
    } catch (const std::exception& e) {
        driver_result failed;
        failed.error = std::string("builtin driver: ") + e.what();
        return failed;
    }
}

}  // namespace faultline::harness
